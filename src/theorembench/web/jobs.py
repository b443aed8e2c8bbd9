"""Placeholder: background jobs with leases (issue 13)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI


def start_workers(app: FastAPI, n: int) -> None:
    """Start ``n`` worker threads that run the store's queued jobs."""


def stop_workers(app: FastAPI) -> None:
    """Stop the worker threads (each finishes or gives back its lease)."""


def question_tests(ctx: Any, problem: dict[str, Any], subject: Any) -> dict[str, Any]:
    """Template values for the "test with a model" section of a question page (``_model_tests_section.html``)."""
    return {}
