"""Memory: the store, its schema and lifecycle, the embedder and token counting."""
