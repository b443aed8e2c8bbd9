"""Alembic environment: run by :mod:`theorembench.store.migrations` on the store's open connection.

There is no ``alembic.ini`` and no offline (SQL script) mode: opening a store upgrades it, in
the transaction (and under the lock) that :func:`theorembench.store.migrations.ensure_schema`
holds, passed in as ``config.attributes["connection"]``.
"""

from __future__ import annotations

from alembic import context

from theorembench.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("theorembench runs its store migrations itself: open the store (theorembench store info --db …)")

context.configure(connection=connection, target_metadata=metadata,
                  render_as_batch=connection.dialect.name == "sqlite")  # fmt: skip
with context.begin_transaction():
    context.run_migrations()
