"""``evaluate_mcq``: evaluate a model on a multiple-choice file, as a Python user or the CLI calls it.

Everything that can be checked (options, the file, the price table, the model and its
credentials) is checked before any work starts, and raises a
:class:`~theorembench.common.errors.UserError` with a one-line message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theorembench.common.errors import InvalidSetting
from theorembench.common.shard import Shard, shard_settings
from theorembench.evaluate.cutoff import CutoffGuard, Selection, check_guard, cutoff_guard, select
from theorembench.evaluate.item_dates import item_date
from theorembench.evaluate.mcq.items import Dataset, load_dataset
from theorembench.evaluate.mcq.merge import merge_mcq
from theorembench.evaluate.mcq.protocol import PRESETS, PROMPT_STYLES, check_template
from theorembench.evaluate.mcq.released import FLAVOURS
from theorembench.evaluate.mcq.runner import MCQConfig, run_mcq_async
from theorembench.evaluate.release_ref import release_of
from theorembench.evaluate.result import EvalResult
from theorembench.llm import LLM, GenerateSettings, ModelSpec, check_model
from theorembench.llm.local import stop_private_servers
from theorembench.llm.pricing import PriceTable
from theorembench.store import Store
from theorembench.store.use import use_store

TOKEN_PARAMETERS = ("max_tokens", "max_completion_tokens")


@dataclass(frozen=True)
class MCQOptions:
    """How one multiple-choice evaluation is run: the settings a Python user or a command line gives, in the
    service's own words (the defaults are the released protocol's)."""

    sketch: bool = False  # mode 2: the proof sketch as a hint
    n: int = 1  # samples per item (the first decides accuracy)
    max_connections: int | None = None  # None: 4, or 1 for the embedded model
    limit: int | None = None  # only the first items
    seed: int = 42  # the option shuffle's global seed (item i uses seed + i)
    resume: bool = False  # continue the last run with the same settings and endpoint
    out_path: Path | None = None  # results JSON (None: the released layout under results/)
    max_tokens: int = 16384
    temperature: float | None = None  # None: not sent (the provider's default applies)
    top_p: float | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    timeout: float | None = None  # seconds per attempt
    max_retries: int = 3  # after a transient failure
    prompt_style: str = "released"
    system_prompt_file: Path | None = None  # its text replaces our system prompt
    user_template_file: Path | None = None  # replaces the user message
    preset: str | None = None  # sampling preset for the settings not given
    base_url: str | None = None
    model_revision: str | None = None
    api_key: str | None = None
    log_dir: Path | None = None
    write_log: bool = True
    use_cache: bool = True
    results_flavour: str = "theorembench"  # "released": the authors' results file, ours beside it
    token_parameter: str = "max_tokens"  # "max_completion_tokens": the name the released Azure script sends
    cutoff_guard: str | None = None  # exclude | flag | off; None: exclude for a release's items, flag for a file
    models_file: Path | None = None  # adds to or overrides the registry of model cutoffs
    shard: str | Shard | None = None  # "i/N": ask only shard i of N's items (theorembench.common.shard)
    merge_shards: int | None = None  # N: ask nothing, write the results of the N finished shards


def evaluate_mcq(
    file: str | Path,
    *,
    model: str,
    options: MCQOptions | None = None,
    db: Store | str | Path | None = None,
    on_start: Callable[[ModelSpec, int, int], None] | None = None,
    on_item: Callable[[dict[str, Any]], None] | None = None,
) -> EvalResult:
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

    ``shard="i/N"`` asks only the items shard i of N owns (by a hash of each item's id), in a run of the
    shard's own that resumes on its own; it writes no results file. ``merge_shards=N`` then asks nothing and
    writes the results, log and scorecard of the whole evaluation from the N finished shards (same settings,
    same store), as one run writes them.
    """
    o = options or MCQOptions()
    sketch, n, max_connections, limit, seed, resume = o.sketch, o.n, o.max_connections, o.limit, o.seed, o.resume
    out_path, max_tokens, temperature, top_p = o.out_path, o.max_tokens, o.temperature, o.top_p
    reasoning_effort, thinking_budget, timeout, max_retries = (o.reasoning_effort, o.thinking_budget, o.timeout,
                                                               o.max_retries)  # fmt: skip
    prompt_style, system_prompt_file, user_template_file, preset = (o.prompt_style, o.system_prompt_file,
                                                                    o.user_template_file, o.preset)  # fmt: skip
    base_url, model_revision, api_key = o.base_url, o.model_revision, o.api_key
    log_dir, write_log, use_cache = o.log_dir, o.write_log, o.use_cache
    if prompt_style not in PROMPT_STYLES:
        raise InvalidSetting("prompt_style", f"must be one of {', '.join(PROMPT_STYLES)}")
    if o.results_flavour not in FLAVOURS:
        raise InvalidSetting("results_flavour", f"must be one of {', '.join(FLAVOURS)}")
    if o.token_parameter not in TOKEN_PARAMETERS:
        raise InvalidSetting("token_parameter", f"must be one of {', '.join(TOKEN_PARAMETERS)}")
    check_guard(o.cutoff_guard)
    shard, merge = shard_settings(o.shard, o.merge_shards)
    if preset is not None and preset not in PRESETS:
        raise InvalidSetting("preset", f"must be one of {', '.join(PRESETS)}")
    sampling = {"temperature": temperature, "top_p": top_p}
    if preset is not None:
        sampling = {key: PRESETS[preset].get(key) if value is None else value for key, value in sampling.items()}
    system_prompt = _read_prompt(system_prompt_file, "system_prompt_file")
    user_template = _read_prompt(user_template_file, "user_template_file")
    if user_template is not None and (problem := check_template(user_template)):
        raise InvalidSetting("user_template_file", f"{user_template_file}: {problem}")
    for setting, value in (("n", n), ("max_connections", max_connections), ("limit", limit)):
        if value is not None and value < 1:
            raise InvalidSetting(setting, f"must be positive, got {value}")
    dataset = load_dataset(Path(file))
    prices = PriceTable.load()
    spec = check_model(model, base_url=base_url, api_key=api_key, revision=model_revision)  # before the store opens
    guard = cutoff_guard(o.cutoff_guard, spec.name, models_file=o.models_file,
                         release=release_of(dataset.path) is not None)  # fmt: skip
    if max_connections is None:
        # the released scripts use 4; llama.cpp serves one request at a time fastest
        max_connections = 1 if spec.is_local else 4
    # the request names the token limit as the user asked: max_completion_tokens goes in the body as such
    renamed = o.token_parameter != "max_tokens" and max_tokens is not None
    settings = GenerateSettings(
        temperature=sampling["temperature"], top_p=sampling["top_p"], max_tokens=None if renamed else max_tokens,
        reasoning_effort=reasoning_effort, thinking_budget=thinking_budget, timeout=timeout, max_retries=max_retries,
        max_connections=max_connections, extra_body={o.token_parameter: max_tokens} if renamed else None,
    )  # fmt: skip
    cfg = MCQConfig(
        model=spec.name, sketch=sketch, n=n, seed=seed, limit=limit, resume=resume,
        prompt_style=prompt_style, settings=settings, out=out_path, log_dir=log_dir, write_log=write_log,
        spec=spec, system_prompt=system_prompt, user_template=user_template, preset=preset,
        results_flavour=o.results_flavour, shard=shard,
        prompt_sources={name: str(path) for name, path in (("system_prompt", system_prompt_file),
                                                           ("user_template", user_template_file)) if path},
    )  # fmt: skip

    def started(total: int, already: int) -> None:
        if on_start is not None:
            on_start(spec, total, already)

    async def go(store: Store) -> EvalResult:
        if merge is not None:  # asks nothing: every answer is in the shards' runs
            return merge_mcq(store, dataset, cfg, spec, merge, selection=_selection(store, dataset, guard))
        llm = LLM(store, prices=prices, use_cache=use_cache)
        try:
            return await run_mcq_async(store, llm, dataset, cfg, on_start=started, on_item=on_item,
                                       selection=_selection(store, dataset, guard))  # fmt: skip
        finally:
            await llm.aclose()

    with use_store(db) as store:
        try:
            return asyncio.run(go(store))
        finally:
            stop_private_servers()


def _selection(store: Store, dataset: Dataset, guard: CutoffGuard) -> Selection:
    """The guard's split of the items by their source paper's first version (the store's row, the release
    manifest's, or the arXiv id the item names)."""
    ids = [item.id for item in dataset.items]
    if guard.mode == "off":
        return select(guard, ids, {})
    release = release_of(dataset.path)
    dates = {}
    for item, raw in zip(dataset.items, dataset.raw, strict=True):
        refs = [str(raw[k]) for k in ("paper_id", "source_id", "arxiv_id") if raw.get(k)] + [item.id]
        dates[item.id] = item_date(store, refs, release.row(item.id) if release is not None else None)
    return select(guard, ids, dates)


def _read_prompt(path: Path | None, setting: str) -> str | None:
    if path is None:
        return None
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidSetting(setting, f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    text = text[:-1] if text.endswith("\n") else text
    if not text.strip():
        raise InvalidSetting(setting, f"{path}: the file is empty")
    return text


__all__ = ["MCQOptions", "evaluate_mcq"]
