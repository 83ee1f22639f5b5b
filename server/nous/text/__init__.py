"""Text utilities any layer may use: the Markdown tree, token counting, secret detection and
the full-text word splitter. They know nothing of the store."""
