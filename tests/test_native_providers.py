"""S2: the OpenAI-compatible, Anthropic and Gemini providers pass the same streaming, retry and
fault tests, each over real HTTP against a loopback fake speaking its wire format."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import subprocess
import sys
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import REPO
from pipeline_helpers import collect, make_quiz

from quiztui.config import Config
from quiztui.core.kscore import Badge
from quiztui.errors import ConfigError
from quiztui.formats import load_quiz
from quiztui.pipeline.events import (
    AssertionUnjudged,
    BatchFailed,
    BatchRetried,
    RunStarted,
    VerdictReceived,
)
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers._http import HTTPProvider
from quiztui.providers.anthropic import AnthropicProvider, ratelimit_reset_delay
from quiztui.providers.base import ChatRequest
from quiztui.providers.factory import build_provider
from quiztui.providers.gemini import GeminiProvider, retry_info_delay
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.store import Store
from quiztui.testing.fake_anthropic import FakeAnthropic
from quiztui.testing.fake_gemini import FakeGemini
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

FAST_RETRY = RetryPolicy(max_retries=6, base_delay=0.01, max_delay=0.05)
KEY_VAR = "QUIZTUI_TEST_JUDGE_KEY"


@dataclass(frozen=True)
class Kit:
    """One provider and the fake that speaks its API."""

    name: str
    fake: type[FakeOpenAI]
    provider: type[HTTPProvider]
    key_header: str
    chat_path: str  # where a streamed chat request goes
    transient: tuple[str, ...]  # fault kinds the provider must retry
    filtered: tuple[tuple[str, str], ...]  # (fault, finish_reason) of its refusal/safety stops
    auth_error: str  # what the failed run's error says when the key is refused

    def __str__(self) -> str:
        return self.name

    def make(self, server: FakeOpenAI, **kw: Any) -> HTTPProvider:
        kw.setdefault("retry", FAST_RETRY)
        return self.provider(base_url=server.base_url, model="fake-judge", **kw)  # type: ignore[call-arg]


KITS = [
    Kit(
        "openai-compat",
        FakeOpenAI,
        OpenAICompatProvider,
        "authorization",
        "/v1/chat/completions",
        ("429", "500", "drop"),
        (("content_filter", "content_filter"),),
        "401",
    ),
    Kit(
        "anthropic",
        FakeAnthropic,
        AnthropicProvider,
        "x-api-key",
        "/v1/messages",
        ("429", "500", "529", "drop"),
        (("content_filter", "refusal"),),
        "401",
    ),
    Kit(
        "gemini",
        FakeGemini,
        GeminiProvider,
        "x-goog-api-key",
        "/v1beta/models/fake-judge:streamGenerateContent",
        ("429", "500", "503", "drop"),
        (("content_filter", "content_filter"), ("blocked", "content_filter")),
        "API key was refused",
    ),
]
FIFTH_FAULTS = {
    "openai-compat": ["429", "500", "drop", "cut"],
    "anthropic": ["429", "500", "529", "drop", "cut", "overloaded"],
    "gemini": ["429", "500", "503", "drop", "cut"],
}
each = pytest.mark.parametrize("kit", KITS, ids=str)


def served(kit: Kit, quiz: Any, **kw: Any) -> FakeOpenAI:
    return kit.fake(truth_from_quiz(quiz), **kw)


@each
async def test_vet_over_http_flags_wrong_keys(tmp_path: Path, kit: Kit) -> None:
    quiz = make_quiz(30, wrong_every=5)
    with served(kit, quiz) as server:
        events, summary = await collect(quiz, kit.make(server), tmp_path / "q.db")
        log = server.requests
    started = events[0]
    assert isinstance(started, RunStarted) and started.assertions == 120
    assert summary.judged == 120 and summary.unjudged == 0 and summary.requests == 6
    assert summary.tokens_in > 0 and summary.tokens_out > 0
    assert {(r.path, r.stream, r.status) for r in log} == {(kit.chat_path, True, 200)}
    for q in summary.questions:
        if int(q.question_id[1:]) % 5 == 0:
            assert q.badge == Badge.POOR and q.suggested_option == 0
        else:
            assert q.badge == Badge.GOOD and q.k == 4


@each
async def test_verdicts_arrive_while_the_reply_is_still_streaming(tmp_path: Path, kit: Kit) -> None:
    quiz = make_quiz(5)
    with served(kit, quiz, stream_delay=0.25) as server:
        store = Store(tmp_path / "q.db")
        run = VetRun(
            quiz,
            kit.make(server),
            store,
            load_prompt("judge_assertions"),
            VetSettings(concurrency=1),
        )
        batch_state = None
        # The first verdict is all this asks for: the run is closed there, its stream
        # cancelled, instead of waiting out the slow reply (a cancelled run is tested elsewhere).
        async with aclosing(run.events()) as events:
            async for event in events:
                if isinstance(event, VerdictReceived):
                    batch_state = store.conn.execute(
                        "SELECT status, raw_reply FROM batches"
                    ).fetchall()
                    break
        store.close()
    assert batch_state == [("sent", None)]  # a verdict came before its batch's stream ended


@each
async def test_a_cut_stream_keeps_parsed_verdicts_and_reasks_the_rest(
    tmp_path: Path, kit: Kit
) -> None:
    quiz = make_quiz(5)
    with served(kit, quiz) as server:
        server.inject("cut")
        _, summary = await collect(
            quiz, kit.make(server), tmp_path / "q.db", settings=VetSettings(concurrency=1)
        )
        log = server.requests
    assert log[0].fault == "cut"
    assert set(log[1].texts) < set(log[0].texts)  # only what the cut stream did not deliver
    assert summary.judged == 20 and summary.unjudged == 0 and summary.reasked == len(log[1].texts)


async def test_an_error_event_mid_stream_is_a_cut_not_a_lost_reply(tmp_path: Path) -> None:
    """Anthropic's ``error`` event (overloaded_error) after some text: keep it, re-ask the rest."""
    quiz = make_quiz(5)
    with FakeAnthropic(truth_from_quiz(quiz)) as server:
        server.inject("overloaded")
        events, summary = await collect(
            quiz, KITS[1].make(server), tmp_path / "q.db", settings=VetSettings(concurrency=1)
        )
        log = server.requests
    failed = [e for e in events if isinstance(e, BatchFailed)]
    assert failed and "overloaded_error" in failed[0].error
    assert set(log[1].texts) < set(log[0].texts)
    assert summary.judged == 20 and summary.unjudged == 0


