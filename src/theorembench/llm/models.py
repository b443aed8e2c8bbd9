"""Model names, as Inspect AI spells them, checked before any work starts.

``provider/model`` for the hosted providers (``openai/gpt-5``,
``anthropic/claude-sonnet-4-5``, ``google/gemini-2.5-pro``),
``openai-api/<service>/<model>`` for any OpenAI-compatible server (its address
and key come from ``<SERVICE>_BASE_URL`` and ``<SERVICE>_API_KEY``),
``vllm/<model>`` for a vLLM server (``VLLM_BASE_URL``) and ``local/<name>`` for
the embedded llama.cpp models that ship inside a Python package.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from theorembench.common.errors import UserError


class ModelConfigError(UserError, ValueError):
    """A model name or its credentials cannot work; raised before any call is made."""


# provider -> (environment variables that may hold the key, env var for a base URL)
_HOSTED: dict[str, tuple[tuple[str, ...], str | None]] = {
    "openai": (("OPENAI_API_KEY",), "OPENAI_BASE_URL"),
    "anthropic": (("ANTHROPIC_API_KEY",), "ANTHROPIC_BASE_URL"),
    "google": (("GOOGLE_API_KEY", "GEMINI_API_KEY", "VERTEX_API_KEY"), "GOOGLE_BASE_URL"),
    "mistral": (("MISTRAL_API_KEY",), "MISTRAL_BASE_URL"),
    "grok": (("XAI_API_KEY",), "XAI_BASE_URL"),
    "groq": (("GROQ_API_KEY",), "GROQ_BASE_URL"),
    "together": (("TOGETHER_API_KEY",), "TOGETHER_BASE_URL"),
    "openrouter": (("OPENROUTER_API_KEY",), "OPENROUTER_BASE_URL"),
    "deepseek": (("DEEPSEEK_API_KEY",), "DEEPSEEK_BASE_URL"),
    "fireworks": (("FIREWORKS_API_KEY",), "FIREWORKS_BASE_URL"),
}
# providers that talk to a server the user runs: a base URL is needed, a key is optional
_SERVED: dict[str, str] = {
    "vllm": "VLLM_BASE_URL",
    "sglang": "SGLANG_BASE_URL",
    "ollama": "OLLAMA_BASE_URL",
    "llama-cpp-python": "LLAMA_CPP_PYTHON_BASE_URL",
}
_SERVED_DEFAULTS = {"ollama": "http://localhost:11434/v1"}

PROVIDERS = sorted([*_HOSTED, *_SERVED, "openai-api", "local"])


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: what the user typed and how to reach it."""

    name: str
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    revision: str | None = None
    """A tag the user gives to tell apart model versions served under one name and address."""

    @property
    def endpoint(self) -> str:
        """Who answers: the server address (the provider's default one when none is set) and the revision tag.

        It is part of every cache key and run signature, so two servers behind one model
        name, or one server before and after a model swap the user tagged, never share an answer.
        """
        where = self.base_url.rstrip("/") if self.base_url else f"{self.provider}:default"
        return f"{where}#{self.revision}" if self.revision else where

    @property
    def is_local(self) -> bool:
        return self.provider == "local"

    @property
    def inspect_name(self) -> str:
        if self.is_local:
            return f"openai-api/local/{self.model}"
        return self.name


def _service_env(service: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", service.upper())


def resolve_model(
    name: str, *, base_url: str | None = None, api_key: str | None = None, revision: str | None = None
) -> ModelSpec:
    """Check a model name and find its endpoint and key, or raise ModelConfigError.

    ``revision`` (default ``$THEOREMBENCH_MODEL_REVISION``) tags the model version the user means.
    """
    spec = _resolve(name, base_url=base_url, api_key=api_key)
    revision = revision or os.environ.get("THEOREMBENCH_MODEL_REVISION") or None
    return replace(spec, revision=revision) if revision else spec


def _resolve(name: str, *, base_url: str | None, api_key: str | None) -> ModelSpec:
    from theorembench.llm.local import LOCAL_MODELS

    name = name.strip()
    provider, sep, rest = name.partition("/")
    if not sep or not rest:
        raise ModelConfigError(
            f"model {name!r} has no provider: write provider/model, e.g. openai/gpt-5, "
            "anthropic/claude-sonnet-4-5, openai-api/<service>/<model> or local/smollm2"
        )
    if provider == "local":
        if rest not in LOCAL_MODELS:
            known = ", ".join(f"local/{m}" for m in LOCAL_MODELS)
            raise ModelConfigError(f"unknown local model {name!r}; embedded models: {known}")
        return ModelSpec(name, provider, rest, base_url=base_url, api_key=api_key)
    if provider == "openai-api":
        service, sep, model = rest.partition("/")
        if not sep or not model:
            raise ModelConfigError(
                f"model {name!r}: OpenAI-compatible servers are named openai-api/<service>/<model>"
            )
        env = _service_env(service)
        url = base_url or os.environ.get(f"{env}_BASE_URL")
        if not url:
            raise ModelConfigError(
                f"model {name!r}: no server address; set {env}_BASE_URL (or give the model's base URL)"
            )
        key = api_key or os.environ.get(f"{env}_API_KEY")
        if not key:
            raise ModelConfigError(
                f"model {name!r}: no API key; set {env}_API_KEY (any value for a server "
                "without authentication), or give the model's API key"
            )
        return ModelSpec(name, provider, model, base_url=url, api_key=key)
    if provider in _SERVED:
        url = base_url or os.environ.get(_SERVED[provider]) or _SERVED_DEFAULTS.get(provider)
        if not url:
            raise ModelConfigError(
                f"model {name!r}: no server address; set {_SERVED[provider]} (or give the model's base URL)"
            )
        return ModelSpec(name, provider, rest, base_url=url, api_key=api_key)
    if provider in _HOSTED:
        key_vars, url_var = _HOSTED[provider]
        key = api_key or next((os.environ[v] for v in key_vars if os.environ.get(v)), None)
        if not key:
            raise ModelConfigError(
                f"model {name!r}: no API key; set {' or '.join(key_vars)} (or give the model's API key)"
            )
        url = base_url or (os.environ.get(url_var) if url_var else None)
        return ModelSpec(name, provider, rest, base_url=url, api_key=key)
    raise ModelConfigError(
        f"unknown model provider {provider!r} in {name!r}; known providers: {', '.join(PROVIDERS)}"
    )
