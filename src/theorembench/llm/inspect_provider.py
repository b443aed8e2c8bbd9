"""``theorembench/<model>``: an Inspect AI model provider whose every call goes through the :class:`LLM` layer.

Inspect's agent loop keeps working as it is (tool calls, token limits, the transcript), while each
call is answered from the store's response cache when it was made before, retried by the LLM
layer's policy, single-flighted, and recorded in the usage ledger with its cost. The request itself
is sent by Inspect's own provider for the model, so every protocol Inspect speaks (chat completions,
streamed or not, the Responses API, Anthropic's messages) carries the tool definitions and the tool
calls as it always does; the cache keeps the whole ``ModelOutput``, tool calls included.

:func:`inspect_model` gives such a model bound to one :class:`LLM` (its store, run id and prices);
``inspect eval --model theorembench/<provider>/<model>`` gets a client over the default store.
The cost of each call also reaches Inspect (the log's ``total_cost``); an answer from the cache costs 0.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelAPI, ModelOutput, ModelUsage, get_model, modelapi
from inspect_ai.model._model_data.model_data import ModelCost
from inspect_ai.model._model_output import ServedModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo
from pydantic_core import to_jsonable_python

from theorembench.llm.backends import RawOutput
from theorembench.llm.backends.inspect_backend import SDK_RETRY_ARG, raw_output
from theorembench.llm.client import LLM, GenerateSettings, check_model
from theorembench.llm.models import ModelSpec

PROVIDER = "theorembench"
# GenerateConfig fields that change how a request travels, not what the model answers: not in the cache key
TRANSPORT = frozenset({"max_retries", "timeout", "attempt_timeout", "stream_idle_timeout", "max_connections",
                       "adaptive_connections", "max_tool_output", "cache", "batch", "fail_on_refusal",
                       "extra_headers"})  # fmt: skip
# a base URL never called: the capabilities of a local model's provider are known before its server starts
_NOT_STARTED = "http://127.0.0.1:9/v1"

# Inspect providers whose output_tokens leave reasoning out (xAI counts it apart, and in total_tokens)
REASONING_APART = frozenset({"grok"})

_CLIENTS: weakref.WeakValueDictionary[str, LLM] = weakref.WeakValueDictionary()
_DEFAULT: list[LLM] = []


def inspect_model(llm: LLM, spec: ModelSpec, *, purpose: str, config: GenerateConfig | None = None,
                  retries: int = 3, attempt_timeout_s: float | None = None,
                  model_args: dict[str, Any] | None = None) -> Model:  # fmt: skip
    """The Inspect model ``theorembench/<spec.name>`` whose calls go through ``llm``, recorded under ``purpose``.

    ``retries`` and ``attempt_timeout_s`` are the LLM layer's (Inspect itself never retries these calls);
    ``model_args`` go to Inspect's provider for the model (e.g. ``{"responses_api": True}``).
    """
    handle = f"{id(llm):x}"
    _CLIENTS[handle] = llm
    return get_model(f"{PROVIDER}/{spec.name}", base_url=spec.base_url, api_key=spec.api_key,
                     config=(config or GenerateConfig()).merge(GenerateConfig(max_retries=0)), memoize=False,
                     client=handle, purpose=purpose, retries=retries, attempt_timeout_s=attempt_timeout_s,
                     revision=spec.revision, **(model_args or {}))  # fmt: skip


def _default_client() -> LLM:
    if not _DEFAULT:
        from theorembench.store import open_store

        _DEFAULT.append(LLM(open_store(None)))
    return _DEFAULT[0]


class LedgeredModelAPI(ModelAPI):
    """Inspect's provider for ``model_name`` behind the LLM layer's cache, retries, ledger and prices."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), *, client: str | None = None, purpose: str = "inspect",
                 retries: int = 3, attempt_timeout_s: float | None = None, revision: str | None = None,
                 **model_args: Any) -> None:  # fmt: skip
        super().__init__(model_name, base_url=base_url, api_key=api_key, config=config)
        self.llm = _CLIENTS[client] if client else _default_client()
        self.spec = check_model(model_name, base_url=base_url, api_key=api_key, revision=revision)
        self.purpose = purpose
        self.transport = GenerateSettings(max_retries=retries, timeout=attempt_timeout_s,
                                          max_connections=config.max_connections)  # fmt: skip
        # an SDK client that would retry on its own is told not to: the retries are the LLM layer's
        self.provider_args = {**model_args, "max_retries": 0} if self.spec.provider in SDK_RETRY_ARG else model_args
        started = not self.spec.is_local or self.spec.base_url is not None
        self._answering: ModelAPI | None = self._provider(*self.llm.address(self.spec)) if started else None
        self._shape = self._answering or self._provider(_NOT_STARTED, "local")
        self._starting = asyncio.Lock()

    def _provider(self, base_url: str | None, api_key: str | None) -> ModelAPI:
        model = get_model(self.spec.inspect_name, base_url=base_url, api_key=api_key, memoize=False,
                          **self.provider_args)  # fmt: skip
        return model.api

    async def _answering_api(self) -> ModelAPI:
        """The provider that sends requests; a local model's server starts on the first call the cache lacks."""
        async with self._starting:
            if self._answering is None:
                base_url, api_key = await asyncio.to_thread(self.llm.address, self.spec)
                self._answering = self._provider(base_url, api_key)
        return self._answering

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput | tuple[ModelOutput, Any]:  # fmt: skip
        messages = [m.model_dump(mode="json", exclude_none=True, exclude={"id"}) for m in input]
        asked = {k: v for k, v in config.model_dump(mode="json", exclude_none=True).items() if k not in TRANSPORT}
        sample = _sample_index()
        identity = {"kind": "inspect-chat", "messages": messages, "sample": sample, "config": asked,
                    "tools": [t.model_dump(mode="json", exclude_none=True) for t in tools],
                    "tool_choice": to_jsonable_python(tool_choice),
                    "provider_args": {k: v for k, v in self.provider_args.items() if k != "max_retries"}}  # fmt: skip
        replies = [i for i, m in enumerate(input) if m.role == "assistant"]
        request = {"kind": "inspect-chat", "messages": len(messages), "sample": sample, "config": asked,
                   "new_messages": messages[replies[-1] + 1 if replies else 0:], "tools": [t.name for t in tools],
                   "tool_choice": identity["tool_choice"]}  # fmt: skip
        calls: list[Any] = []

        async def send() -> RawOutput:
            api = await self._answering_api()
            result = await asyncio.wait_for(api.generate(input=input, tools=tools, tool_choice=tool_choice,
                                                         config=config), self.transport.timeout)  # fmt: skip
            output, call = result if isinstance(result, tuple) else (result, None)
            if isinstance(output, Exception):
                raise output
            output.usage = reasoning_in_output(output.usage, self.spec.provider)
            raw = raw_output(output)
            raw.payload = {"output": output.model_dump(mode="json", exclude_none=True)}
            calls[:] = [call] if call is not None else []
            return raw

        def placeholder(text: str) -> dict[str, Any]:  # a forecast's stand-in answer
            return {"output": ModelOutput.from_content(self.spec.name, text).model_dump(mode="json", exclude_none=True)}

        done = await self.llm.exchange(self.spec, identity, request, send, self.transport, purpose=self.purpose,
                                       max_tokens=config.max_tokens, placeholder=placeholder)  # fmt: skip
        output = ModelOutput.model_validate((done.payload or {})["output"])
        output.usage = reasoning_in_output(output.usage, self.spec.provider)  # also an answer cached before
        for choice in output.choices:
            choice.message.id = None  # a fresh message, also when it comes from the cache
        output.metadata = {**(output.metadata or {}), PROVIDER: {"call_id": done.call_id, "cached": done.cached,
                                                                  "cost_usd": done.cost_usd}}  # fmt: skip
        return (output, calls[0]) if calls and not done.cached else output

    def served_model_usage(self, output: ModelOutput) -> list[ServedModelUsage] | None:
        """Prices the call for Inspect at the price table's rates (the ledger's); a cached answer costs nothing."""
        info = (output.metadata or {}).get(PROVIDER)
        price = self.llm.prices.lookup(self.spec.name)
        if not isinstance(info, dict) or price is None or output.usage is None:
            return None
        if info.get("cached"):
            cost = ModelCost(input=0.0, output=0.0, input_cache_write=0.0, input_cache_read=0.0)
        else:
            cached = price.input if price.cached_input is None else price.cached_input
            cost = ModelCost(input=price.input, output=price.output, input_cache_write=price.input,
                             input_cache_read=cached)  # fmt: skip
        return [ServedModelUsage(model=self.spec.name, usage=output.usage, cost=cost)]

    def should_retry(self, ex: Exception) -> bool:
        return False  # the LLM layer retried already

    def connection_key(self) -> str:
        return f"{self.spec.name}@{self.spec.endpoint}"

    async def aclose(self) -> None:
        for api in {id(a): a for a in (self._answering, self._shape) if a is not None}.values():
            await api.aclose()

    # what the provider's request shape depends on: Inspect prepares the input by these
    def max_tokens(self) -> int | None:
        return self._shape.max_tokens()

    def max_tokens_for_config(self, config: GenerateConfig) -> int | None:
        return self._shape.max_tokens_for_config(config)

    def max_connections(self) -> int:
        return self._shape.max_connections()

    def collapse_user_messages(self) -> bool:
        return self._shape.collapse_user_messages()

    def collapse_assistant_messages(self) -> bool:
        return self._shape.collapse_assistant_messages()

    def collapse_system_messages(self) -> bool:
        return self._shape.collapse_system_messages()

    def tools_required(self) -> bool:
        return self._shape.tools_required()

    def tool_result_images(self) -> bool:
        return self._shape.tool_result_images()

    def tool_result_documents(self) -> bool:
        return self._shape.tool_result_documents()

    def force_reasoning_history(self) -> Any:
        return self._shape.force_reasoning_history()

    def auto_reasoning_history(self) -> Any:
        return self._shape.auto_reasoning_history()

    def compact_reasoning_history(self) -> bool:
        return self._shape.compact_reasoning_history()

    def model_family(self) -> str:
        return self._shape.model_family()


