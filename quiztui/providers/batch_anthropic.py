"""Anthropic Message Batches: create, poll ``processing_status``, read the JSONL at ``results_url``.

Wire format (paths under the API root, as the Messages provider's ``/v1/messages``):
``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params"}]}`` where ``params``
is a Messages API body (``model``, ``max_tokens``, ``messages``, optional ``system``);
``GET /v1/messages/batches/{id}`` until ``processing_status`` is "ended"; then ``GET results_url``,
one line per request: ``{"custom_id", "result": {"type": "succeeded", "message": {...}}}`` or a
``type`` of "errored" (with ``error.error.message``), "canceled" or "expired". Headers:
``x-api-key`` and ``anthropic-version``. Errors are retried as the Messages provider retries them
(529 too; the ``anthropic-ratelimit-*-reset`` times stand in for a missing ``retry-after``).

A lost reply to a create is looked up before anything is sent again (see
:mod:`quiztui.providers.batch`). A Message Batch takes no metadata and no id of the caller's, so
the lookup lists ``GET /v1/messages/batches`` (newest first) and takes a batch created since the
first attempt with as many requests as were sent, nearest in time to it, that this backend does
not already own. Should that be another client's batch, its results carry none of these
content-addressed ``custom_id`` s, so every request comes back "no result" and is asked again —
never answered with another request's reply.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Sequence
from typing import Any

import httpx

from quiztui.core.provider_batch import BatchItemResult, BatchPoll
from quiztui.providers.anthropic import ratelimit_reset_delay
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.batch import (
    CLOCK_SLACK,
    HTTPBatchBackend,
    as_dict,
    as_int,
    jsonl_objects,
)
from quiztui.providers.retry import RETRYABLE_STATUS

log = logging.getLogger(__name__)

API_VERSION = "2023-06-01"
PATH = "/v1/messages/batches"  # under the API root, as the Messages provider uses it
DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; used when the judge config sets none
_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


class AnthropicBatchBackend(HTTPBatchBackend):
    api = "anthropic"
    retryable_status = RETRYABLE_STATUS | {529}
    rate_limit_status = frozenset({429, 529})

    def _retry_hint(self, response: httpx.Response) -> float | None:
        hint = super()._retry_hint(response)
        if hint is None:
            hint = ratelimit_reset_delay(response.headers, dt.datetime.now(dt.UTC))
        return hint

    def _headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def body(self, request: ChatRequest) -> dict[str, Any]:
        system = "\n\n".join(c for r, c in request.messages if r == "system")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": [{"role": r, "content": c} for r, c in request.messages if r != "system"],
            "temperature": request.temperature,
        }
        if system:
            body["system"] = system
        return body

    async def submit(self, items: Sequence[tuple[str, dict[str, Any]]]) -> BatchPoll:
        requests = [{"custom_id": cid, "params": body} for cid, body in items]
        started = time.time()
        created = await self._http.json(
            "POST",
            PATH,
            json={"requests": requests},
            recover=lambda _: self._find_batch(len(items), started),
        )
        if created.get("id") not in self._claimed:
            self._claim(created, "created", len(items))
        return _parse_batch(created)

    async def _find_batch(self, count: int, started: float) -> dict[str, Any] | None:
        """The batch a lost create reply stood for (see the module docstring), or None."""
        log.info("anthropic: the reply to POST %s was lost; looking for the batch first", PATH)
        since = started - CLOCK_SLACK
        candidates: list[tuple[float, dict[str, Any]]] = []
        async for page in self._http.pages(PATH, {"limit": 100}, "after_id"):
            for item in page:
                created = _timestamp(item.get("created_at"))
                size = sum(as_int(n) for n in as_dict(item.get("request_counts")).values())
                if created >= since and size == count and item.get("id") not in self._claimed:
                    candidates.append((abs(created - started), item))
            if not page or _timestamp(page[-1].get("created_at")) < since:
                break
        if not candidates:
            log.info("anthropic: no batch of %d requests created since; creating it", count)
            return None
        if len(candidates) > 1:
            log.warning(
                "anthropic: %d batches of %d requests were created meanwhile; taking the nearest"
                " in time (its results are matched by custom_id)",
                len(candidates),
                count,
            )
        found = min(candidates, key=lambda c: c[0])[1]
        return self._claim(found, "found: created by the lost request, not again", count)

    async def poll(self, batch_id: str) -> BatchPoll:
        return _parse_batch(await self._http.json("GET", f"{PATH}/{batch_id}"))

    async def results(self, poll: BatchPoll) -> list[BatchItemResult]:
        url = poll.handle[0] if poll.handle else None
        if not url:
            raise RequestFailed(f"batch {poll.batch_id} ended without a results_url")
        response = await self._http.request("GET", url)
        return [r for r in map(_parse_line, jsonl_objects(response.text)) if r.custom_id]


def _timestamp(value: Any) -> float:
    """Seconds since the epoch of an RFC 3339 time (0 when it does not parse)."""
    try:
        when = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()


def _parse_batch(data: dict[str, Any]) -> BatchPoll:
    status = str(data.get("processing_status") or "unknown")
    counts = as_dict(data.get("request_counts"))
    succeeded = as_int(counts.get("succeeded"))
    failed = sum(as_int(counts.get(k)) for k in ("errored", "canceled", "expired"))
    return BatchPoll(
        batch_id=str(data.get("id") or ""),
        status=status,
        ended=status == "ended",
        total=succeeded + failed + as_int(counts.get("processing")),
        completed=succeeded,
        failed=failed,
        handle=(data.get("results_url"),),
    )


def _parse_line(obj: dict[str, Any]) -> BatchItemResult:
    cid = str(obj.get("custom_id") or "")
    result = as_dict(obj.get("result"))
    kind = result.get("type")
    if kind == "succeeded":
        message = as_dict(result.get("message"))
        blocks = message.get("content")
        text = "".join(
            str(b.get("text") or "")
            for b in (blocks if isinstance(blocks, list) else [])
            if isinstance(b, dict) and b.get("type") == "text"
        )
        usage = as_dict(message.get("usage"))
        stop = message.get("stop_reason")
        return BatchItemResult(
            cid,
            text=text,
            tokens_in=as_int(usage.get("input_tokens")),
            tokens_out=as_int(usage.get("output_tokens")),
            finish_reason=_STOP.get(stop, stop) if isinstance(stop, str) else None,
        )
    if kind == "errored":
        outer = as_dict(result.get("error"))
        inner = as_dict(outer.get("error")) or outer
        reason = inner.get("message") or "no message"
        return BatchItemResult(cid, error=f"{reason} ({inner.get('type') or 'error'})")
    if kind == "canceled":
        return BatchItemResult(cid, error="request canceled before it was processed")
    if kind == "expired":
        return BatchItemResult(cid, error="request expired before the batch processed it")
    return BatchItemResult(cid, error=f"unknown result type {kind!r}")
