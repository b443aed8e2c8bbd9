"""Counting a prompt's tokens before it is sent: the provider's tokenizer where one is installed, else an estimate.

OpenAI's models are counted with ``tiktoken`` when it is installed and its encoding is on disk (it is never
downloaded here: a forecast makes no network call). Every other model, and OpenAI's without ``tiktoken``, gets
an estimate of one token per four characters, rounded up, flagged as such so that a report can say so (the
forecast widens its range for it).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from functools import lru_cache
from typing import Any

CHARS_PER_TOKEN = 4.0
#: per message, the tokens the chat format adds around its text (role markers, separators)
MESSAGE_OVERHEAD = 4


_ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def _encoding_on_disk(name: str) -> bool:
    """Whether tiktoken's cache holds the encoding ``name`` (its file is named by the SHA-1 of its address, in
    $TIKTOKEN_CACHE_DIR, $DATA_GYM_CACHE_DIR or <tmp>/data-gym-cache), so loading it makes no network call."""
    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") \
        or os.path.join(tempfile.gettempdir(), "data-gym-cache")  # fmt: skip
    return os.path.isfile(os.path.join(folder, hashlib.sha1(_ENCODING_URL.format(name).encode()).hexdigest()))


@lru_cache(maxsize=8)
def _encoding(model: str) -> Any | None:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        name = "o200k_base"  # OpenAI's current models
    if not _encoding_on_disk(name):
        return None
    try:
        return tiktoken.get_encoding(name)
    except Exception:  # noqa: BLE001 - a damaged cache file: estimate instead
        return None


def tokenizer_for(provider: str, model: str) -> Any | None:
    """An installed tokenizer that counts this model's tokens exactly, or None."""
    if provider in ("openai", "azure"):
        return _encoding(model.rsplit("/", 1)[-1])
    return None


def text_of(request: Any) -> list[str]:
    """The texts a request sends: each message's content, or the whole request as JSON for other shapes."""
    if isinstance(request, dict) and isinstance(request.get("messages"), list):
        texts = []
        for message in request["messages"]:
            content = message.get("content") if isinstance(message, dict) else message
            texts.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
        extra = {k: v for k, v in request.items() if k in ("schema", "tools") and v}
        if extra:
            texts.append(json.dumps(extra, ensure_ascii=False))
        return texts
    return [json.dumps(request, ensure_ascii=False, default=str)]


def count_prompt(provider: str, model: str, request: Any) -> tuple[int, bool]:
    """The prompt tokens of ``request`` and whether the count is exact (the model's own tokenizer)."""
    texts = text_of(request)
    encoding = tokenizer_for(provider, model)
    overhead = MESSAGE_OVERHEAD * len(texts)
    if encoding is not None:
        return overhead + sum(len(encoding.encode(t, disallowed_special=())) for t in texts), True
    return overhead + sum(math.ceil(len(t) / CHARS_PER_TOKEN) for t in texts), False


__all__ = ["CHARS_PER_TOKEN", "count_prompt", "text_of", "tokenizer_for"]
