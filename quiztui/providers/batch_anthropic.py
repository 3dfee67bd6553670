"""Anthropic Message Batches: create, poll ``processing_status``, read the JSONL at ``results_url``.

Wire format (paths under the API root, as the Messages provider's ``/v1/messages``):
``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params"}]}`` where ``params``
is a Messages API body (``model``, ``max_tokens``, ``messages``, optional ``system``);
``GET /v1/messages/batches/{id}`` until ``processing_status`` is "ended"; then ``GET results_url``,
one line per request: ``{"custom_id", "result": {"type": "succeeded", "message": {...}}}`` or a
``type`` of "errored" (with ``error.error.message``), "canceled" or "expired". Headers:
``x-api-key`` and ``anthropic-version``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quiztui.core.provider_batch import BatchItemResult, BatchPoll
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.batch import HTTPBatchBackend, as_dict, as_int, jsonl_objects

API_VERSION = "2023-06-01"
PATH = "/v1/messages/batches"  # under the API root, as the Messages provider uses it
DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; used when the judge config sets none
_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


class AnthropicBatchBackend(HTTPBatchBackend):
    api = "anthropic"

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
        return _parse_batch(await self._http.json("POST", PATH, json={"requests": requests}))

    async def poll(self, batch_id: str) -> BatchPoll:
        return _parse_batch(await self._http.json("GET", f"{PATH}/{batch_id}"))

    async def results(self, poll: BatchPoll) -> list[BatchItemResult]:
        url = poll.handle[0] if poll.handle else None
        if not url:
            raise RequestFailed(f"batch {poll.batch_id} ended without a results_url")
        response = await self._http.request("GET", url)
        return [r for r in map(_parse_line, jsonl_objects(response.text)) if r.custom_id]


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