def reasoning_in_output(usage: ModelUsage | None, provider: str | None = None) -> ModelUsage | None:
    """``usage`` with reasoning counted inside ``output_tokens``, as OpenAI, Anthropic and Google report it, so that
    output (and a token limit on it, and the ledger's completion tokens) counts every generated token once.

    Reasoning is added when it is outside: always for a provider in :data:`REASONING_APART` whose total does not
    show it added yet, and for any provider whose total is prompt + output + reasoning (xAI's OpenAI-compatible
    API). Applying it twice changes nothing (after it, the total is prompt + output).
    """
    if usage is None or not usage.reasoning_tokens:
        return usage
    prompt = usage.input_tokens + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
    reasoning = usage.reasoning_tokens
    apart = usage.total_tokens == prompt + usage.output_tokens + reasoning
    if provider in REASONING_APART and usage.total_tokens != prompt + usage.output_tokens:
        apart = True
    if not apart:
        return usage
    output = usage.output_tokens + reasoning
    return usage.model_copy(update={"output_tokens": output, "total_tokens": prompt + output})


def _sample_index() -> int:
    """Which sample of the same request this is: the Inspect epoch less one (epochs are distinct draws)."""
    try:
        from inspect_ai.solver._task_state import sample_state
    except ImportError:  # pragma: no cover - Inspect moved it
        return 0
    state = sample_state()
    return max(int(state.epoch) - 1, 0) if state is not None else 0


@modelapi(name=PROVIDER)
def theorembench() -> type[ModelAPI]:
    return LedgeredModelAPI


__all__ = ["PROVIDER", "REASONING_APART", "LedgeredModelAPI", "inspect_model", "reasoning_in_output"]
