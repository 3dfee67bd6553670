"""The batch endpoints of the fake servers: OpenAI Batch and Anthropic Message Batches.

Enough of both wire formats to test the whole batch flow over real HTTP. Each batch is answered by
the server's own chat oracle (``FakeOpenAI._content``), so a batch run gets exactly the verdicts an
online run gets. Status moves on with every poll, so polling is exercised: OpenAI
``validating`` → ``in_progress`` (``polls`` times) → ``completed``; Anthropic ``in_progress``
(``polls`` times) → ``ended``.

OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``. Anthropic: ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``.

``fail`` (an attribute: ``server.batches.fail = lambda custom_id, prompt: ...``) makes chosen
requests fail: it returns None for a request that succeeds, ``"expired"`` for one the batch never
got to, or any other text as the error message of a failed request (OpenAI: a 400 line in the error
file; Anthropic: an ``errored`` result). ``creates`` and ``uploads`` count what was submitted.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from quiztui.core.assertions import parse_rendered_batch

if TYPE_CHECKING:
    from quiztui.testing.fake_openai import FakeOpenAI

OPENAI_ENDPOINT = "/v1/chat/completions"
EXPIRED = "expired"
_JSONL = "application/jsonl"
_JSON = "application/json"
_EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."

Response = tuple[int, bytes, str]  # status, body, content type


@dataclass
class _Batch:
    api: str
    id: str
    created_at: float
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, chat body / Messages params)
    polls: int = 0
    status: str = ""
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[str] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # custom_id → result line
    counts: Counter[str] = field(default_factory=Counter)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class FakeBatches:
    """Batch state and routes, attached to a :class:`FakeOpenAI` as ``server.batches``."""

    def __init__(self, server: FakeOpenAI, *, polls: int = 2) -> None:
        self.server = server
        self.polls = polls  # polls a batch answers "in progress" before it ends
        self.fail: Callable[[str, str], str | None] | None = None
        self.creates: Counter[str] = Counter()  # api → batches created
        self.uploads = 0
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, _Batch] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @staticmethod
    def openai_path(path: str) -> bool:
        """An OpenAI Batch API path (``/v1/files…``, ``/v1/batches…``)."""
        return path.startswith(("/v1/files", "/v1/batches"))

    def handle(self, method: str, path: str, body: bytes) -> Response:
        """Answer one batch-API request of either API (runs on the server's thread)."""
        with self._lock:
            if path.startswith("/v1/messages/batches"):
                return self._anthropic(method, path, body)
            return self._openai(method, path, body)

    # -- OpenAI ----------------------------------------------------------------------------

    def _openai(self, method: str, path: str, body: bytes) -> Response:
        parts = path.strip("/").split("/")  # v1 files|batches [id] [content]
        if parts[1] == "files" and method == "POST" and len(parts) == 2:
            return self._upload(body)
        if parts[1] == "files" and method == "GET" and len(parts) == 4 and parts[3] == "content":
            data = self._files.get(parts[2])
            if data is None:
                return _openai_error(404, f"No such File object: {parts[2]}")
            return 200, data, _JSONL
        if parts[1] == "batches" and method == "POST" and len(parts) == 2:
            return self._openai_create(body)
        if parts[1] == "batches" and method == "GET" and len(parts) == 3:
            batch = self._batches.get(parts[2])
            if batch is None or batch.api != "openai":
                return _openai_error(404, f"No batch found with id '{parts[2]}'.")
            self._advance(batch)
            return 200, _dump(self._openai_object(batch)), _JSON
        return _openai_error(404, f"Invalid URL ({method} {path})")

    def _upload(self, body: bytes) -> Response:
        fields = _multipart(body)
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return _openai_error(400, "Uploads need purpose=batch and a file part.")
        file_id = f"file-fake{next(self._ids):06d}"
        self._files[file_id] = fields["file"]
        self.uploads += 1
        obj = {"id": file_id, "object": "file", "bytes": len(fields["file"])}
        obj |= {"created_at": int(time.time()), "filename": "batch.jsonl", "purpose": "batch"}
        return 200, _dump(obj), _JSON

    def _openai_create(self, body: bytes) -> Response:
        payload = _json(body)
        file_id = payload.get("input_file_id")
        if payload.get("endpoint") != OPENAI_ENDPOINT or payload.get("completion_window") != "24h":
            return _openai_error(400, "endpoint must be /v1/chat/completions, window 24h.")
        if file_id not in self._files:
            return _openai_error(400, f"Invalid input_file_id: {file_id}")
        batch = _Batch("openai", f"batch_fake{next(self._ids):06d}", time.time(), [])
        batch.input_file_id, batch.status = file_id, "validating"
        seen: set[str] = set()
        for n, line in enumerate(self._files[file_id].decode().splitlines(), 1):
            try:
                obj = json.loads(line)
                cid, chat = obj["custom_id"], obj["body"]
                ok = obj["method"] == "POST" and obj["url"] == OPENAI_ENDPOINT
                ok = ok and isinstance(chat, dict) and bool(chat.get("messages"))
            except (ValueError, KeyError, TypeError):
                ok, cid, chat = False, None, None
            if not ok or cid in seen:
                batch.errors.append(f"line {n}: not a valid {OPENAI_ENDPOINT} request")
            else:
                seen.add(cid)
                batch.requests.append((cid, chat))
        self._batches[batch.id] = batch
        self.creates["openai"] += 1
        return 200, _dump(self._openai_object(batch)), _JSON

    def _openai_object(self, batch: _Batch) -> dict[str, Any]:
        total = len(batch.requests)
        done = sum(batch.counts.values())
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": OPENAI_ENDPOINT,
            "errors": {"object": "list", "data": [{"code": "invalid_request", "message": e}
                                                  for e in batch.errors]}
            if batch.errors
            else None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": int(batch.created_at),
            "request_counts": {
                "total": total,
                "completed": batch.counts["succeeded"],
                "failed": done - batch.counts["succeeded"],
            },
            "metadata": None,
        }  # fmt: skip

    # -- Anthropic -------------------------------------------------------------------------

    def _anthropic(self, method: str, path: str, body: bytes) -> Response:
        parts = path.strip("/").split("/")  # v1 messages batches [id] [results]
        if len(parts) == 3 and method == "POST":
            return self._anthropic_create(body)
        batch = self._batches.get(parts[3]) if len(parts) >= 4 else None
        if batch is None or batch.api != "anthropic":
            return _anthropic_error(404, "not_found_error", f"No batch at {path}")
        if len(parts) == 4 and method == "GET":
            self._advance(batch)
            return 200, _dump(self._anthropic_object(batch)), _JSON
        if len(parts) == 5 and parts[4] == "results" and method == "GET":
            if batch.status != "ended":
                return _anthropic_error(400, "invalid_request_error", "Batch has not ended.")
            lines = [batch.results[cid] for cid, _ in batch.requests]
            return 200, "".join(json.dumps(x) + "\n" for x in lines).encode(), _JSONL
        return _anthropic_error(404, "not_found_error", f"Invalid URL ({method} {path})")

    def _anthropic_create(self, body: bytes) -> Response:
        requests = _json(body).get("requests")
        if not isinstance(requests, list) or not requests:
            return _anthropic_error(400, "invalid_request_error", "requests: at least one")
        batch = _Batch("anthropic", f"msgbatch_fake{next(self._ids):06d}", time.time(), [])
        seen: set[str] = set()
        for n, item in enumerate(requests):
            cid = item.get("custom_id") if isinstance(item, dict) else None
            params = item.get("params") if isinstance(item, dict) else None
            valid = isinstance(cid, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cid) is not None
            if not valid or cid in seen or not isinstance(params, dict):
                message = f"requests.{n}: custom_id must be unique, 1-64 of [A-Za-z0-9_-]"
                return _anthropic_error(400, "invalid_request_error", message)
            if not isinstance(params.get("max_tokens"), int) or not params.get("messages"):
                message = f"requests.{n}.params: max_tokens and messages are required"
                return _anthropic_error(400, "invalid_request_error", message)
            seen.add(cid)  # type: ignore[arg-type]
            batch.requests.append((cid, params))  # type: ignore[arg-type]
        batch.status = "in_progress"
        self._batches[batch.id] = batch
        self.creates["anthropic"] += 1
        return 200, _dump(self._anthropic_object(batch)), _JSON

    def _anthropic_object(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.status == "ended"
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.created_at))
        counts = {k: batch.counts[k] for k in ("succeeded", "errored", "canceled", "expired")}
        counts["processing"] = len(batch.requests) - sum(counts.values())
        root = f"http://{self.server.host}:{self.server.port}"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": counts,
            "ended_at": created if ended else None,
            "created_at": created,
            "expires_at": created,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{root}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    # -- progress and answers --------------------------------------------------------------

    def _advance(self, batch: _Batch) -> None:
        """One poll: move the batch a step on; at the end, answer every request."""
        if batch.status in ("completed", "failed", "ended"):
            return
        batch.polls += 1
        if batch.api == "openai" and batch.status == "validating":
            batch.status = "failed" if batch.errors else "in_progress"
            return
        if batch.polls <= self.polls:
            return
        for cid, body in batch.requests:
            self._answer(batch, cid, body)
        if batch.api == "anthropic":
            batch.status = "ended"
            return
        ok: list[dict[str, Any]] = []
        bad: list[dict[str, Any]] = []
        for cid, _ in batch.requests:
            line = batch.results[cid]
            good = line["error"] is None and line["response"]["status_code"] == 200
            (ok if good else bad).append(line)
        batch.output_file_id = self._store_lines(ok)
        batch.error_file_id = self._store_lines(bad)
        batch.status = "completed"

    def _store_lines(self, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        file_id = f"file-fake{next(self._ids):06d}"
        self._files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return file_id

    def _answer(self, batch: _Batch, cid: str, body: dict[str, Any]) -> None:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        users = [m for m in messages if m.get("role") == "user"]
        prompt = _content_text(users[-1].get("content")) if users else ""
        contents = [_content_text(m.get("content")) for m in messages]
        contents.append(_content_text(body.get("system")))
        failure = self.fail(cid, prompt) if self.fail is not None else None
        model = str(body.get("model") or "")
        if failure is None:
            reply, _ = self.server._content(prompt, list(parse_rendered_batch(prompt)), None, 0)
            usage = (sum(map(_approx_tokens, contents)), _approx_tokens(reply))
            batch.counts["succeeded"] += 1
        else:
            reply, usage = "", (0, 0)
            batch.counts[EXPIRED if failure == EXPIRED else "errored"] += 1
        if batch.api == "anthropic":
            batch.results[cid] = _anthropic_line(cid, model, reply, usage, failure)
        else:
            batch.results[cid] = _openai_line(cid, model, reply, usage, failure)


def _openai_line(
    cid: str, model: str, reply: str, usage: tuple[int, int], failure: str | None
) -> dict[str, Any]:
    line: dict[str, Any] = {"id": f"batch_req_{cid}", "custom_id": cid, "error": None}
    if failure == EXPIRED:
        line["response"] = None
        line["error"] = {"code": "batch_expired", "message": _EXPIRED_MESSAGE}
    elif failure is not None:
        error = {"message": failure, "type": "invalid_request_error", "param": None, "code": None}
        line["response"] = {
            "status_code": 400,
            "request_id": f"req_{cid}",
            "body": {"error": error},
        }
    else:
        completion = {
            "id": f"chatcmpl-{cid}",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
            },
        }
        line["response"] = {"status_code": 200, "request_id": f"req_{cid}", "body": completion}
    return line