@pytest.mark.parametrize(
    ("kit", "fault"), [(KITS[0], "stream_error"), (KITS[1], "overloaded")], ids=lambda v: str(v)
)
async def test_an_error_event_after_text_delivers_no_text_twice(
    tmp_path: Path, kit: Kit, fault: str
) -> None:
    """OpenAI's ``data: {"error": ...}`` and Anthropic's ``error`` event midway: the text already
    passed to ``on_text`` is kept (a cut stream), never delivered again by a retry; the rest is
    re-asked and every assertion gets exactly one verdict."""
    quiz = make_quiz(5)
    with served(kit, quiz) as server:
        server.inject(fault)
        provider = kit.make(server)
        calls: list[list[str]] = []  # the texts on_text received, per request
        complete = provider.complete

        async def spying(request: ChatRequest, **kw: Any) -> Any:
            on_text = kw.pop("on_text")
            got: list[str] = []
            calls.append(got)

            def tee(text: str) -> None:
                got.append(text)
                on_text(text)

            return await complete(request, on_text=tee, **kw)

        provider.complete = spying  # type: ignore[method-assign]
        events, summary = await collect(
            quiz, provider, tmp_path / "q.db", settings=VetSettings(concurrency=1)
        )
        log = server.requests
    assert log[0].fault == fault and set(log[1].texts) < set(log[0].texts)
    replies = [[line for line in "".join(got).splitlines() if line.strip()] for got in calls]
    assert [len(r) for r in replies] == [len(log[0].texts) - len(log[1].texts), len(log[1].texts)]
    assert all(len(set(r)) == len(r) for r in replies)  # no line of a reply delivered twice
    assert not [e for e in events if isinstance(e, BatchRetried)]
    [failed] = [e for e in events if isinstance(e, BatchFailed)]
    assert "stream error" in failed.error
    assert len([e for e in events if isinstance(e, VerdictReceived)]) == 20
    assert summary.judged == 20 and summary.unjudged == 0 and summary.retries == 0


