"""The batch endpoints of the fake servers: OpenAI Batch and Anthropic Message Batches.

Enough of both wire formats to test the whole batch flow over real HTTP. Each batch is answered by
the server's own chat oracle (``FakeOpenAI._content``), so a batch run gets exactly the verdicts an
online run gets. Status moves on with every poll, so polling is exercised: OpenAI
``validating`` → ``in_progress`` (``polls`` times) → ``completed``; Anthropic ``in_progress``
(``polls`` times) → ``ended``. Shapes of lines, pages and errors: :mod:`._batch_wire`.

OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files`` (``purpose``,
``order``, ``limit``, ``after``), ``POST /v1/batches`` (with optional ``metadata``),
``GET /v1/batches`` (newest first; ``limit``, ``after``), ``GET /v1/batches/{id}``,
``GET /v1/files/{id}/content``. Anthropic: ``POST /v1/messages/batches``,
``GET /v1/messages/batches`` (newest first; ``limit``, ``after_id``),
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``.

``fail`` (an attribute: ``server.batches.fail = lambda custom_id, prompt: ...``) makes chosen
requests fail: it returns None for a request that succeeds, ``"expired"`` for one the batch never
got to, or any other text as the error message of a failed request (OpenAI: a 400 line in the error
file; Anthropic: an ``errored`` result). ``creates`` and ``uploads`` count what was made.

:meth:`FakeBatches.lose` makes the reply to the next create (``"create"``: either API's
``POST …/batches``), upload (``"upload"``) or list (``"list"``: ``GET`` of batches or files) go
missing: ``"timeout"`` does the work and then answers nothing until
:attr:`FakeBatches.hold_seconds` pass (the client's read timeout fires first), ``"drop"`` does the
work and closes the connection, ``"500"`` answers 500 without doing anything (the client cannot
tell which happened).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qsl

from quiztui.core.assertions import parse_rendered_batch
from quiztui.testing._batch_wire import (
    EXPIRED,
    JSON,
    JSONL,
    anthropic_error,
    anthropic_line,
    approx_tokens,
    content_text,
    dump,
    json_object,
    list_page,
    multipart,
    openai_error,
    openai_line,
    valid_metadata,
)

if TYPE_CHECKING:
    from quiztui.testing.fake_openai import FakeOpenAI

OPENAI_ENDPOINT = "/v1/chat/completions"
LOSSES = ("timeout", "drop", "500")
_ROUTES = ("create", "upload", "list")
_LISTS = ("/v1/batches", "/v1/messages/batches", "/v1/files")


def _route(method: str, path: str) -> str:
    """Which of :data:`_ROUTES` a request is ("" for none)."""
    if method == "POST" and path in ("/v1/batches", "/v1/messages/batches"):
        return "create"
    if method == "POST" and path == "/v1/files":
        return "upload"
    return "list" if method == "GET" and path in _LISTS else ""


class BatchReply(NamedTuple):
    """What a batch endpoint answers; ``lost`` says how the reply goes missing, if it does."""

    status: int
    body: bytes
    content_type: str
    lost: str | None = None


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
    metadata: dict[str, str] | None = None
    errors: list[str] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # custom_id → result line
    counts: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True, slots=True)
class _File:
    id: str
    data: bytes
    filename: str
    purpose: str
    created_at: float

    def object(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": int(self.created_at),
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
        }


class FakeBatches:
    """Batch state and routes, attached to a :class:`FakeOpenAI` as ``server.batches``."""

    def __init__(self, server: FakeOpenAI, *, polls: int = 2) -> None:
        self.server = server
        self.polls = polls  # polls a batch answers "in progress" before it ends
        self.fail: Callable[[str, str], str | None] | None = None
        self.creates: Counter[str] = Counter()  # api → batches created
        self.uploads = 0
        self.hold_seconds = 60.0  # how long a "timeout" loss keeps the client waiting
        self._losses: dict[str, deque[str]] = {route: deque() for route in _ROUTES}
        self._files: dict[str, _File] = {}
        self._batches: dict[str, _Batch] = {}  # in creation order
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @staticmethod
    def openai_path(path: str) -> bool:
        """An OpenAI Batch API path (``/v1/files…``, ``/v1/batches…``)."""
        return path.startswith(("/v1/files", "/v1/batches"))

    def lose(self, route: str, how: str = "timeout", times: int = 1) -> None:
        """Lose the reply to the next ``times`` requests of ``route`` (see the module docstring)."""
        if route not in _ROUTES or how not in LOSSES:
            raise ValueError(f"lose({route!r}, {how!r}): routes {_ROUTES}, ways {LOSSES}")
        with self._lock:
            self._losses[route].extend([how] * times)

    def batches(self, api: str) -> list[str]:
        """The ids of every batch created through ``api``, oldest first."""
        with self._lock:
            return [b.id for b in self._batches.values() if b.api == api]

    def handle(self, method: str, path: str, query: str, body: bytes) -> BatchReply:
        """Answer one batch-API request of either API (runs on the server's thread)."""
        params = dict(parse_qsl(query))
        with self._lock:
            anthropic = path.startswith("/v1/messages/batches")
            route = _route(method, path)
            lost = self._losses[route].popleft() if route and self._losses[route] else None
            if lost == "500":
                if anthropic:
                    return BatchReply(*anthropic_error(500, "api_error", "Internal server error"))
                return BatchReply(*openai_error(500, "The server had an error. Sorry about that!"))
            if anthropic:
                reply = self._anthropic(method, path, params, body)
            else:
                reply = self._openai(method, path, params, body)
            return BatchReply(*reply, lost=lost if reply[0] < 400 else None)

    # -- OpenAI ----------------------------------------------------------------------------

    def _openai(
        self, method: str, path: str, query: dict[str, str], body: bytes
    ) -> tuple[int, bytes, str]:
        parts = path.strip("/").split("/")  # v1 files|batches [id] [content]
        if parts[1] == "files" and len(parts) == 2:
            return self._upload(body) if method == "POST" else self._list_files(query)
        if parts[1] == "files" and method == "GET" and len(parts) == 4 and parts[3] == "content":
            file = self._files.get(parts[2])
            if file is None:
                return openai_error(404, f"No such File object: {parts[2]}")
            return 200, file.data, JSONL
        if parts[1] == "batches" and len(parts) == 2:
            return self._openai_create(body) if method == "POST" else self._openai_list(query)
        if parts[1] == "batches" and method == "GET" and len(parts) == 3:
            batch = self._batches.get(parts[2])
            if batch is None or batch.api != "openai":
                return openai_error(404, f"No batch found with id '{parts[2]}'.")
            self._advance(batch)
            return 200, dump(self._openai_object(batch)), JSON
        return openai_error(404, f"Invalid URL ({method} {path})")

    def _upload(self, body: bytes) -> tuple[int, bytes, str]:
        fields = multipart(body)
        if fields.get("purpose", (None, b""))[1] != b"batch" or "file" not in fields:
            return openai_error(400, "Uploads need purpose=batch and a file part.")
        filename, data = fields["file"]
        file = self._new_file(data, filename or "upload.jsonl", "batch")
        self.uploads += 1
        return 200, dump(file.object()), JSON

    def _new_file(self, data: bytes, filename: str, purpose: str) -> _File:
        file = _File(f"file-fake{next(self._ids):06d}", data, filename, purpose, time.time())
        self._files[file.id] = file
        return file

    def _list_files(self, query: dict[str, str]) -> tuple[int, bytes, str]:
        files = [f for f in self._files.values() if query.get("purpose") in (None, f.purpose)]
        if query.get("order", "desc") == "desc":
            files.reverse()
        page = list_page([f.object() for f in files], query, "after")
        return 200, dump({"object": "list", **page}), JSON

    def _openai_create(self, body: bytes) -> tuple[int, bytes, str]:
        payload = json_object(body)
        file_id = payload.get("input_file_id")
        if payload.get("endpoint") != OPENAI_ENDPOINT or payload.get("completion_window") != "24h":
            return openai_error(400, "endpoint must be /v1/chat/completions, window 24h.")
        if not isinstance(file_id, str) or file_id not in self._files:
            return openai_error(400, f"Invalid input_file_id: {file_id}")
        if not valid_metadata(payload.get("metadata")):
            return openai_error(400, "metadata: at most 16 string pairs (keys 64, values 512).")
        batch = _Batch("openai", f"batch_fake{next(self._ids):06d}", time.time(), [])
        batch.input_file_id, batch.status = file_id, "validating"
        batch.metadata = payload.get("metadata")
        seen: set[str] = set()
        for n, line in enumerate(self._files[file_id].data.decode().splitlines(), 1):
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
        return 200, dump(self._openai_object(batch)), JSON

    def _openai_list(self, query: dict[str, str]) -> tuple[int, bytes, str]:
        newest = [b for b in reversed(self._batches.values()) if b.api == "openai"]
        page = list_page([self._openai_object(b) for b in newest], query, "after")
        return 200, dump({"object": "list", **page}), JSON

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
            "metadata": batch.metadata,
        }  # fmt: skip

    # -- Anthropic -------------------------------------------------------------------------

    def _anthropic(
        self, method: str, path: str, query: dict[str, str], body: bytes
    ) -> tuple[int, bytes, str]:
        parts = path.strip("/").split("/")  # v1 messages batches [id] [results]
        if len(parts) == 3 and method == "POST":
            return self._anthropic_create(body)
        if len(parts) == 3 and method == "GET":
            return self._anthropic_list(query)
        batch = self._batches.get(parts[3]) if len(parts) >= 4 else None
        if batch is None or batch.api != "anthropic":
            return anthropic_error(404, "not_found_error", f"No batch at {path}")
        if len(parts) == 4 and method == "GET":
            self._advance(batch)
            return 200, dump(self._anthropic_object(batch)), JSON
        if len(parts) == 5 and parts[4] == "results" and method == "GET":
            if batch.status != "ended":
                return anthropic_error(400, "invalid_request_error", "Batch has not ended.")
            lines = [batch.results[cid] for cid, _ in batch.requests]
            return 200, "".join(json.dumps(x) + "\n" for x in lines).encode(), JSONL
        return anthropic_error(404, "not_found_error", f"Invalid URL ({method} {path})")

    def _anthropic_create(self, body: bytes) -> tuple[int, bytes, str]:
        payload = json_object(body)
        requests = payload.get("requests")
        if set(payload) - {"requests"}:
            extra = ", ".join(sorted(set(payload) - {"requests"}))
            return anthropic_error(400, "invalid_request_error", f"{extra}: Extra inputs")
        if not isinstance(requests, list) or not requests:
            return anthropic_error(400, "invalid_request_error", "requests: at least one")
        batch = _Batch("anthropic", f"msgbatch_fake{next(self._ids):06d}", time.time(), [])
        seen: set[str] = set()
        for n, item in enumerate(requests):
            cid = item.get("custom_id") if isinstance(item, dict) else None
            params = item.get("params") if isinstance(item, dict) else None
            valid = isinstance(cid, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cid) is not None
            if not valid or cid in seen or not isinstance(params, dict):
                message = f"requests.{n}: custom_id must be unique, 1-64 of [A-Za-z0-9_-]"
                return anthropic_error(400, "invalid_request_error", message)
            if not isinstance(params.get("max_tokens"), int) or not params.get("messages"):
                message = f"requests.{n}.params: max_tokens and messages are required"
                return anthropic_error(400, "invalid_request_error", message)
            seen.add(cid)  # type: ignore[arg-type]
            batch.requests.append((cid, params))  # type: ignore[arg-type]
        batch.status = "in_progress"
        self._batches[batch.id] = batch
        self.creates["anthropic"] += 1
        return 200, dump(self._anthropic_object(batch)), JSON

    def _anthropic_list(self, query: dict[str, str]) -> tuple[int, bytes, str]:
        newest = [b for b in reversed(self._batches.values()) if b.api == "anthropic"]
        page = list_page([self._anthropic_object(b) for b in newest], query, "after_id")
        return 200, dump(page), JSON

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
        data = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return self._new_file(data, "batch_output.jsonl", "batch_output").id

    def _answer(self, batch: _Batch, cid: str, body: dict[str, Any]) -> None:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        users = [m for m in messages if m.get("role") == "user"]
        prompt = content_text(users[-1].get("content")) if users else ""
        contents = [content_text(m.get("content")) for m in messages]
        contents.append(content_text(body.get("system")))
        failure = self.fail(cid, prompt) if self.fail is not None else None
        model = str(body.get("model") or "")
        if failure is None:
            reply, _ = self.server._content(prompt, list(parse_rendered_batch(prompt)), None, 0)
            usage = (sum(map(approx_tokens, contents)), approx_tokens(reply))
            batch.counts["succeeded"] += 1
        else:
            reply, usage = "", (0, 0)
            batch.counts[EXPIRED if failure == EXPIRED else "errored"] += 1
        if batch.api == "anthropic":
            batch.results[cid] = anthropic_line(cid, model, reply, usage, failure)
        else:
            batch.results[cid] = openai_line(cid, model, reply, usage, failure)


__all__ = ["EXPIRED", "LOSSES", "BatchReply", "FakeBatches"]
