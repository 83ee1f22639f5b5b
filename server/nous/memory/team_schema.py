"""The team store's schema (design §13): numbered, append-only migrations. Never edit a released
step: add the next one. `TeamStore` applies them under an advisory lock (`LOCK_KEY`) and records
each in `nous_team_schema`.
"""

from __future__ import annotations

LOCK_KEY = 0x6E6F7573  # "nous": the advisory lock migrations take
HNSW_INDEX = (
    "CREATE INDEX nous_memories_embedding ON nous_memories USING hnsw (embedding vector_cosine_ops)"
)


def migrations(dimension: int) -> list[tuple[int, str, str]]:
    """The numbered steps; the vector width is the embedding model's, fixed at creation."""
    return [
        (
            1,
            "memories with an HNSW vector index and a GIN full-text index",
            f"""
            CREATE EXTENSION IF NOT EXISTS vector;
            CREATE TABLE nous_team_meta (name text PRIMARY KEY, value text NOT NULL);
            INSERT INTO nous_team_meta VALUES ('dimension', '{int(dimension)}');
            CREATE TABLE nous_memories (
                project_key text NOT NULL,
                id text PRIMARY KEY,
                kind text NOT NULL,
                scope text NOT NULL,
                content text NOT NULL,
                summary text NOT NULL,
                micro text NOT NULL,
                created_at text NOT NULL,
                updated_at text NOT NULL,
                last_seen_at text NOT NULL,
                status text NOT NULL,
                status_changed_at text NOT NULL,
                confidence double precision NOT NULL,
                importance double precision NOT NULL,
                outcome text,
                confirmations integer NOT NULL DEFAULT 0,
                activations integer NOT NULL DEFAULT 0,
                frequency integer NOT NULL DEFAULT 0,
                source text NOT NULL,
                content_hash text NOT NULL,
                superseded_by text,
                tags text NOT NULL DEFAULT '[]',
                pinned boolean NOT NULL DEFAULT false,
                embedding vector({int(dimension)}) NOT NULL,
                embedding_model text NOT NULL,
                pushed_at timestamptz NOT NULL DEFAULT now(),
                tsv tsvector GENERATED ALWAYS AS
                    (to_tsvector('english', content || ' ' || tags)) STORED
            );
            CREATE INDEX nous_memories_project ON nous_memories (project_key, scope, status);
            {HNSW_INDEX};
            CREATE INDEX nous_memories_tsv ON nous_memories USING gin (tsv);
            """,
        ),
    ]
