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
from theorembench.llm.logprobs import (
    LogprobsClient,
    LogprobsError,
    LogprobsUnsupported,
    PromptLogprobs,
    prompt_logprobs,
)
from theorembench.llm.models import ModelConfigError, ModelSpec, resolve_model
from theorembench.llm.pricing import PriceTable
from theorembench.llm.structured import StructuredOutputError

__all__ = [
    "LLM",
    "Completion",
    "GenerateSettings",
    "LLMError",
    "LogprobsClient",
    "LogprobsError",
    "LogprobsUnsupported",
    "ModelConfigError",
    "ModelSpec",
    "PriceTable",
    "PromptLogprobs",
    "StructuredOutputError",
    "call_ids_of",
    "check_model",
    "classify",
    "prompt_logprobs",
    "record_calls",
    "resolve_model",
]
