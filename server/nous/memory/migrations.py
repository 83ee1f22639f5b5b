"""Numbered, append-only schema migrations. Never edit a released step: add the next one.

Each step runs inside the caller's `BEGIN IMMEDIATE` transaction, so two processes opening a new
file at once apply it exactly once.
"""

from __future__ import annotations

import sqlite3

from nous.memory import renderings, turns

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "memories, full-text index, transitions, usage, sessions, fingerprints",
        """
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            scope TEXT NOT NULL,
            content TEXT NOT NULL,
            summary TEXT NOT NULL,
            micro TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            status TEXT NOT NULL,
            status_changed_at TEXT NOT NULL,
            confidence REAL NOT NULL DEFAULT 1.0,
            importance REAL NOT NULL DEFAULT 0.5,
            outcome TEXT,
            confirmations INTEGER NOT NULL DEFAULT 0,
            activations INTEGER NOT NULL DEFAULT 0,
            frequency INTEGER NOT NULL DEFAULT 0,
            source TEXT NOT NULL DEFAULT 'manual',
            content_hash TEXT NOT NULL,
            superseded_by TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            pinned INTEGER NOT NULL DEFAULT 0,
            embedding BLOB NOT NULL,
            embedding_model TEXT NOT NULL,
            change_seq INTEGER NOT NULL,
            UNIQUE (scope, content_hash)
        );
        CREATE INDEX memories_kind_status ON memories (kind, status);
        CREATE INDEX memories_scope ON memories (scope);
        CREATE INDEX memories_change_seq ON memories (change_seq);
        CREATE INDEX memories_source ON memories (source);

        CREATE VIRTUAL TABLE memories_fts USING fts5 (
            content, tags, content='memories', content_rowid='seq',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, content, tags)
            VALUES ('delete', old.seq, old.content, old.tags);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, tags ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, content, tags)
            VALUES ('delete', old.seq, old.content, old.tags);
            INSERT INTO memories_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
        END;

        CREATE TABLE tombstones (
            memory_id TEXT NOT NULL,
            change_seq INTEGER NOT NULL
        );
        CREATE INDEX tombstones_change_seq ON tombstones (change_seq);
        CREATE TRIGGER memories_tombstone AFTER DELETE ON memories BEGIN
            INSERT INTO tombstones (memory_id, change_seq)
            VALUES (old.id, (SELECT value FROM counters WHERE name = 'change_seq'));
        END;

        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        INSERT INTO counters (name, value) VALUES ('change_seq', 0);

        CREATE TABLE transitions (
            id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            from_status TEXT,
            to_status TEXT NOT NULL,
            at TEXT NOT NULL,
            reason TEXT NOT NULL
        );
        CREATE INDEX transitions_memory ON transitions (memory_id);

        CREATE TABLE usage (
            id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            at TEXT NOT NULL,
            referenced INTEGER NOT NULL,
            overlap REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX usage_memory ON usage (memory_id, at);

        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            used INTEGER NOT NULL DEFAULT 0,
            cap INTEGER NOT NULL,
            recalls INTEGER NOT NULL DEFAULT 0,
            injected TEXT NOT NULL DEFAULT '[]'
        );

        CREATE TABLE fingerprints (
            id INTEGER PRIMARY KEY,
            session_id TEXT,
            at TEXT NOT NULL,
            frame TEXT NOT NULL,
            mode TEXT NOT NULL,
            complexity TEXT NOT NULL,
            file_count INTEGER NOT NULL,
            file_hash TEXT NOT NULL,
            profile TEXT,
            total_tokens INTEGER NOT NULL,
            budget INTEGER NOT NULL,
            kinds TEXT NOT NULL,
            compression_ratio REAL NOT NULL,
            tier_counts TEXT NOT NULL,
            selected INTEGER NOT NULL,
            available INTEGER NOT NULL
        );
        """,
    ),
]

MIGRATIONS.append(
    (
        2,
        "harvested sources: what each file or commit last produced",
        """
        CREATE TABLE harvest_sources (
            project TEXT NOT NULL,
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            harvested_at TEXT NOT NULL,
            PRIMARY KEY (project, path)
        );
        """,
    )
)

