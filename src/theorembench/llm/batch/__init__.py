"""The providers' batch APIs, at about half the price, for calls whose answer may take hours (``--batch``).

Under ``Spending(batch=True)`` (see :mod:`theorembench.llm.spending`) :meth:`LLM.generate` hands each call
of a model that can batch to a :class:`~theorembench.llm.batch.batcher.Batcher` instead of sending it: the
batcher gathers the calls (see :mod:`settings` for when a batch goes out), submits them as one provider
batch, polls it and answers every call from its results, which the client records in the usage ledger
like any answer, at the batch price (``RawOutput.price_factor``). The cache, single flight, retries and the
cost cap work as for any call; a batched call holds no connection slot while it waits.

A killed run never pays twice: the batch and its requests' cache keys are in the store (``llm_batches``,
:mod:`theorembench.store.batches`) before the batch is polled, and a later run's request with the same key
waits for that batch and takes its answer there, with ``--batch`` or without it.

Providers (``route.BATCH_PROVIDERS``):

* ``openai/...`` and ``openai-api/...``: OpenAI's Batch API (``/files`` and ``/batches``,
  :mod:`openai_batch`); an OpenAI-compatible server without those endpoints fails the call with HTTP 404;
* ``anthropic/...``: Anthropic's Message Batches (:mod:`anthropic_batch`); calls with a JSON schema are
  sent as usual;
* Google's Gemini batch mode (``batches.create`` with inline requests or a JSONL file of
  ``GenerateContentRequest`` lines, polled until ``JOB_STATE_SUCCEEDED``) is not spoken yet: a third
  class with the :class:`~theorembench.llm.batch.wire.BatchAPI` methods (``line``, ``submit``, ``find``,
  ``poll``, ``results``) and a body builder in :func:`route.request_body` add it. Every other provider's
  calls are sent as usual, at the usual price.

Calls made through :meth:`LLM.exchange` (agent conversations with tools) are sent as usual.
"""

from theorembench.llm.batch.route import BATCH_PROVIDERS, batch_route
from theorembench.llm.batch.settings import BatchSettings

__all__ = ["BATCH_PROVIDERS", "BatchSettings", "batch_route"]
