"""Where things are: the checkout, the tests, their recorded data, and the shared real data beside the checkout."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
GOLDEN = TESTS / "golden"
SHARED = REPO.parent / "shared"
LMB_HARD = SHARED / "data" / "lmb" / "202511" / "qaEval_202511_ge5_hard.json"
