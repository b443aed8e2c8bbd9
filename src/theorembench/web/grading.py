"""Placeholder: filled in by the platform work of issue 13."""

from __future__ import annotations

from fastapi import FastAPI


def register(app: FastAPI) -> None:
    """Add this module's routes to ``app``."""