def _anthropic_line(
    cid: str, model: str, reply: str, usage: tuple[int, int], failure: str | None
) -> dict[str, Any]:
    if failure == EXPIRED:
        return {"custom_id": cid, "result": {"type": "expired"}}
    if failure is not None:
        error = {"type": "error", "error": {"type": "invalid_request_error", "message": failure}}
        return {"custom_id": cid, "result": {"type": "errored", "error": error}}
    message = {
        "id": f"msg_{cid}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": reply}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
    return {"custom_id": cid, "result": {"type": "succeeded", "message": message}}


def _approx_tokens(text: str) -> int:
    return -(-len(text) // 4)  # the chat endpoint's approximation: ceil(len / 4)


def _multipart(body: bytes) -> dict[str, bytes]:
    """The named parts of a multipart/form-data body (the boundary is its first line)."""
    first, _, _ = body.partition(b"\r\n")
    if not first.startswith(b"--"):
        return {}
    out = {}
    for part in body.split(first)[1:]:
        head, sep, data = part.partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]*)"', head)
        if sep and name:
            out[name.group(1).decode()] = data.removesuffix(b"\r\n")
    return out


def _json(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _dump(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _openai_error(status: int, message: str) -> Response:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return status, _dump({"error": error}), _JSON


def _anthropic_error(status: int, kind: str, message: str) -> Response:
    return status, _dump({"type": "error", "error": {"type": kind, "message": message}}), _JSON


__all__ = ["EXPIRED", "FakeBatches"]
