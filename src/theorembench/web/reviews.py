"""Placeholder: filled in by the platform work of issue 13."""

from __future__ import annotations

from fastapi import FastAPI


def register(app: FastAPI) -> None:
    """Add this module's routes to ``app``."""


def question_reviews(ctx, problem, subject) -> dict:
    """Template values for the reviews section of a question page (``_reviews_section.html``)."""
    return {}
