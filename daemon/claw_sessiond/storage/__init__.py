"""Storage: the interface the daemon uses, and its backends (today SQLite)."""
