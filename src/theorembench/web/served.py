"""The platform as several server processes: uvicorn's workers each build their app from the environment.

uvicorn starts ``processes`` children that import :func:`app_from_env` by name, so what ``improof serve`` was told
travels in ``THEOREMBENCH_SERVE_*`` variables (:func:`serve_environment`). The processes share one store (a
PostgreSQL URL for real use; a SQLite file works, its writers taking turns) and one secret key: a CSRF token made
by one process must be accepted by the next, so a key is drawn once in the parent when none is configured.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping, Sequence

from fastapi import FastAPI

DB_ENV = "THEOREMBENCH_SERVE_DB"
SECRET_ENV = "THEOREMBENCH_SERVE_SECRET"
SMTP_ENV = "THEOREMBENCH_SERVE_SMTP_URL"
MODELS_ENV = "THEOREMBENCH_SERVE_MODELS"
JOB_WORKERS_ENV = "THEOREMBENCH_SERVE_JOB_WORKERS"
FACTORY = "theorembench.web.served:app_from_env"


def serve_environment(db: str | None, *, secret_key: str | None, smtp_url: str | None,
                      models: Sequence[str] | None, job_workers: int) -> dict[str, str]:  # fmt: skip
    """The variables that let every server process build the same platform (a fresh shared key when none)."""
    env = {SECRET_ENV: secret_key or secrets.token_hex(32), MODELS_ENV: json.dumps(list(models or [])),
           JOB_WORKERS_ENV: str(job_workers)}  # fmt: skip
    if db:
        env[DB_ENV] = db
    if smtp_url:
        env[SMTP_ENV] = smtp_url
    return env


def app_from_env(environ: Mapping[str, str] | None = None) -> FastAPI:
    """The platform one server process serves, from :func:`serve_environment`'s variables."""
    from theorembench.web.app import create_app

    env = os.environ if environ is None else environ
    if not env.get(SECRET_ENV):
        raise RuntimeError(f"{SECRET_ENV} is not set: start the processes with 'theorembench improof serve'")
    return create_app(env.get(DB_ENV) or None, secret_key=env[SECRET_ENV], smtp_url=env.get(SMTP_ENV) or None,
                      models=json.loads(env.get(MODELS_ENV) or "[]") or None,
                      workers=int(env.get(JOB_WORKERS_ENV) or "0"))  # fmt: skip
