"""Issue 19, item 6: status codes respected.

A 3xx from the judge endpoint was retried 45 times (the redirect body is no JSON, so it counted as
a malformed reply). Now a 3xx is never followed — a redirect would carry the API key to another
host — and never retried: one request, one line naming the redirect target. 400/401/403/404/422
are final; 408/409/425/429 and every 5xx are retried. Real sockets: a loopback server answering
every request with one status, and a second one standing for where the redirect points.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from quiztui.providers.anthropic import AnthropicProvider
from quiztui.providers.base import ChatRequest, RequestFailed
from quiztui.providers.gemini import GeminiProvider
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy

KEY = "sk-status-test-key-4242"
RETRIES = 2


class StatusServer(ThreadingHTTPServer):
    """Answers every request with ``status`` (and ``location`` for a 3xx); logs each one."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.status = 200
        self.location = ""
        self.log: list[tuple[str, str, str | None]] = []  # method, path, Authorization/x-api-key

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: StatusServer

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        key = self.headers.get("authorization") or self.headers.get("x-api-key")
        key = key or self.headers.get("x-goog-api-key")
        self.server.log.append((self.command, self.path, key))
        body = json.dumps({"error": {"message": f"status {self.server.status}"}}).encode()
        self.send_response(self.server.status)
        if 300 <= self.server.status < 400:
            self.send_header("Location", self.server.location)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def servers() -> Iterator[tuple[StatusServer, StatusServer]]:
    judge, elsewhere = StatusServer(), StatusServer()
    threads = [
        threading.Thread(target=s.serve_forever, args=(0.02,), daemon=True)
        for s in (judge, elsewhere)
    ]
    for thread in threads:
        thread.start()
    yield judge, elsewhere
    for server in (judge, elsewhere):
        server.shutdown()
        server.server_close()


PROVIDERS = {
    "openai-compat": OpenAICompatProvider,
    "anthropic": AnthropicProvider,
    "gemini": GeminiProvider,
}


def ask(kind: str, base_url: str, stream: bool) -> str:
    """One chat request through the provider; the error it ends with."""
    provider = PROVIDERS[kind](
        base_url=base_url,
        model="judge-model",
        api_key_env="QZ_STATUS_KEY",
        retry=RetryPolicy(max_retries=RETRIES, base_delay=0.0, jitter=0.0, max_retry_after=0.0),
        stream=stream,
    )

    async def go() -> str:
        try:
            await provider.complete(
                ChatRequest((("user", "Is Canberra the capital of Australia?"),)),
                on_text=(lambda _t: None) if stream else None,
            )
        except RequestFailed as exc:
            return str(exc)
        finally:
            await provider.aclose()
        raise AssertionError("the request did not fail")

    return asyncio.run(go())


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_neither_followed_nor_retried_and_named_in_one_line(
    servers: tuple[StatusServer, StatusServer],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    stream: bool,
    status: int,
) -> None:
    monkeypatch.setenv("QZ_STATUS_KEY", KEY)
    judge, elsewhere = servers
    judge.status, judge.location = status, f"{elsewhere.url}/stolen"
    error = ask(kind, judge.url, stream)
    assert len(judge.log) == 1  # once: not retried
    assert elsewhere.log == []  # not followed: the key never went there
    assert error.startswith(f"HTTP {status}: POST /v1") and "\n" not in error
    assert f"redirected to {elsewhere.url}/stolen" in error


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_final(
    servers: tuple[StatusServer, StatusServer],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    status: int,
) -> None:
    monkeypatch.setenv("QZ_STATUS_KEY", KEY)
    judge, _ = servers
    judge.status = status
    error = ask(kind, judge.url, stream=False)
    assert len(judge.log) == 1, judge.log
    assert error.startswith(f"HTTP {status}")


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 501, 502, 503, 504, 599])
def test_transient_statuses_are_retried(
    servers: tuple[StatusServer, StatusServer],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    status: int,
) -> None:
    monkeypatch.setenv("QZ_STATUS_KEY", KEY)
    judge, _ = servers
    judge.status = status
    error = ask(kind, judge.url, stream=False)
    assert len(judge.log) == RETRIES + 1, judge.log
    assert f"gave up after {RETRIES + 1} attempts" in error
