"""Seed items for Proof2Hybrid: definitions and statement–proof pairs, cleaned for a model.

Two sources give seeds:

* :func:`stacks_seeds` reads chapters of The Stacks Project
  (:mod:`~theorembench.methods.hybrid.seeds_from_stacks`);
* :func:`paper_seeds` does the same for a stored paper
  (:mod:`~theorembench.methods.hybrid.seeds_from_papers`).

Both clean statement and proof the same way and give :class:`Seed` items
(:mod:`~theorembench.methods.hybrid.seed_cleaning`). A seed's :attr:`Seed.text` is what a
model is shown: the definition, or ``statement + "\\n\\nProof. " + proof``.

This module gathers the seed API in one place.
"""

from __future__ import annotations

from theorembench.methods.hybrid.seed_cleaning import Seed
from theorembench.methods.hybrid.seeds_from_papers import paper_seeds
from theorembench.methods.hybrid.seeds_from_stacks import count_labelled_environments, read_tags, stacks_seeds

__all__ = [
    "Seed",
    "count_labelled_environments",
    "paper_seeds",
    "read_tags",
    "stacks_seeds",
]
