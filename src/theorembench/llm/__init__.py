"""One LLM layer for every stage: providers through Inspect AI, cache, retries, usage and cost."""

from theorembench.llm.client import (
    LLM,
    Completion,
    GenerateSettings,
    LLMError,
    call_ids_of,
    check_model,
    classify,
    record_calls,
)
from theorembench.llm.models import ModelConfigError, ModelSpec, resolve_model
from theorembench.llm.pricing import PriceTable
from theorembench.llm.structured import StructuredOutputError

__all__ = [
    "LLM",
    "Completion",
    "GenerateSettings",
    "LLMError",
    "ModelConfigError",
    "ModelSpec",
    "PriceTable",
    "StructuredOutputError",
    "call_ids_of",
    "check_model",
    "classify",
    "record_calls",
    "resolve_model",
]