@pytest.mark.parametrize(
    ("kit", "kind"), [(k, f) for k in KITS for f in k.transient], ids=lambda v: str(v)
)
async def test_transient_errors_are_retried(tmp_path: Path, kit: Kit, kind: str) -> None:
    quiz = make_quiz(5)
    with served(kit, quiz, retry_after=0) as server:
        server.inject(kind, times=2)
        events, summary = await collect(
            quiz, kit.make(server), tmp_path / "q.db", settings=VetSettings(concurrency=1)
        )
        statuses = [r.status for r in server.requests]
    retried = [e for e in events if isinstance(e, BatchRetried)]
    assert len(retried) == 2 and summary.retries == 2
    assert summary.judged == 20
    assert statuses == [None if kind == "drop" else int(kind)] * 2 + [200]


@each
async def test_replies_that_are_not_streamed_judge_too(tmp_path: Path, kit: Kit) -> None:
    """``judge.stream = false``: one JSON reply per request; a body cut short is retried."""
    quiz = make_quiz(10, wrong_every=2)
    with served(kit, quiz) as server:
        server.inject("cut")
        _, summary = await collect(
            quiz,
            kit.make(server, stream=False),
            tmp_path / "q.db",
            settings=VetSettings(concurrency=1),
        )
        log = server.requests
    assert not any(r.stream for r in log) and log[0].fault == "cut"
    assert summary.judged == 40 and summary.retries == 1
    assert [q.badge for q in summary.questions] == [Badge.GOOD, Badge.POOR] * 5


@each
async def test_the_servers_retry_hint_is_honoured(tmp_path: Path, kit: Kit) -> None:
    """OpenAI and Anthropic: ``retry-after``; Gemini: RetryInfo.retryDelay in the 429 body."""
    quiz = make_quiz(2)
    with served(kit, quiz, retry_after=0.3) as server:
        server.inject("429")
        events, _ = await collect(quiz, kit.make(server), tmp_path / "q.db")
    retried = [e for e in events if isinstance(e, BatchRetried)]
    assert [r.delay for r in retried] == [0.3]
    assert "429" in retried[0].error


async def test_anthropic_reset_time_stands_in_for_a_missing_retry_after(tmp_path: Path) -> None:
    quiz = make_quiz(2)
    with FakeAnthropic(truth_from_quiz(quiz), retry_after=1, retry_after_header=False) as server:
        server.inject("429")
        events, summary = await collect(quiz, KITS[1].make(server), tmp_path / "q.db")
    [retried] = [e for e in events if isinstance(e, BatchRetried)]
    # The reset time was one second after the server answered; some of it passed on the way.
    assert 0.5 < retried.delay <= 1.0
    assert summary.judged == 8


