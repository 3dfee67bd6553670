"""Issue 19, item 3 (S2): keys go only where they were sent, and never come back out.

A 401 whose body repeated the key was stored in verdict rows, batch rows, the run summary, the
Markdown report and stderr. Here every provider (OpenAI-compatible, Anthropic, Gemini, and the
batch APIs) talks to a loopback server that refuses the key (401, then 403) and quotes it back in
its error body, as real APIs do with a key they do not know. Marker keys are set; afterwards the
store, config, data, cache and log dirs, stdout, stderr and every report format hold no marker —
while the server's log shows each marker really was sent.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import REPO
from runs_helpers import listed_runs

from quiztui.cli import main
from quiztui.core.secrets import mask, mask_secrets

QUIZ = REPO / "sample_quizzes" / "planted_errors.json"
MARKERS = {
    "OPENAI_API_KEY": "sk-proj-MARKER-openai-0a1b2c3d4e5f-4242",
    "ANTHROPIC_API_KEY": "sk-ant-MARKER-anthropic-9f8e7d6c5b4a-4343",
    "GEMINI_API_KEY": "AIzaMARKER-gemini-1357924680-4444",
}


class EchoServer(ThreadingHTTPServer):
    """Refuses every request with ``status``, quoting the key it was sent in the error body."""

    daemon_threads = True
    # socketserver's default backlog is 5: a run's burst of concurrent requests overflowed it and
    # the dropped connections were retried by TCP a second later (about 1 s per refused run).
    request_queue_size = 64

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Echo)
        self.status = 401
        self.keys_seen: set[str] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Echo(BaseHTTPRequestHandler):
    server: EchoServer

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        auth = self.headers.get("authorization") or ""
        key = (
            auth.removeprefix("Bearer ")
            or self.headers.get("x-api-key")
            or self.headers.get("x-goog-api-key")
            or (parse_qs(urlsplit(self.path).query).get("key") or [""])[0]
        )
        if key:
            self.server.keys_seen.add(key)
        message = f"Incorrect API key provided: {key}. Request {self.path} with key={key} refused."
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
        data = body.encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_GET = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_mask_keeps_the_ends_only() -> None:
    key = MARKERS["OPENAI_API_KEY"]
    assert mask(key) == "sk-…4242"
    assert mask_secrets(f"key {key}!", [key, "abc"]) == "key sk-…4242!"
    assert mask_secrets("abc", ["abc"]) == "abc"  # too short to mask verbatim


def in_process(outputs: list[str], *args: str) -> str:
    """``quiztui ARGS`` through main() here; its stdout (both streams go to ``outputs``)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    outputs.extend([out.getvalue(), err.getvalue()])
    assert code == 0, err.getvalue()
    return out.getvalue()


