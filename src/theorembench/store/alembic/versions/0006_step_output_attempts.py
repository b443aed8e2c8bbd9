"""Steps count the runs whose model output was unusable, and mark outcomes caused by that output.

``output_attempts`` is how many runs of the step ended with a malformed model reply (after the
bounded repair turns); ``cause`` is ``'output'`` when the stored outcome is due to such a reply
(NULL otherwise), so ``theorembench store retry`` finds those steps without reading reasons.
The columns are written out here, not taken from :mod:`theorembench.store.schema`.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("steps", sa.Column("output_attempts", sa.Integer, nullable=False, server_default=sa.text("0")))
    op.add_column("steps", sa.Column("cause", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("steps") as batch:
        batch.drop_column("cause")
        batch.drop_column("output_attempts")