def test_rate_limit_hint_parsers() -> None:
    now = dt.datetime(2025, 6, 1, 12, 0, 0, tzinfo=dt.UTC)
    headers = {
        "anthropic-ratelimit-requests-reset": "2025-06-01T12:00:05Z",
        "anthropic-ratelimit-requests-remaining": "3",
        "anthropic-ratelimit-tokens-reset": "2025-06-01T12:00:20.5Z",
        "anthropic-ratelimit-tokens-remaining": "0",
    }
    assert ratelimit_reset_delay(headers, now) == 20.5  # the limit that ran out
    del headers["anthropic-ratelimit-tokens-remaining"]
    assert ratelimit_reset_delay(headers, now) == 5.0  # unknown which: the soonest
    assert ratelimit_reset_delay({"anthropic-ratelimit-requests-reset": "soon"}, now) is None
    assert (
        ratelimit_reset_delay({"anthropic-ratelimit-requests-reset": "2025-06-01T11:00:00Z"}, now)
        == 0.0
    )
    info = "type.googleapis.com/google.rpc.RetryInfo"
    body = {"error": {"code": 429, "details": [{"@type": info, "retryDelay": "13s"}]}}
    assert retry_info_delay(body) == 13.0
    body["error"]["details"][0]["retryDelay"] = "1.5s"  # type: ignore[index]
    assert retry_info_delay(body) == 1.5
    assert retry_info_delay({"error": {"code": 429}}) is None and retry_info_delay(None) is None


@pytest.mark.parametrize(
    ("kit", "kind"), [(k, f) for k in KITS for f in ("missing", "malformed")], ids=str
)
async def test_missing_and_garbled_ids_are_reasked(tmp_path: Path, kit: Kit, kind: str) -> None:
    quiz = make_quiz(10)
    with served(kit, quiz) as server:
        server.inject(kind, times=2)
        _, summary = await collect(quiz, kit.make(server), tmp_path / "q.db")
        log = server.requests
    faulted = {
        t for r in log if r.fault == kind for t in (r.texts[int(i[1:]) - 1] for i in r.faulted_ids)
    }
    assert faulted, "the fault removed some ids"
    assert summary.judged == 40 and summary.unjudged == 0 and summary.reasked >= len(faulted)
    assert all(q.badge == Badge.GOOD for q in summary.questions)


@pytest.mark.parametrize(
    ("kit", "kind", "finish"),
    [(k, "refusal", None) for k in KITS] + [(k, f, r) for k in KITS for f, r in k.filtered],
    ids=str,
)
async def test_refusals_end_unjudged_with_a_reason_never_false(
    tmp_path: Path, kit: Kit, kind: str, finish: str | None
) -> None:
    """A refusal in words, and each API's own refusal or safety stop."""
    quiz = make_quiz(3)
    with served(kit, quiz) as server:
        server.inject(kind, times=3)  # first ask + 2 re-asks of a single batch
        events, summary = await collect(quiz, kit.make(server), tmp_path / "q.db")
    unjudged = [e for e in events if isinstance(e, AssertionUnjudged)]
    assert len(unjudged) == 12 and summary.unjudged == 12 and summary.judged == 0
    assert all("no verdicts" in e.reason and "3 attempts" in e.reason for e in unjudged)
    if finish is not None:
        assert all(f"finish_reason={finish}" in e.reason for e in unjudged)
    assert all(q.badge == Badge.INCOMPLETE and q.k == 0 for q in summary.questions)
    assert all(q.confidence == pytest.approx(0.95) for q in summary.questions)