MIGRATIONS.append(
    (
        3,
        "covering indexes for the always-on layers and the full-text join",
        """
        CREATE INDEX memories_always_on
            ON memories (kind, scope, status, importance, updated_at, id);
        CREATE INDEX memories_seq_filter ON memories (seq, status, scope, id);
        """,
    )
)

MIGRATIONS.append(
    (
        4,
        "project keys: old project names kept for the folder that claims them, sessions per "
        "project, harvested rules out of the shared language scopes",
        # Scopes were `project:<name>`, so two repositories called `api` shared one scope. They
        # are now `project:<key>` (workspace/identity.py), and SQL alone cannot tell which folder
        # an old name meant: every old name is listed in `legacy_projects`, and the first folder
        # that resolves to that name afterwards claims its memories, harvest records and
        # sessions (memory/projects.py). Sessions become keyed by (project, id): one project's
        # session id never opens another's. Harvested rules a file had scoped to a language were
        # shared by every project with that language: they are made inactive and their files
        # forgotten, so each project re-harvests them into its own scope.
        """
        CREATE TABLE legacy_projects (
            name TEXT PRIMARY KEY,
            recorded_at TEXT NOT NULL
        );
        INSERT OR IGNORE INTO legacy_projects (name, recorded_at)
            SELECT name, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM (
                SELECT substr(scope, 9) AS name FROM memories WHERE scope LIKE 'project:%'
                UNION SELECT project FROM harvest_sources
                UNION SELECT project FROM sessions
            ) WHERE name != '';

        CREATE TABLE sessions_by_project (
            id TEXT NOT NULL,
            project TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            used INTEGER NOT NULL DEFAULT 0,
            cap INTEGER NOT NULL,
            recalls INTEGER NOT NULL DEFAULT 0,
            injected TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (project, id)
        );
        INSERT INTO sessions_by_project
            SELECT id, project, created_at, updated_at, used, cap, recalls, injected FROM sessions;
        DROP TABLE sessions;
        ALTER TABLE sessions_by_project RENAME TO sessions;

        DELETE FROM harvest_sources WHERE path IN (
            SELECT substr(source, 6, instr(source, '#') - 6) FROM memories
            WHERE source LIKE 'file:%#%' AND scope LIKE 'language:%'
        );
        UPDATE counters SET value = value + 1 WHERE name = 'change_seq';
        INSERT INTO transitions (memory_id, from_status, to_status, at, reason)
            SELECT id, status, 'inactive', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
                   'migration 4: a harvested rule belongs to its project, not a language'
            FROM memories
            WHERE source LIKE 'file:%' AND scope LIKE 'language:%' AND status != 'inactive';
        UPDATE memories SET
            status = 'inactive',
            status_changed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
            updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
            change_seq = (SELECT value FROM counters WHERE name = 'change_seq')
        WHERE source LIKE 'file:%' AND scope LIKE 'language:%' AND status != 'inactive';
        """,
    )
)
MIGRATIONS.append(
    (
        5,
        "shared memories and the team outbox (design §13)",
        """
        ALTER TABLE memories ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;

        CREATE TABLE team_outbox (
            seq INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            op TEXT NOT NULL,
            payload TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX team_outbox_scope ON team_outbox (scope, seq);
        CREATE TRIGGER team_outbox_insert AFTER INSERT ON memories WHEN new.shared = 1 BEGIN
            INSERT INTO team_outbox (memory_id, scope, op) VALUES (new.id, new.scope, 'put');
        END;
        CREATE TRIGGER team_outbox_update AFTER UPDATE OF
            kind, scope, content, summary, micro, status, confidence, importance, outcome,
            confirmations, source, superseded_by, tags, pinned, embedding, shared
        ON memories WHEN new.shared = 1 OR old.shared = 1 BEGIN
            INSERT INTO team_outbox (memory_id, scope, op) VALUES (
                new.id, old.scope,
                CASE WHEN new.shared = 1 AND new.scope = old.scope THEN 'put' ELSE 'delete' END
            );
        END;
        CREATE TRIGGER team_outbox_delete AFTER DELETE ON memories WHEN old.shared = 1 BEGIN
            INSERT INTO team_outbox (memory_id, scope, op) VALUES (old.id, old.scope, 'delete');
        END;
        """,
    )
)

