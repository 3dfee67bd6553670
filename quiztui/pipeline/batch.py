"""Batch mode: a :class:`Provider` that sends a vet run through a provider's batch API.

:class:`BatchProvider` keeps :mod:`quiztui.pipeline.vet` unchanged: the run calls ``complete()``
as it would online (with its concurrency set high enough that every first-pass request is asked at
once), and each call is *parked*. When no new request has arrived for ``gather_seconds`` (or
``max_requests`` are parked) the parked requests go to the provider as one batch; the batch is
polled every ``poll_seconds``; when it ends, each parked call gets its reply text through
``on_text`` — so verdicts are parsed, stored, cached and scored by the same code as online — or
raises ``RequestFailed(retryable=False)`` for a request that failed in the batch, which the run
re-asks up to ``vet.max_reasks`` and then marks unjudged with the reason.

Restart safety. Each request's ``custom_id`` is content-addressed
(:func:`quiztui.core.provider_batch.custom_id`). A batch is written to the store (schema v7) the
moment the provider accepts it; results are written when it is collected. A resumed run re-issues
its unjudged requests in the same order with the same batch size, computes the same ids, and finds
them in the stored batch — collected, or still pending at the provider — instead of submitting
them again.

The hook into the run: :meth:`VetRun.events` calls ``provider.attach_run(store, run_id, emit)``
when the provider has one (a two-line ``getattr`` in vet.py); ``emit`` puts
:class:`ProviderBatchStatus` events into the run's own event stream, so the TUI and the headless
progress see submit, every poll and the collection.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from quiztui.config import Config
from quiztui.core.provider_batch import BatchItemResult, BatchPoll, custom_id, request_fingerprint
from quiztui.errors import ConfigError, ProviderError
from quiztui.pipeline.events import ProviderBatchStatus, VetEvent
from quiztui.providers.base import (
    ChatRequest,
    ChatResult,
    OnLogprobs,
    OnRetry,
    OnText,
    RequestFailed,
    Usage,
)
from quiztui.providers.batch import BatchBackend
from quiztui.store import Store
from quiztui.store.provider_batches import ProviderBatchRecord

BATCH_PENDING = "batch-pending"  # the run's status while a batch of it waits at the provider


@dataclass(frozen=True, slots=True)
class BatchSettings:
    poll_seconds: float = 30.0
    max_wait: float = 86400.0  # stop waiting after this long (0: submit, then stop); resume later
    gather_seconds: float = 0.5  # quiet time after the last parked request before submitting
    max_requests: int = 10_000  # submit at once when this many requests are parked


class BatchStillPending(ProviderError):
    """The batch did not end within ``max_wait``; it stays at the provider for ``--resume``."""

    exit_code = 3


@dataclass(slots=True)
class _Parked:
    custom_id: str
    fingerprint: str
    occurrence: int
    body: dict[str, Any]


class BatchProvider:
    """A :class:`~quiztui.providers.base.Provider` whose requests go out as provider batches."""

    simulated = False

    def __init__(
        self,
        backend: BatchBackend,
        *,
        name: str,
        settings: BatchSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backend = backend
        self.name = name  # the online provider's name: the judge (and its cache) is the same
        self.model = backend.model
        self.base_url = backend.base_url
        self.batch_api = backend.api  # recorded in the run's params (batch price)
        self.settings = settings or BatchSettings()
        self.clock = clock
        self.usage = Usage()
        self._store: Store | None = None
        self._run_id = 0
        self._emit: Callable[[VetEvent], None] | None = None
        self._reset()

    def _reset(self) -> None:
        self._issued: dict[str, int] = {}  # fingerprint → times asked in this run
        self._known: dict[str, BatchItemResult] = {}  # custom_id → collected result
        self._stored_pending: dict[str, ProviderBatchRecord] = {}  # custom_id → its stored batch
        self._waiters: dict[str, list[asyncio.Future[BatchItemResult]]] = {}
        self._parked: list[_Parked] = []
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._collectors: dict[int, asyncio.Task[None]] = {}  # stored row id → its collector

    @property
    def label(self) -> str:
        return f"{self.model} @ {self.base_url} ({self.batch_api} batch API)"

    # the hook VetRun calls ------------------------------------------------------------------

    def attach_run(self, store: Store, run_id: int, emit: Callable[[VetEvent], None]) -> None:
        """Bind to a run: load its stored batches (collected results, pending ids) and the sink
        for :class:`ProviderBatchStatus` events."""
        if any(not f.done() for fs in self._waiters.values() for f in fs):
            # complete() cannot tell two runs' requests apart, so one run at a time.
            raise ProviderError(
                f"run {self._run_id} is still waiting for its provider batch; batch mode judges"
                " one run at a time (wait for it, or cancel it first)"
            )
        self._cancel_tasks()
        self._reset()
        self._store, self._run_id, self._emit = store, run_id, emit
        for row in store.provider_batches.for_run(run_id):
            if row.pending:
                for cid in store.provider_batches.custom_ids(row.id):
                    self._stored_pending[cid] = row
            else:
                self._known.update((r.custom_id, r) for r in store.provider_batches.results(row.id))

    # the Provider interface -----------------------------------------------------------------

    async def complete(
        self,
        request: ChatRequest,
        *,
        on_text: OnText | None = None,
        on_retry: OnRetry | None = None,
        on_logprobs: OnLogprobs | None = None,
    ) -> ChatResult:
        """Park the request until its batch is collected; then hand its reply to ``on_text``.

        Token logprobs are not asked for in batch mode (``on_logprobs`` is never called).
        """
        del on_retry, on_logprobs  # retries happen per HTTP call inside the backend
        body = self.backend.body(request)
        fingerprint = request_fingerprint(self.model, body)
        occurrence = self._issued.get(fingerprint, 0) + 1
        self._issued[fingerprint] = occurrence
        cid = custom_id(fingerprint, occurrence)
        result = self._known.get(cid)
        if result is None:
            future: asyncio.Future[BatchItemResult] = asyncio.get_running_loop().create_future()
            self._waiters.setdefault(cid, []).append(future)
            row = self._stored_pending.get(cid)
            if row is not None:
                self._collect_stored(row)
            else:
                self._park(_Parked(cid, fingerprint, occurrence, body))
            result = await future
        self.usage.requests += 1
        self.usage.tokens_in += result.tokens_in
        self.usage.tokens_out += result.tokens_out
        if result.error is not None:
            self.usage.errors["batch"] = self.usage.errors.get("batch", 0) + 1
            raise RequestFailed(f"batch request failed: {result.error}", retryable=False)
        if on_text is not None and result.text:
            on_text(result.text)
        return ChatResult(
            text=result.text,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            finish_reason=result.finish_reason,
        )

    async def aclose(self) -> None:
        await asyncio.gather(*self._cancel_tasks(), return_exceptions=True)
        await self.backend.aclose()

    # parking and submitting -----------------------------------------------------------------

    def _park(self, item: _Parked) -> None:
        self._parked.append(item)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if len(self._parked) >= self.settings.max_requests:
            self._flush()
        else:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.settings.gather_seconds, self._flush)

    def _flush(self) -> None:
        self._timer = None
        # A parked call whose run went away (cancelled) is not worth paying for.
        items = [p for p in self._parked if self._wanted(p.custom_id)]
        self._parked = []
        if items:
            self._spawn(self._submit_and_collect(items), [p.custom_id for p in items])

    def _wanted(self, cid: str) -> bool:
        return any(not f.done() for f in self._waiters.get(cid, ()))

    async def _submit_and_collect(self, items: list[_Parked]) -> None:
        ids = [p.custom_id for p in items]
        try:
            poll = await self.backend.submit([(p.custom_id, p.body) for p in items])
        except RequestFailed as exc:
            # Nothing reached the provider: the ids are free for the re-asks to use again.
            for p in items:
                if self._issued.get(p.fingerprint) == p.occurrence:
                    self._issued[p.fingerprint] = p.occurrence - 1
            self._fail(ids, f"batch submission failed: {exc}", exc.status)
            return
        row = None
        if self._store is not None:
            row = self._store.provider_batches.add(
                self._run_id, self.batch_api, poll.batch_id, poll.status, ids
            )
            self._store.set_status(self._run_id, BATCH_PENDING)
        self._status(poll, len(ids))
        await self._collect(poll, ids, row)

    def _collect_stored(self, row: ProviderBatchRecord) -> None:
        """Start collecting a batch an earlier process submitted (once per batch)."""
        if row.id in self._collectors:
            return
        assert self._store is not None
        ids = self._store.provider_batches.custom_ids(row.id)
        self._store.set_status(self._run_id, BATCH_PENDING)
        self._collectors[row.id] = self._spawn(self._collect(None, ids, row), ids)

    async def _collect(
        self, poll: BatchPoll | None, ids: Sequence[str], row: ProviderBatchRecord | None
    ) -> None:
        """Poll until the batch ends (or ``max_wait`` passes), then resolve every waiting call."""
        started = self.clock()
        batch_id = poll.batch_id if poll is not None else row.batch_id if row else ""
        resumed = poll is None
        while poll is None or not poll.ended:
            if poll is not None:
                waited = self.clock() - started
                if waited >= self.settings.max_wait:
                    self._still_pending(batch_id, ids, waited)
                    return
                await asyncio.sleep(
                    min(self.settings.poll_seconds, self.settings.max_wait - waited)
                )
            try:
                poll = await self.backend.poll(batch_id)
            except RequestFailed as exc:
                if exc.retryable:  # the network or the provider had a bad moment: poll again
                    poll = poll or BatchPoll(batch_id, "unreachable", False, len(ids), 0, 0)
                    continue
                self._fail(ids, f"polling batch {batch_id} failed: {exc}", exc.status)
                return
            if row is not None and self._store is not None:
                self._store.provider_batches.update(
                    row.id, poll.status, poll.completed, poll.failed
                )
            self._status(poll, len(ids), resumed)
        try:
            results = await self.backend.results(poll)
        except RequestFailed as exc:
            self._fail(
                ids, f"downloading the results of batch {batch_id} failed: {exc}", exc.status
            )
            return
        self._resolve(poll, ids, results, row, resumed)

    def _resolve(
        self,
        poll: BatchPoll,
        ids: Sequence[str],
        results: list[BatchItemResult],
        row: ProviderBatchRecord | None,
        resumed: bool,
    ) -> None:
        wanted = set(ids)
        by_id = {r.custom_id: r for r in results if r.custom_id in wanted}
        missing = poll.error or "no result for this request in the batch output"
        full = [by_id.get(cid) or BatchItemResult(cid, error=missing) for cid in ids]
        if row is not None and self._store is not None:
            self._store.provider_batches.record_results(row.id, full)
            waiting = any(b.pending for b in self._store.provider_batches.for_run(self._run_id))
            if not waiting and self._store.get_run(self._run_id).status == BATCH_PENDING:
                self._store.set_status(self._run_id, "running")  # not a run cancelled meanwhile
        failed = sum(r.error is not None for r in full)
        self._emit_event(
            ProviderBatchStatus(
                poll.batch_id, "collected", len(full) - failed, failed, len(full),
                self.batch_api, resumed,
            )
        )  # fmt: skip
        for result in full:
            self._known[result.custom_id] = result
            for future in self._waiters.pop(result.custom_id, ()):
                if not future.done():
                    future.set_result(result)

    def _fail(self, ids: Sequence[str], why: str, status: int | None) -> None:
        for cid in ids:
            for future in self._waiters.pop(cid, ()):
                if not future.done():
                    future.set_exception(RequestFailed(why, status=status, retryable=False))

    def _still_pending(self, batch_id: str, ids: Sequence[str], waited: float) -> None:
        message = (
            f"batch {batch_id} is still running at the provider after {waited:.0f} s"
            f" (batch.max_wait); run {self._run_id} keeps it: collect it later with"
            f" `quiztui vet --resume {self._run_id} --batch-api --no-tui`"
        )
        for cid in ids:
            for future in self._waiters.pop(cid, ()):
                if not future.done():
                    future.set_exception(BatchStillPending(message))

    # helpers --------------------------------------------------------------------------------

    def _status(self, poll: BatchPoll, total: int, resumed: bool = False) -> None:
        self._emit_event(
            ProviderBatchStatus(
                poll.batch_id, poll.status, poll.completed, poll.failed, poll.total or total,
                self.batch_api, resumed,
            )
        )  # fmt: skip

    def _emit_event(self, event: ProviderBatchStatus) -> None:
        if self._emit is not None:
            self._emit(event)

    def _spawn(self, coro: Coroutine[Any, Any, None], ids: Sequence[str]) -> asyncio.Task[None]:
        """Run a submit/collect task; should it die of a bug or a store error, its waiting calls
        fail with the reason instead of waiting for ever."""

        async def guarded() -> None:
            try:
                await coro
            except Exception as exc:  # noqa: BLE001 - handed to the waiting calls, not lost
                self._fail(ids, f"batch mode failed: {type(exc).__name__}: {exc}", None)

        task = asyncio.get_running_loop().create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _cancel_tasks(self) -> list[asyncio.Task[None]]:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        return tasks


def build_batch_provider(config: Config) -> BatchProvider:
    """The batch provider for the configured judge: openai-compat → OpenAI Batch, anthropic →
    Message Batches. Its name, model and base URL are the online judge's, so the run's judge key,
    its cache entries and its judge profile are the same as online."""
    from quiztui.providers.batch_anthropic import AnthropicBatchBackend
    from quiztui.providers.batch_openai import OpenAIBatchBackend
    from quiztui.providers.factory import DEFAULT_BASE_URL, NATIVE_URLS
    from quiztui.providers.retry import RetryPolicy

    judge = config.judge
    provider = "openai-compat" if judge.provider == "auto" and judge.model else judge.provider
    if provider not in ("openai-compat", "anthropic"):
        what = "no judge.model is set" if provider == "auto" else f"judge.provider is {provider}"
        raise ConfigError(
            "batch mode needs an openai-compat (OpenAI Batch API) or anthropic (Message Batches)"
            f" judge with judge.model set; {what}"
        )
    if not judge.model:
        raise ConfigError(f"judge.model: set a model name for the {provider} batch API")
    base_url = judge.base_url
    if provider == "anthropic" and base_url in ("", DEFAULT_BASE_URL):
        base_url = NATIVE_URLS["anthropic"]  # the OpenAI-compatible default means "not set"
    key_field = "anthropic_key_env" if provider == "anthropic" else "api_key_env"
    key_env = str(getattr(judge, key_field))
    key = os.environ.get(key_env) if key_env else None
    local = base_url.startswith(("http://localhost", "http://127.0.0.1", "http://[::1]"))
    if not local and not key:
        raise ConfigError(
            f"judge.{key_field}: environment variable {key_env} is not set (needed for {base_url})"
        )
    backend_type = AnthropicBatchBackend if provider == "anthropic" else OpenAIBatchBackend
    backend = backend_type(
        base_url=base_url,
        model=judge.model,
        api_key=key,
        timeout=judge.timeout,
        retry=RetryPolicy(max_retries=judge.max_retries),
    )
    b = config.batch
    settings = BatchSettings(b.poll_seconds, b.max_wait, b.gather_seconds, b.max_requests)
    return BatchProvider(backend, name=provider, settings=settings)


__all__ = [
    "BATCH_PENDING",
    "BatchProvider",
    "BatchSettings",
    "BatchStillPending",
    "build_batch_provider",
]
