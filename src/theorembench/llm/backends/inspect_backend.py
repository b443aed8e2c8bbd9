"""The Inspect backend: every provider Inspect AI knows, through its model API."""

from __future__ import annotations

from typing import Any

from theorembench.llm.backends import RawOutput
from theorembench.llm.structured import llama_cpp_schema

# providers whose SDK client accepts max_retries: retries are ours (bounded, recorded)
SDK_RETRY_ARG = {"openai", "anthropic", "openai-api", "vllm", "sglang", "ollama", "together",
                  "openrouter", "deepseek", "fireworks", "groq", "grok", "llama-cpp-python", "local"}  # fmt: skip


class _ModelOutputError(RuntimeError):
    pass


class InspectBackend:
    name = "inspect"

    def __init__(self, inspect_name: str, provider: str, base_url: str | None, api_key: str | None,
                 *, llama_cpp: bool = False):  # fmt: skip
        from inspect_ai.model import get_model

        model_args: dict[str, Any] = {}
        if provider in SDK_RETRY_ARG:
            model_args["max_retries"] = 0
        self.llama_cpp = llama_cpp
        self.model = get_model(inspect_name, base_url=base_url, api_key=api_key, memoize=False, **model_args)

    def _config(self, settings: Any, schema: dict[str, Any] | None, max_connections: int) -> Any:
        from inspect_ai.model import GenerateConfig, ResponseSchema
        from inspect_ai.util import JSONSchema

        extra_body = dict(settings.extra_body or {})
        response_schema = None
        if schema is not None:
            if self.llama_cpp:
                extra_body["response_format"] = {"type": "json_object", "schema": llama_cpp_schema(schema)}
            else:
                response_schema = ResponseSchema(
                    name="answer", json_schema=JSONSchema.model_validate(schema), strict=False
                )
        return GenerateConfig(
            temperature=settings.temperature,
            top_p=settings.top_p,
            max_tokens=settings.max_tokens,
            reasoning_effort=settings.reasoning_effort,
            reasoning_tokens=settings.thinking_budget,
            seed=settings.seed,
            max_retries=0,
            attempt_timeout=int(settings.timeout) if settings.timeout else None,
            max_connections=max_connections,
            response_schema=response_schema,
            extra_body=extra_body or None,
        )

    async def generate(self, messages: list[dict[str, str]], settings: Any,
                       schema: dict[str, Any] | None, max_connections: int) -> RawOutput:  # fmt: skip
        output = await self.model.generate(_to_inspect(messages), config=self._config(settings, schema, max_connections))
        return raw_output(output)

    async def aclose(self) -> None:
        return None


def raw_output(output: Any) -> RawOutput:
    """The text, reasoning and token counts of an Inspect ``ModelOutput``; one that carries an error raises."""
    if getattr(output, "error", None):
        raise _ModelOutputError(str(output.error))
    usage = output.usage
    cached = (usage.input_tokens_cache_read or 0) if usage else 0
    prompt = usage.input_tokens + cached + (usage.input_tokens_cache_write or 0) if usage else 0
    return RawOutput(
        text=output.completion or "",
        reasoning=_reasoning_text(output),
        prompt_tokens=prompt,
        completion_tokens=usage.output_tokens if usage else 0,
        reasoning_tokens=(usage.reasoning_tokens or 0) if usage else 0,
        cached_tokens=cached,
        finish_reason=getattr(output, "stop_reason", None),
        model=output.model,
    )


def _to_inspect(messages: list[dict[str, str]]) -> list[Any]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    out = []
    for msg in messages:
        role = msg.get("role")
        if role not in kinds:
            raise ValueError(f"unknown message role {role!r}")
        out.append(kinds[role](content=msg["content"]))
    return out


def _reasoning_text(output: Any) -> str | None:
    try:
        content = output.choices[0].message.content
    except (AttributeError, IndexError):
        return None
    if isinstance(content, str):
        return None
    parts = []
    for c in content:
        if getattr(c, "type", "") != "reasoning":
            continue
        # a redacted block (e.g. Anthropic's signed thinking) carries its readable text as summary
        parts.append((c.summary or "") if c.redacted else (c.reasoning or c.summary or ""))
    text = "\n".join(p for p in parts if p)
    return text or None
