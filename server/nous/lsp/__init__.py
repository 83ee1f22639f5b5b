"""The daemon: the only package that imports pygls and lsprotocol."""