MIGRATIONS.append(
    (
        6,
        "what a chat session said is its own: chat rows hashed within their session",
        # The same words said in two sessions were one row under the first session's source:
        # forgetting the second left them behind, forgetting the first took them from the
        # second, and the second's turn window had a hole. A chat row's content hash now
        # includes its session (`renderings.content_hash`, `turns.session_of`); the rows kept
        # before are hashed that way too, so a session repeating itself still confirms its own
        # row. (Which other sessions had said a row's words was never recorded: those stay
        # with the first.) A range on the source index: no other row is read.
        """
        UPDATE memories SET content_hash = nous_content_hash(content, source)
        WHERE source >= 'chat:' AND source < 'chat;';
        """,
    )
)

MIGRATIONS.append(
    (
        7,
        "fingerprints and usage name their project; the turn's refresh verdict, the "
        "conversation's tokens and how long an answer took (and whether it was a cold one) kept",
        # The seeds' metrics (design §14, `nous stats`): a fingerprint's or usage row's project was
        # only found through its session's id, which two projects may share; a turn's refresh
        # verdict was answered and forgotten, and neither the conversation's size the client
        # reports nor how long building the context took (the first answer of a process: the
        # cold start) was kept. Rows from before get their project from their session (the
        # first such row when two projects used one id).
        """
        ALTER TABLE usage ADD COLUMN project TEXT;
        UPDATE usage SET project = (
            SELECT project FROM sessions WHERE sessions.id = usage.session_id LIMIT 1
        );
        CREATE INDEX usage_project ON usage (project, session_id);
        ALTER TABLE fingerprints ADD COLUMN project TEXT;
        ALTER TABLE fingerprints ADD COLUMN refresh TEXT;
        ALTER TABLE fingerprints ADD COLUMN conversation_tokens INTEGER;
        ALTER TABLE fingerprints ADD COLUMN elapsed_ms REAL;
        ALTER TABLE fingerprints ADD COLUMN cold INTEGER NOT NULL DEFAULT 0;
        UPDATE fingerprints SET project = (
            SELECT project FROM sessions WHERE sessions.id = fingerprints.session_id LIMIT 1
        );
        CREATE INDEX fingerprints_project ON fingerprints (project, session_id);
        """,
    )
)

MIGRATIONS.append(
    (
        8,
        "a fingerprint names the memories its answer injected",
        # Fingerprints that learn (seed 002, `nous stats --by profile|frame`): a judged usage row
        # is credited to the answer that injected its memory, so a profile or frame whose
        # answers load what is never referenced shows up. Rows from before name none (NULL):
        # their judged items are in no group.
        """
        ALTER TABLE fingerprints ADD COLUMN items TEXT;
        """,
    )
)

MIGRATIONS.append(
    (
        9,
        "a memory row names the rule set that found its text clean (its redaction seal)",
        # Every row read was redacted again on the way out, so that a row written before a
        # detection rule existed never reaches a prompt with the secret in it; the first read of
        # each row cost a scan (~40 ms for a cold context). A row now carries its seal (the rule
        # set's id and a digest of its text fields, `memory/rows.py`): read back as it is while
        # both match, scrubbed as before otherwise. Rows from before have none (NULL): scrubbed
        # on read until `MemoryStore.reseal` has scanned them (the index finds them without
        # reading every row).
        """
        ALTER TABLE memories ADD COLUMN redaction TEXT;
        CREATE INDEX memories_redaction ON memories (redaction);
        """,
    )
)

LATEST = MIGRATIONS[-1][0]


def current_version(conn: sqlite3.Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def apply(conn: sqlite3.Connection, applied_at: str) -> list[int]:
    """Apply every step newer than the file's version; returns the versions applied.

    The caller holds a write transaction (`BEGIN IMMEDIATE`).
    """
    done = []
    version = current_version(conn)
    conn.create_function("nous_content_hash", 2, _content_hash, deterministic=True)
    for number, name, sql in MIGRATIONS:
        if number <= version:
            continue
        for statement in _statements(sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (number, name, applied_at),
        )
        done.append(number)
    return done


def _content_hash(content: str, source: str) -> str:
    """The hash a row's content is stored under (`MemoryStore` writes it the same way)."""
    return renderings.content_hash(content, turns.session_of(source))


def _statements(sql: str) -> list[str]:
    """Split a script into statements, keeping trigger bodies whole."""
    out, buffer = [], ""
    for line in sql.strip().splitlines():
        buffer += line + "\n"
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out
