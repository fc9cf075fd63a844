"""Storage: SQLite and PostgreSQL, their connections, schemas and migrations."""