def test_marker_keys_never_come_back_out_of_any_provider_or_report(
    tmp_path: Path, echo: EchoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    env = {
        **os.environ,
        **MARKERS,
        "HOME": str(home),
        "QUIZTUI_CONFIG_DIR": str(home / "config"),
        "QUIZTUI_DATA_DIR": str(home / "data"),
        "QUIZTUI_LOG_DIR": str(home / "log"),
        "QUIZTUI_LOG_LEVEL": "DEBUG",
        "XDG_CACHE_HOME": str(home / "cache"),
        "QUIZTUI_JUDGE_MAX_RETRIES": "0",
    }
    db = home / "data" / "quiztui.db"
    outputs: list[str] = []
    for name, value in env.items():
        if name.startswith(("QUIZTUI_", "XDG_")) or name in MARKERS or name == "HOME":
            monkeypatch.setenv(name, value)

    def quiztui(*args: str) -> subprocess.CompletedProcess[str]:
        """The first command in a real process (the environment as a user's shell passes it),
        the others through main() here: the same code, without an interpreter start each."""
        if not outputs:
            out = subprocess.run(
                [sys.executable, "-m", "quiztui", *args],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
        else:
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                code = main(list(args))
            out = subprocess.CompletedProcess(args, code, stdout.getvalue(), stderr.getvalue())
        outputs.extend([out.stdout, out.stderr])
        return out

    runs = [
        ("openai-compat", f"{echo.url}/v1", ()),
        ("anthropic", echo.url, ()),
        ("gemini", echo.url, ()),
        ("openai-compat", f"{echo.url}/v1", ("--batch-api",)),
        ("anthropic", echo.url, ("--batch-api",)),
    ]
    for status in (401, 403):
        echo.status = status
        for judge, url, extra in runs:
            out = quiztui(
                "vet",
                str(QUIZ),
                "--no-tui",
                "--judge",
                judge,
                "--base-url",
                url,
                "--model",
                "judge-model",
                "--db",
                str(db),
                "--format",
                "md",
                "-o",
                str(home / f"report-{judge}-{status}{''.join(extra)}.md"),
                *extra,
            )
            assert out.returncode != 0 or out.stdout == ""  # refused everywhere: nothing judged
            assert "Traceback" not in out.stderr, out.stderr
    # The stored runs, read back in-process (the same main() the processes ran).
    listing = in_process(outputs, "runs", "--db", str(db))
    run_ids = [run.split()[0] for run in listed_runs(listing)]
    assert len(run_ids) == 2 * len(runs), listing
    for run_id in run_ids:
        in_process(outputs, "runs", "show", run_id, "--db", str(db))
        for fmt in ("md", "json", "csv", "html", "junit"):
            in_process(outputs, "report", run_id, "--db", str(db), "--format", fmt)
            in_process(
                outputs, "report", run_id, "--db", str(db), "-o", str(home / f"r{run_id}.{fmt}")
            )

    # The other commands that call a judge, refused the same way.
    echo.status = 401
    judge = ["--judge", "openai-compat", "--base-url", f"{echo.url}/v1", "--model", "judge-model"]
    for command in (
        ["grade", str(REPO / "sample_quizzes" / "answers_sample.csv"), "--format", "json"],
        ["review", str(QUIZ), "--format", "md"],
        ["robustness", str(QUIZ), "--format", "csv"],
        ["calibrate"],
    ):
        out = quiztui(*command, *judge, "--db", str(db))
        assert "Traceback" not in out.stderr, out.stderr

    assert set(MARKERS.values()) <= echo.keys_seen  # each key really went out
    masked = "".join(outputs) + "".join(
        p.read_text(errors="replace") for p in home.rglob("*") if p.is_file()
    )
    assert "sk-…4242" in masked or "sk-…4343" in masked  # the refusal is shown, the key masked
    for name, marker in MARKERS.items():
        for text in outputs:
            assert marker not in text, (name, text[:500])
        for path in (p for p in home.rglob("*") if p.is_file()):  # store, WAL, log, reports, …
            assert marker.encode() not in path.read_bytes(), (name, path)


def test_the_auto_detected_local_server_gets_no_key_and_a_configured_url_does(
    monkeypatch: pytest.MonkeyPatch, echo: EchoServer
) -> None:
    import asyncio

    from quiztui.config import Config
    from quiztui.providers.base import ChatRequest, RequestFailed
    from quiztui.providers.factory import DEFAULT_BASE_URL, build_provider

    key = MARKERS["OPENAI_API_KEY"]
    monkeypatch.setenv("OPENAI_API_KEY", key)
    # `vet QUIZ --model gpt-4o-mini` with no base URL: the judge is the local default.
    local = build_provider(
        Config.model_validate({"judge": {"provider": "auto", "model": "gpt-4o-mini"}})
    )
    assert local.base_url == DEFAULT_BASE_URL.rstrip("/")
    request = local._client.build_request("POST", "chat/completions")  # type: ignore[attr-defined]
    assert "authorization" not in request.headers  # no key over plain HTTP to whoever listens

    configured = build_provider(
        Config.model_validate(
            {"judge": {"provider": "auto", "model": "gpt-4o-mini", "base_url": f"{echo.url}/v1"}}
        )
    )

    async def ask() -> str:
        try:
            await configured.complete(ChatRequest((("user", "Is 2 even?"),)))
        except RequestFailed as exc:
            return str(exc)
        finally:
            await configured.aclose()
        return ""

    error = asyncio.run(ask())
    assert key in echo.keys_seen  # the URL the user set got the key …
    assert "sk-…4242" in error and key not in error  # … and its echo came back masked