@each
async def test_a_refused_key_stops_the_run_and_keeps_what_was_judged(
    tmp_path: Path, kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key works for the first batch, then the server stops taking it (a rotated key)."""
    quiz = make_quiz(3)
    monkeypatch.setenv(KEY_VAR, "right")
    with served(kit, quiz, require_key="right") as server:

        def rotate(prompt: str) -> None:
            server.require_key = "rotated"

        server.responder = rotate
        _, summary = await collect(
            quiz,
            kit.make(server, api_key_env=KEY_VAR),
            tmp_path / "q.db",
            settings=VetSettings(batch_size=4, concurrency=1),
        )
        statuses = [r.status for r in server.requests]
    assert statuses[0] == 200 and len(statuses) == 2  # no retries of a refused key
    assert summary.status == "failed" and kit.auth_error in (summary.error or "")
    assert summary.judged == 4 and summary.unjudged == 8
    with sqlite3.connect(tmp_path / "q.db") as db:
        kept = db.execute("SELECT count(*) FROM verdicts WHERE verdict IS NOT NULL").fetchone()[0]
    assert kept == 4


@each
async def test_no_key_at_all_stops_the_run(tmp_path: Path, kit: Kit) -> None:
    quiz = make_quiz(3)
    with served(kit, quiz, require_key="right") as server:
        _, summary = await collect(quiz, kit.make(server), tmp_path / "q.db")
        log = server.requests
    assert summary.status == "failed" and summary.judged == 0 and summary.unjudged == 12
    assert log and all(r.status in (401, 403) and not r.had_auth for r in log)


@each
async def test_faults_on_a_fifth_of_requests_lose_nothing(tmp_path: Path, kit: Kit) -> None:
    quiz = make_quiz(100)
    kinds = FIFTH_FAULTS[kit.name]
    with served(
        kit, quiz, fault_rate=0.2, fault_kinds=kinds, fault_seed=3, retry_after=1
    ) as server:
        for kind in kinds:  # each kind at least once, then a seeded fifth of the rest
            server.inject(kind)
        provider = kit.make(server)
        events, summary = await collect(
            quiz, provider, tmp_path / "q.db", settings=VetSettings(batch_size=10, concurrency=8)
        )
        faults = [r.fault for r in server.requests if r.fault]
    assert set(faults) == set(kinds) and len(faults) > len(kinds)
    final: dict[int, object] = {}
    for e in events:
        if isinstance(e, (VerdictReceived, AssertionUnjudged)):
            final[e.seq] = e
    assert len(final) == 400
    assert all(e.reason for e in final.values() if isinstance(e, AssertionUnjudged))
    assert summary.judged + summary.unjudged == 400
    assert summary.retries == sum(1 for e in events if isinstance(e, BatchRetried)) > 0
    assert provider.limiter.cuts >= 1 and provider.usage.limit < 8  # 429s cut the concurrency
    assert provider.usage.in_flight == 0
    with sqlite3.connect(tmp_path / "q.db") as db:
        rows = db.execute("SELECT verdict, unjudged_reason FROM verdicts").fetchall()
    assert len(rows) == 400 and all(v is not None or why for v, why in rows)


class Recording(httpx.AsyncHTTPTransport):
    """The real socket transport, noting each request's URL and header names on the way."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, frozenset[str]]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append((str(request.url), frozenset(request.headers.keys())))
        return await super().handle_async_request(request)


@each
async def test_the_key_goes_in_its_header_and_never_into_urls_sqlite_or_the_log(
    tmp_path: Path, kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = "sk-MARKER-4b1d-DO-NOT-STORE"
    monkeypatch.setenv(KEY_VAR, marker)
    quiz = make_quiz(10, wrong_every=3)
    transport = Recording()
    db = tmp_path / "q.db"
    with served(
        kit, quiz, require_key=marker, fault_rate=0.3, fault_kinds=["500", "429"], retry_after=0
    ) as server:
        provider = kit.make(server, api_key_env=KEY_VAR, transport=transport)
        _, summary = await collect(quiz, provider, db)
        log = server.requests
    assert summary.judged == 40
    assert log and all(r.had_auth and r.status != 401 for r in log)  # the key was really sent
    assert marker not in repr(log)
    assert transport.seen and all(kit.key_header in names for _, names in transport.seen)
    assert all(marker not in url for url, _ in transport.seen)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "q.db" for p in files)
    for path in files:  # database, WAL, anything else written
        assert marker.encode() not in path.read_bytes(), path


@each
async def test_a_key_in_another_providers_header_is_refused(tmp_path: Path, kit: Kit) -> None:
    """The fakes read only their own header: a provider that put the key elsewhere would fail."""
    other = KITS[(KITS.index(kit) + 1) % len(KITS)]
    with kit.fake({}, require_key="k") as server:
        client = httpx.AsyncClient(base_url=server.base_url)
        try:
            response = await client.get(
                "/v1/models" if kit.name != "gemini" else "/v1beta/models",
                headers={
                    other.key_header: "k" if other.key_header != "authorization" else "Bearer k"
                },
            )
        finally:
            await client.aclose()
    assert response.status_code in (401, 403)


async def test_the_adaptive_limit_drops_on_429s_and_recovers_when_quiet(tmp_path: Path) -> None:
    now = [0.0]
    quiz = make_quiz(20)
    with FakeAnthropic(truth_from_quiz(quiz), retry_after=0) as server:
        provider = AnthropicProvider(
            base_url=server.base_url,
            model="fake-judge",
            retry=FAST_RETRY,
            concurrency=8,
            quiet_seconds=10.0,
            clock=lambda: now[0],
        )
        server.inject("429", times=3)
        _, summary = await collect(
            quiz, provider, tmp_path / "q.db", settings=VetSettings(batch_size=4, concurrency=8)
        )
        dropped = provider.usage.limit
        request = ChatRequest((("user", "A1: Q: What is 1 + 1? A: 2"),))
        climb = []
        for _ in range(10):
            now[0] += 10.0
            await provider.complete(request)
            climb.append(provider.usage.limit)
        await provider.aclose()
    assert summary.judged == 80 and summary.retries == 3
    assert 1 <= dropped <= 4  # halved at least once from 8
    assert climb == [min(8, dropped + i) for i in range(1, 11)]


@pytest.mark.parametrize(
    ("provider", "variable", "url"),
    [
        ("anthropic", "ANTHROPIC_API_KEY", "https://api.anthropic.com"),
        ("gemini", "GEMINI_API_KEY", "https://generativelanguage.googleapis.com"),
    ],
)
def test_config_builds_native_providers_and_names_a_missing_key(
    provider: str, variable: str, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge: dict[str, Any] = {"provider": provider, "model": "m"}
    with pytest.raises(ConfigError, match=f"{variable} is not set"):
        build_provider(Config.model_validate({"judge": judge}))
    monkeypatch.setenv(variable, "k")
    built = build_provider(Config.model_validate({"judge": judge | {"concurrency": 5}}))
    assert built.name == provider and built.base_url == url and built.usage.limit == 5
    assert built.label == f"m @ {url}"
    renamed = judge | {f"{provider}_key_env": "QUIZTUI_TEST_OTHER_KEY"}
    with pytest.raises(ConfigError, match=f"judge.{provider}_key_env: .*QUIZTUI_TEST_OTHER_KEY"):
        build_provider(Config.model_validate({"judge": renamed}))
    local = judge | {"base_url": "http://127.0.0.1:9", "logprobs": "on"}
    with pytest.raises(ConfigError, match="judge.logprobs"):
        build_provider(Config.model_validate({"judge": local}))


@pytest.mark.parametrize("kit", KITS[1:], ids=str)
def test_the_cli_judges_through_a_native_provider_with_its_default_key_variable(
    tmp_path: Path, kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = "sk-MARKER-c11-DO-NOT-STORE"
    variable = {"anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}[kit.name]
    monkeypatch.setenv(variable, marker)
    quiz_path = REPO / "sample_quizzes" / "planted_errors.json"
    quiz = load_quiz(quiz_path)
    db = tmp_path / "data" / "runs.db"
    with served(
        kit, quiz, require_key=marker, fault_rate=0.2, fault_kinds=["429", "500"]
    ) as server:
        server.retry_after = 0
        out = subprocess.run(
            [sys.executable, "-m", "quiztui", "vet", str(quiz_path), "--no-tui"]
            + ["--judge", kit.name, "--base-url", server.base_url, "--model", "fake-judge"]
            + ["--db", str(db), "--format", "json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        log = server.requests
    assert out.returncode in (0, 1), out.stderr
    report = json.loads(out.stdout)
    assert report["judged"] == sum(q.n for q in quiz.questions) and report["unjudged"] == 0
    assert {r.path for r in log} == {kit.chat_path} and all(r.had_auth for r in log)
    assert marker not in out.stdout + out.stderr
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert marker.encode() not in path.read_bytes(), path
