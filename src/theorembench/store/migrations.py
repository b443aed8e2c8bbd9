"""Schema migrations for the SQLite store.

Each entry is applied once, in order, inside a transaction; the store's
``PRAGMA user_version`` is the number of migrations applied. Later features
append migrations here, never edit old ones.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "core: runs, datasets, items, model calls, results",
        """
        CREATE TABLE runs (
            id          TEXT PRIMARY KEY,
            kind        TEXT NOT NULL,
            signature   TEXT NOT NULL,
            name        TEXT,
            model       TEXT,
            dataset_id  TEXT,
            status      TEXT NOT NULL DEFAULT 'running',
            config      TEXT NOT NULL DEFAULT '{}',
            summary     TEXT,
            created_at  REAL NOT NULL,
            updated_at  REAL NOT NULL
        );
        CREATE INDEX runs_signature ON runs(kind, signature, created_at);

        CREATE TABLE datasets (
            id          TEXT PRIMARY KEY,
            path        TEXT,
            name        TEXT,
            n_items     INTEGER NOT NULL,
            created_at  REAL NOT NULL
        );

        CREATE TABLE items (
            dataset_id  TEXT NOT NULL REFERENCES datasets(id),
            idx         INTEGER NOT NULL,
            item_id     TEXT NOT NULL,
            payload     TEXT NOT NULL,
            PRIMARY KEY (dataset_id, idx)
        );
        CREATE INDEX items_item_id ON items(item_id);

        CREATE TABLE model_calls (
            id                INTEGER PRIMARY KEY AUTOINCREMENT,
            cache_key         TEXT NOT NULL,
            run_id            TEXT,
            purpose           TEXT,
            model             TEXT NOT NULL,
            provider          TEXT NOT NULL,
            request           TEXT NOT NULL,
            response_text     TEXT,
            response          TEXT,
            status            TEXT NOT NULL,
            error             TEXT,
            attempts          INTEGER NOT NULL DEFAULT 1,
            prompt_tokens     INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            reasoning_tokens  INTEGER NOT NULL DEFAULT 0,
            total_tokens      INTEGER NOT NULL DEFAULT 0,
            latency_s         REAL NOT NULL DEFAULT 0,
            cost_usd          REAL,
            created_at        REAL NOT NULL
        );
        CREATE INDEX model_calls_cache ON model_calls(cache_key, status);
        CREATE INDEX model_calls_run ON model_calls(run_id);

        CREATE TABLE results (
            run_id        TEXT NOT NULL REFERENCES runs(id),
            idx           INTEGER NOT NULL,
            sample        INTEGER NOT NULL,
            item_id       TEXT NOT NULL,
            call_id       INTEGER REFERENCES model_calls(id),
            status        TEXT NOT NULL,
            answer        TEXT,
            correct_label TEXT,
            is_correct    INTEGER,
            error         TEXT,
            record        TEXT NOT NULL,
            created_at    REAL NOT NULL,
            PRIMARY KEY (run_id, idx, sample)
        );
        """,
    ),
    (
        "papers and their extracted main theorems",
        """
        CREATE TABLE papers (
            id               TEXT PRIMARY KEY,
            source           TEXT NOT NULL,
            arxiv_id         TEXT,
            version          INTEGER,
            month            TEXT,
            title            TEXT,
            authors          TEXT NOT NULL DEFAULT '[]',
            abstract         TEXT,
            primary_category TEXT,
            categories       TEXT NOT NULL DEFAULT '[]',
            published        TEXT,
            updated          TEXT,
            license          TEXT,
            meta             TEXT NOT NULL DEFAULT '{}',
            eprint_path      TEXT,
            eprint_kind      TEXT,
            eprint_sha256    TEXT,
            folder           TEXT,
            status           TEXT NOT NULL,
            reason           TEXT,
            problems         TEXT NOT NULL DEFAULT '[]',
            created_at       REAL NOT NULL,
            updated_at       REAL NOT NULL
        );
        CREATE INDEX papers_month ON papers(month, primary_category);

        CREATE TABLE theorems (
            paper_id      TEXT NOT NULL REFERENCES papers(id),
            settings_key  TEXT NOT NULL,
            path          TEXT NOT NULL,
            env_name      TEXT,
            label         TEXT,
            reason        TEXT,
            record        TEXT,
            call_ids      TEXT NOT NULL DEFAULT '[]',
            created_at    REAL NOT NULL,
            PRIMARY KEY (paper_id, settings_key)
        );
        """,
    ),
    (
        "resumable pipeline steps",
        """
        CREATE TABLE steps (
            pipeline    TEXT NOT NULL,
            key         TEXT NOT NULL,
            stage       TEXT NOT NULL,
            status      TEXT NOT NULL,
            output      TEXT,
            reason      TEXT,
            call_ids    TEXT NOT NULL DEFAULT '[]',
            updated_at  REAL NOT NULL,
            PRIMARY KEY (pipeline, key, stage)
        );
        """,
    ),
]
