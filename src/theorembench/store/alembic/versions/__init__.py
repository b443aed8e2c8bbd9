"""The store's Alembic revisions, oldest first (``0001_initial`` is the schema of the pre-Alembic store)."""
