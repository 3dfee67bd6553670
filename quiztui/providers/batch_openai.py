"""The OpenAI Batch API: upload a JSONL file, create a batch, poll it, download its files.

Wire format: ``POST /files`` (multipart, ``purpose=batch``) with one line per request,
``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; ``POST /batches``
with ``input_file_id``, ``endpoint`` and ``completion_window: "24h"``; ``GET /batches/{id}``
until ``status`` is terminal (completed, failed, expired, cancelled); then
``GET /files/{id}/content`` of ``output_file_id`` (lines with ``response.body`` a chat
completion) and ``error_file_id`` (lines with ``error`` or a non-200 ``response``).

A lost reply to a create is looked up before anything is sent again (see
:mod:`quiztui.providers.batch`): the uploaded file is named after the submission's marker and found
in ``GET /files?purpose=batch&order=desc``; the batch carries the marker in its ``metadata`` and is
found in ``GET /batches`` (newest first).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Any

from quiztui.core.provider_batch import BatchItemResult, BatchPoll
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.batch import (
    CLOCK_SLACK,
    HTTPBatchBackend,
    as_dict,
    as_int,
    jsonl_objects,
    submission_marker,
)

log = logging.getLogger(__name__)

ENDPOINT = "/v1/chat/completions"
METADATA_KEY = "quiztui_submission"  # the batch metadata entry holding the submission marker
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


class OpenAIBatchBackend(HTTPBatchBackend):
    api = "openai"

    def body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": r, "content": c} for r, c in request.messages],
            "temperature": request.temperature,
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    async def submit(self, items: Sequence[tuple[str, dict[str, Any]]]) -> BatchPoll:
        marker = submission_marker([cid for cid, _ in items])
        lines = [
            json.dumps({"custom_id": cid, "method": "POST", "url": ENDPOINT, "body": body})
            for cid, body in items
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        filename = f"{marker}.jsonl"
        since = time.time() - CLOCK_SLACK
        uploaded = await self._http.json(
            "POST",
            "/files",
            data={"purpose": "batch"},
            files={"file": (filename, data, "application/jsonl")},
            recover=lambda _: self._find_file(filename, len(data), since),
        )
        file_id = uploaded.get("id")
        if not isinstance(file_id, str):
            raise RequestFailed("malformed reply to POST /files: no file id", retryable=False)
        created = await self._http.json(
            "POST",
            "/batches",
            json={
                "input_file_id": file_id,
                "endpoint": ENDPOINT,
                "completion_window": "24h",
                "metadata": {METADATA_KEY: marker},
            },
            recover=lambda _: self._find_batch(marker, since, len(items)),
        )
        if created.get("id") not in self._claimed:
            self._claim(created, "created", len(items))
        return _parse_batch(created)

    async def _find_file(self, filename: str, size: int, since: float) -> dict[str, Any] | None:
        """The file a lost upload reply stood for: this name and size, uploaded since ``since``."""
        log.info("openai: the reply to POST /files was lost; looking for the upload")
        params = {"purpose": "batch", "order": "desc", "limit": 100}
        async for page in self._http.pages("/files", params, "after"):
            for item in page:
                fresh = as_int(item.get("created_at")) >= since
                if fresh and item.get("filename") == filename and as_int(item.get("bytes")) == size:
                    if item.get("id") not in self._claimed:
                        self._claimed.add(str(item.get("id")))
                        log.info("openai: file %s was uploaded; not uploading again", item["id"])
                        return item
            if not page or as_int(page[-1].get("created_at")) < since:
                break
        log.info("openai: no such upload found; uploading again")
        return None

    async def _find_batch(self, marker: str, since: float, count: int) -> dict[str, Any] | None:
        """The batch a lost create reply stood for: the one carrying ``marker`` in its metadata."""
        log.info("openai: the reply to POST /batches was lost; looking for the batch first")
        async for page in self._http.pages("/batches", {"limit": 100}, "after"):
            for item in page:
                fresh = as_int(item.get("created_at")) >= since
                ours = as_dict(item.get("metadata")).get(METADATA_KEY) == marker
                if fresh and ours and item.get("id") not in self._claimed:
                    return self._claim(item, "found: created by the lost request, not again", count)
            if not page or as_int(page[-1].get("created_at")) < since:
                break
        log.info("openai: no batch of this submission found; creating it")
        return None

    async def poll(self, batch_id: str) -> BatchPoll:
        return _parse_batch(await self._http.json("GET", f"/batches/{batch_id}"))

    async def results(self, poll: BatchPoll) -> list[BatchItemResult]:
        out: list[BatchItemResult] = []
        for file_id in poll.handle:
            if file_id:
                response = await self._http.request("GET", f"/files/{file_id}/content")
                out += [_parse_line(obj) for obj in jsonl_objects(response.text)]
        return [r for r in out if r.custom_id]


def _parse_batch(data: dict[str, Any]) -> BatchPoll:
    status = str(data.get("status") or "unknown")
    counts = as_dict(data.get("request_counts"))
    error = None
    if status == "failed":
        errors = as_dict(data.get("errors")).get("data") or []
        messages = [str(e.get("message")) for e in errors if isinstance(e, dict)]
        error = "batch failed: " + ("; ".join(messages[:3]) or "no reason given")
    elif status in ("expired", "cancelled"):
        error = f"batch {status} before this request was processed"
    return BatchPoll(
        batch_id=str(data.get("id") or ""),
        status=status,
        ended=status in _ENDED,
        total=as_int(counts.get("total")),
        completed=as_int(counts.get("completed")),
        failed=as_int(counts.get("failed")),
        error=error,
        handle=(data.get("output_file_id"), data.get("error_file_id")),
    )


def _parse_line(obj: dict[str, Any]) -> BatchItemResult:
    """One line of the output or error file."""
    cid = str(obj.get("custom_id") or "")
    error = as_dict(obj.get("error"))
    if error:
        code = error.get("code")
        message = str(error.get("message") or "no message")
        return BatchItemResult(cid, error=f"{message} ({code})" if code else message)
    if not isinstance(obj.get("response"), dict):
        return BatchItemResult(cid, error="no response in the batch output")
    response = as_dict(obj.get("response"))
    body = as_dict(response.get("body"))
    status = as_int(response.get("status_code"))
    if status != 200:
        detail = as_dict(body.get("error")).get("message")
        return BatchItemResult(cid, error=f"HTTP {status}" + (f": {detail}" if detail else ""))
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return BatchItemResult(cid, error="malformed chat completion in the batch output")
    usage = as_dict(body.get("usage"))
    return BatchItemResult(
        cid,
        text=str(text),
        tokens_in=as_int(usage.get("prompt_tokens")),
        tokens_out=as_int(usage.get("completion_tokens")),
        finish_reason=choice.get("finish_reason"),
    )
