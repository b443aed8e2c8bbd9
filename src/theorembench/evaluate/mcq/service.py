"""``evaluate_mcq``: evaluate a model on a multiple-choice file, as a Python user or the CLI calls it.

Everything that can be checked (options, the file, the price table, the model and its
credentials) is checked before any work starts, and raises a
:class:`~theorembench.common.errors.UserError` with a one-line message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from theorembench.common.errors import UserError
from theorembench.evaluate.mcq.items import load_dataset
from theorembench.evaluate.mcq.protocol import PRESETS, PROMPT_STYLES, check_template
from theorembench.evaluate.mcq.runner import MCQConfig, MCQRun, run_mcq_async
from theorembench.llm import LLM, GenerateSettings, ModelSpec, check_model
from theorembench.llm.local import stop_private_servers
from theorembench.llm.pricing import PriceTable
from theorembench.store import Store
from theorembench.store.use import use_store


def evaluate_mcq(
    file: str | Path,
    *,
    model: str,
    db: Store | str | Path | None = None,
    sketch: bool = False,
    n: int = 1,
    max_connections: int | None = None,
    limit: int | None = None,
    seed: int = 42,
    resume: bool = False,
    out_path: Path | None = None,
    max_tokens: int = 16384,
    temperature: float | None = None,
    top_p: float | None = None,
    reasoning_effort: str | None = None,
    thinking_budget: int | None = None,
    timeout: float | None = None,
    max_retries: int = 3,
    prompt_style: str = "released",
    system_prompt_file: Path | None = None,
    user_template_file: Path | None = None,
    preset: str | None = None,
    base_url: str | None = None,
    model_revision: str | None = None,
    api_key: str | None = None,
    log_dir: Path | None = None,
    write_log: bool = True,
    use_cache: bool = True,
    on_start: Callable[[ModelSpec, int, int], None] | None = None,
    on_item: Callable[[dict[str, Any]], None] | None = None,
) -> MCQRun:
    """Run (or resume) one evaluation; returns the run with its results file and summary.

    ``db`` is an open store, a SQLite path or PostgreSQL URL, or None for the default store;
    it is opened only after the file, the options and the model have been checked.
    ``on_start(spec, total, already_answered)`` is called once before the first request,
    ``on_item(record)`` after each answered item.

    ``system_prompt_file`` replaces our system prompt with the file's text (one final newline
    dropped); ``user_template_file`` replaces the user message (placeholders in
    ``protocol.TEMPLATE_FIELDS``). ``preset`` fills the sampling settings not given
    (``released-vllm``: temperature 1.0, top-p 0.95). ``model_revision`` tags the model
    version (default ``$THEOREMBENCH_MODEL_REVISION``); with the endpoint it keeps runs apart.
    """
    if prompt_style not in PROMPT_STYLES:
        raise UserError(f"--prompt-style must be one of {', '.join(PROMPT_STYLES)}")
    if preset is not None and preset not in PRESETS:
        raise UserError(f"--preset must be one of {', '.join(PRESETS)}")
    sampling = {"temperature": temperature, "top_p": top_p}
    if preset is not None:
        sampling = {key: PRESETS[preset].get(key) if value is None else value for key, value in sampling.items()}
    system_prompt = _read_prompt(system_prompt_file, "--system-prompt")
    user_template = _read_prompt(user_template_file, "--user-template")
    if user_template is not None and (problem := check_template(user_template)):
        raise UserError(f"--user-template {user_template_file}: {problem}")
    if n < 1 or (max_connections is not None and max_connections < 1) or (limit is not None and limit < 1):
        raise UserError("--n, --max-connections and --limit must be positive")
    dataset = load_dataset(Path(file))
    prices = PriceTable.load()
    spec = check_model(model, base_url=base_url, api_key=api_key, revision=model_revision)  # before the store opens
    if max_connections is None:
        # the released scripts use 4; llama.cpp serves one request at a time fastest
        max_connections = 1 if spec.is_local else 4
    settings = GenerateSettings(
        temperature=sampling["temperature"], top_p=sampling["top_p"], max_tokens=max_tokens,
        reasoning_effort=reasoning_effort, thinking_budget=thinking_budget, timeout=timeout, max_retries=max_retries,
        max_connections=max_connections,
    )  # fmt: skip
    cfg = MCQConfig(
        model=spec.name, sketch=sketch, n=n, seed=seed, limit=limit, resume=resume,
        prompt_style=prompt_style, settings=settings, out=out_path, log_dir=log_dir, write_log=write_log,
        spec=spec, system_prompt=system_prompt, user_template=user_template, preset=preset,
        prompt_sources={name: str(path) for name, path in (("system_prompt", system_prompt_file),
                                                           ("user_template", user_template_file)) if path},
    )  # fmt: skip

    def started(total: int, already: int) -> None:
        if on_start is not None:
            on_start(spec, total, already)

    async def go(store: Store) -> MCQRun:
        llm = LLM(store, prices=prices, use_cache=use_cache)
        try:
            return await run_mcq_async(store, llm, dataset, cfg, on_start=started, on_item=on_item)
        finally:
            await llm.aclose()

    with use_store(db) as store:
        try:
            return asyncio.run(go(store))
        finally:
            stop_private_servers()


def _read_prompt(path: Path | None, option: str) -> str | None:
    if path is None:
        return None
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{option} {path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    text = text[:-1] if text.endswith("\n") else text
    if not text.strip():
        raise UserError(f"{option} {path}: the file is empty")
    return text


__all__ = ["evaluate_mcq"]
