"""What went wrong with a model call: the final error a caller sees, and the judgement of each failed attempt."""

from __future__ import annotations

from dataclasses import dataclass

from theorembench.common.retry import retry_after_seconds

#: Failures of the request itself, which sending it again cannot cure: a client error (HTTP 4xx) other than
#: 408, 409 and 429 (transient) and other than 401, 403 and 404, which are about the endpoint (a key, a
#: model name) and cured by fixing the settings, not the sample. A sample whose call ends so is final.
FINAL_KINDS = frozenset({"bad_request"})


class LLMError(RuntimeError):
    """A call that failed for good, after its bounded retries.

    ``final`` says whether the failure belongs to this request (a 400 "prompt is too long"): asking
    the same request again gives the same failure, so a sample that ends so is an outcome (counted,
    as not correct), not something to ask again on the next run.
    """

    def __init__(self, kind: str, message: str, *, attempts: int, call_id: int | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.attempts = attempts
        self.call_id = call_id

    @property
    def final(self) -> bool:
        return self.kind in FINAL_KINDS


@dataclass
class _Failure:
    kind: str
    retryable: bool
    message: str
    retry_after: float | None = None


def _unwrap(exc: BaseException) -> BaseException:
    seen = 0
    while seen < 10:
        seen += 1
        last = getattr(exc, "last_attempt", None)  # tenacity.RetryError
        if last is not None and hasattr(last, "exception") and last.exception() is not None:
            exc = last.exception()
            continue
        if type(exc).__name__ == "ModelGenerateError" and exc.__cause__ is not None:
            exc = exc.__cause__
            continue
        break
    return exc


def classify(exc: BaseException) -> _Failure:
    """Decide whether a failed attempt is worth retrying, and name its cause."""
    exc = _unwrap(exc)
    if isinstance(exc, LLMError):  # a call through the LLM layer that failed for good: its retries are spent
        return _Failure(exc.kind, False, exc.message)
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = str(exc).strip().splitlines()[0][:500] if str(exc).strip() else type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        after = getattr(exc, "retry_after", None)
        if not isinstance(after, int | float):
            after = retry_after_seconds(getattr(getattr(exc, "response", None), "headers", None))
        if status == 429:
            return _Failure("rate_limited", True, f"HTTP 429: {message}", after)
        if status in (408, 409) or status >= 500:
            return _Failure("server_error", True, f"HTTP {status}: {message}", after)
        if status in (401, 403):
            return _Failure("auth_error", False, f"HTTP {status}: {message}")
        if status == 404:
            return _Failure("not_found", False, f"HTTP 404: {message}")
        return _Failure("bad_request", False, f"HTTP {status}: {message}")
    if names & {"APITimeoutError", "TimeoutException", "TimeoutError", "AttemptTimeoutError",
                 "ServerTimeoutError"}:  # fmt: skip
        return _Failure("timeout", True, message)
    if names & {"APIConnectionError", "TransportError", "ConnectionError", "RemoteProtocolError",
                 "ClientConnectionError", "ClientPayloadError", "ServerDisconnectedError"}:  # fmt: skip
        return _Failure("connection_error", True, message)
    if names & {"JSONDecodeError", "APIResponseValidationError", "ValidationError",
                 "MalformedResponseError", "ContentTypeError"}:  # fmt: skip
        return _Failure("malformed_response", True, message)
    return _Failure("error", False, f"{type(exc).__name__}: {message}")
