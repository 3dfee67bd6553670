"""Token logprobs → P(true) per assertion → a graded score (issue 3, item 6).

Providers are driven over real HTTP to the loopback fake server; runs write real SQLite files.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx
import openai
import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline_helpers import collect, make_quiz

from quiztui.config import load_config
from quiztui.core.assertions import decompose, parse_rendered_batch, render_batch
from quiztui.core.logprobs import (
    LogprobIndex,
    ServerAlternatives,
    TokenLogprob,
    graded_key_score,
    p_true_of,
)
from quiztui.core.quiz import Quiz
from quiztui.core.verdicts import parse_reply
from quiztui.errors import ConfigError
from quiztui.pipeline.events import (
    BatchRetried,
    QuestionScored,
    RunSummary,
    UsageUpdated,
    VerdictReceived,
    VetEvent,
)
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.base import ChatRequest
from quiztui.providers.factory import build_provider
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.providers.simulated import SimulatedProvider
from quiztui.report.writers import to_csv, to_json, to_markdown
from quiztui.simulate.logprobs import oracle_logprobs, tokenize, tokens_by_chunk
from quiztui.simulate.vet import judge_confidence, oracle_reply
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz
from quiztui.tui.screens.detail import option_text, summary_text
from quiztui.tui.state import RunState
from quiztui.tui.widgets.cells import DASH

FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05)
LOGPROBS = VetSettings(logprobs=True, batch_size=10, concurrency=2)


def lp(p: float) -> float:
    return math.log(p)


def tok(token: str, p: float, *alternatives: tuple[str, float]) -> TokenLogprob:
    return TokenLogprob(token, lp(p), tuple((t, lp(q)) for t, q in alternatives))


def provider_for(server: FakeOpenAI, **kw: object) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        base_url=server.base_url,
        model="fake-judge",
        retry=FAST_RETRY,
        **kw,  # type: ignore[arg-type]
    )


def expected_p_true(text: str, truth: bool, said: bool, seed: int = 0) -> float:
    """What LogprobIndex must read from simulate.logprobs.synthetic_logprobs for this verdict."""
    c = judge_confidence(text, truth, said, seed)
    junk = min(0.001, (1 - c) / 10)
    p_said = c / (1 - junk)
    return p_said if said else 1 - p_said


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(a random positive scores above a random negative), ties counting half."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def verdicts_of(events: list[VetEvent]) -> dict[int, VerdictReceived]:
    return {e.seq: e for e in events if isinstance(e, VerdictReceived)}


# -- LogprobIndex and P(true) ---------------------------------------------------------------


def test_p_true_from_the_verdict_token_and_its_alternatives() -> None:
    index = LogprobIndex()
    index.extend([tok("A1", 0.99), tok(":", 0.99)])
    index.extend(
        [tok(" TRUE", 0.7, (" TRUE", 0.7), (" FALSE", 0.2), (" True", 0.05), (" x", 0.05))]
    )
    index.extend([tok(" -", 0.9), tok(" ok", 0.9), tok("\n", 0.9)])
    reply = "A1: TRUE - ok\n"
    assert index.text_length == len(reply)
    (verdict,) = parse_reply(reply, ["A1"]).values()
    assert verdict.offset == 4  # inside " TRUE", which starts at 3
    assert index.p_true_at(4) == pytest.approx(0.75 / 0.95)
    assert index.p_true_at(4, verdict=True) == pytest.approx(0.75 / 0.95)
    assert index.p_true_at(4, verdict=False) is None  # offsets out of step with the text
    assert index.p_true_at(0) is None  # "A1" is no verdict word
    assert index.p_true_at(len(reply)) is None and index.p_true_at(-1) is None


def test_markdown_and_case_around_the_word_are_ignored() -> None:
    token = tok("**False**", 0.6, ("**False**", 0.6), ("**True**", 0.3), ("`TRUE`", 0.1))
    assert p_true_of(token) == pytest.approx(0.4)
    assert p_true_of(tok(" yes", 0.8, (" yes", 0.8), (" No", 0.2))) == pytest.approx(0.8)


def test_a_word_split_into_tokens_is_read_at_its_first_token_by_prefix() -> None:
    # "TRUE" as "TR" + "UE": the alternatives at the first token are prefixes too.
    index = LogprobIndex()
    index.extend([tok("A2", 0.99), tok(": ", 0.99)])
    index.extend([tok("TR", 0.6, ("TR", 0.6), ("FAL", 0.3), ("F", 0.05), ("The", 0.05))])
    index.extend([tok("UE", 0.999), tok("\n", 0.99)])
    (verdict,) = parse_reply("A2: TRUE\n", ["A2"]).values()
    assert index.p_true_at(verdict.offset or 0, verdict.verdict) == pytest.approx(0.6 / 0.95)
    # The second piece decides nothing.
    assert index.p_true_at((verdict.offset or 0) + 2) is None


def test_missing_alternatives_are_bounded_not_zero() -> None:
    # No alternatives at all: the other side has at most 1 − p.
    assert p_true_of(tok(" TRUE", 0.9)) == pytest.approx(0.9)
    assert p_true_of(tok(" FALSE", 0.97)) == pytest.approx(0.03)
    # Only TRUE words listed: FALSE has at most the smallest listed (0.04), and the rest (0.01).
    only_true = tok(" TRUE", 0.9, (" TRUE", 0.9), (" True", 0.05), (" x", 0.04))
    assert p_true_of(only_true) == pytest.approx(0.95 / 0.96)
    # Neither side at the token: unknown.
    assert p_true_of(tok(" maybe", 0.9, (" TRUE", 0.05), (" FALSE", 0.05))) is None


def test_empty_tokens_cover_nothing_and_offsets_stay_right() -> None:
    index = LogprobIndex()
    index.extend([tok("", 0.5), tok("A1:", 0.99), tok("", 0.5), tok(" F", 0.8, (" T", 0.2))])
    assert index.text_length == len("A1: F") and len(index) == 2
    assert index.p_true_at(4) == pytest.approx(0.2)


def test_synthetic_tokens_concatenate_to_the_reply() -> None:
    reply = 'A1: TRUE - it is\n{"id": "A2", "verdict": false}\n\n  **A3**: F\n'
    assert "".join(tokenize(reply)) == reply
    assert "".join(t.token for t in oracle_logprobs("", reply, {})) == reply


# -- the graded score -----------------------------------------------------------------------


def test_graded_key_score_vectors() -> None:
    assert graded_key_score([None, None, None], 0, 0.95) is None
    assert graded_key_score([], 0, 0.95) is None
    # Equal evidence everywhere: the prior alone.
    assert graded_key_score([0.5, 0.5, 0.5, 0.5], 0, 0.95) == pytest.approx(0.95)
    assert graded_key_score([None, 0.5], 0, 0.5) == pytest.approx(0.5)
    # 0.95·9 against three times (0.05/3)·(1/9).
    key_right = 0.95 * 9 / (0.95 * 9 + 3 * (0.05 / 3) / 9)
    assert graded_key_score([0.9, 0.1, 0.1, 0.1], 0, 0.95) == pytest.approx(key_right)
    # Unknown options count as odds 1: 0.95 against (0.05/3)·(9 + 1 + 1).
    one_known = 0.95 / (0.95 + (0.05 / 3) * 11)
    assert graded_key_score([None, 0.9, None, None], 0, 0.95) == pytest.approx(one_known)
    # Certainties are clipped, so two "certain" options tie back to the prior.
    assert graded_key_score([1.0, 1.0], 0, 0.95) == pytest.approx(0.95)
    assert graded_key_score([0.0, 1.0], 0, 0.95) == pytest.approx(0.95e-12 / (0.95e-12 + 0.05))
    assert graded_key_score([0.2, 0.9], 1, 0.8) == pytest.approx(0.8 * 9 / (0.8 * 9 + 0.2 * 0.25))


# -- the OpenAI-compatible provider against the fake server -------------------------------


@pytest.fixture
def quiz() -> Quiz:
    return make_quiz(5, wrong_every=2)


@pytest.fixture
def prompt(quiz: Quiz) -> str:
    return render_batch(load_prompt("judge_assertions").user, decompose(quiz))[0]


def _check_reply_p_true(text: str, tokens: list[TokenLogprob], prompt: str, quiz: Quiz) -> None:
    assert "".join(t.token for t in tokens) == text
    index = LogprobIndex()
    index.extend(tokens)
    truth = truth_from_quiz(quiz)
    asked = parse_rendered_batch(prompt)
    found = parse_reply(text, asked)
    assert len(found) == len(asked) == 20
    for ident, v in found.items():
        assert v.offset is not None
        got = index.p_true_at(v.offset, v.verdict)
        want = expected_p_true(asked[ident], truth[asked[ident]], v.verdict, seed=2)
        assert got == pytest.approx(want)


@pytest.mark.parametrize("chunk_chars", [None, 7])
async def test_streamed_logprobs_arrive_before_their_text(
    quiz: Quiz, prompt: str, chunk_chars: int | None
) -> None:
    calls: list[tuple[str, int]] = []
    tokens: list[TokenLogprob] = []

    def on_logprobs(got: list[TokenLogprob]) -> None:
        tokens.extend(got)
        calls.append(("logprobs", sum(len(t.token) for t in tokens)))

    texts: list[str] = []

    def on_text(text: str) -> None:
        texts.append(text)
        calls.append(("text", len("".join(texts))))

    truth = truth_from_quiz(quiz)
    with FakeOpenAI(truth, tpr=0.8, tnr=0.8, seed=2, chunk_chars=chunk_chars) as server:
        provider = provider_for(server)
        request = ChatRequest((("user", prompt),), logprobs=True, top_logprobs=3)
        result = await provider.complete(request, on_text=on_text, on_logprobs=on_logprobs)
        await provider.aclose()
        (record,) = server.requests
    assert record.stream and record.logprobs
    # Whenever text is handed on, the tokens covering it already were.
    covered = 0
    for kind, length in calls:
        if kind == "logprobs":
            covered = length
        else:
            assert covered >= length
    assert result.logprobs == tokens
    assert all(len(t.top) <= 3 for t in tokens)
    _check_reply_p_true(result.text, tokens, prompt, quiz)


async def test_non_streamed_logprobs(quiz: Quiz, prompt: str) -> None:
    truth = truth_from_quiz(quiz)
    with FakeOpenAI(truth, tpr=0.8, tnr=0.8, seed=2) as server:
        provider = provider_for(server, stream=False)
        got: list[TokenLogprob] = []
        request = ChatRequest((("user", prompt),), logprobs=True)
        result = await provider.complete(request, on_text=lambda _: None, on_logprobs=got.extend)
        plain = await provider.complete(ChatRequest((("user", prompt),)))
        await provider.aclose()
        first, second = server.requests
    assert not first.stream and first.logprobs and not second.logprobs
    assert result.logprobs is not None and got == result.logprobs
    assert plain.logprobs is None and plain.text == result.text
    _check_reply_p_true(result.text, result.logprobs, prompt, quiz)


async def test_bytes_keep_offsets_when_a_character_spans_tokens() -> None:
    reply = "A1: café\nA2: TRUE\n"
    e_acute = "é".encode()
    pieces = [
        {"token": "A1: caf", "bytes": list(b"A1: caf")},
        {"token": "bytes:\\xc3", "bytes": [e_acute[0]]},  # placeholders, as servers send
        {"token": "bytes:\\xa9", "bytes": [e_acute[1]]},
        {"token": "\nA2:", "bytes": list(b"\nA2:")},
        {"token": " TRUE"},  # no bytes: the token text is used
        {"token": "\n", "bytes": [10]},
    ]
    content = []
    for piece in pieces:
        item = {**piece, "logprob": lp(0.99), "top_logprobs": []}
        if piece["token"] == " TRUE":
            item = {**item, "logprob": lp(0.8)}
            item["top_logprobs"] = [
                {"token": " TRUE", "logprob": lp(0.8)},
                {"token": " FALSE", "logprob": lp(0.2)},
            ]
        content.append(item)
    body = {
        "choices": [
            {
                "message": {"role": "assistant", "content": reply},
                "logprobs": {"content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 6},
    }
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=body))
    provider = OpenAICompatProvider(
        base_url="http://judge.test/v1", model="m", stream=False, transport=transport
    )
    result = await provider.complete(ChatRequest((("user", "x"),), logprobs=True))
    await provider.aclose()
    assert result.logprobs is not None
    assert "".join(t.token for t in result.logprobs) == reply
    index = LogprobIndex()
    index.extend(result.logprobs)
    verdict = parse_reply(reply, ["A2"])["A2"]
    assert index.p_true_at(verdict.offset or 0, True) == pytest.approx(0.8)


# -- vet runs -------------------------------------------------------------------------------


async def test_vet_run_stores_p_true_in_sqlite(tmp_path: Path) -> None:
    quiz = make_quiz(10, wrong_every=3)
    truth = truth_from_quiz(quiz)
    db = tmp_path / "q.db"
    with FakeOpenAI(truth, tpr=0.8, tnr=0.8, seed=5) as server:
        events, summary = await collect(quiz, provider_for(server), db, settings=LOGPROBS)
        assert all(r.logprobs for r in server.requests)
    received = verdicts_of(events)
    assert len(received) == 40 and all(e.p_true is not None for e in received.values())
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT a.text, v.verdict, v.p_true FROM verdicts v JOIN assertions a"
            " USING (run_id, seq)"
        ).fetchall()
        cached = conn.execute("SELECT p_true FROM cache").fetchall()
    assert len(rows) == 40 and len(cached) == 40
    for text, verdict, p_true in rows:
        assert p_true == pytest.approx(expected_p_true(text, truth[text], bool(verdict), seed=5))
        assert (p_true > 0.5) == bool(verdict)  # the said word is the likelier one
    assert all(p is not None for (p,) in cached)
    # The summary carries them per option, with the graded score.
    for q in summary.questions:
        assert len(q.p_true) == 4 and all(p is not None for p in q.p_true)
        assert q.graded == pytest.approx(graded_key_score(q.p_true, q.key, 0.95))
    scored = [e for e in events if isinstance(e, QuestionScored)]
    assert {e.question_id: e.graded for e in scored} == {
        q.question_id: q.graded for q in summary.questions
    }


async def test_without_logprobs_nothing_is_asked_and_p_true_is_unknown(tmp_path: Path) -> None:
    quiz = make_quiz(3)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        events, summary = await collect(quiz, provider_for(server), tmp_path / "q.db")
        assert not any(r.logprobs for r in server.requests)
    assert all(e.p_true is None for e in verdicts_of(events).values())
    assert all(q.graded is None and set(q.p_true) == {None} for q in summary.questions)


async def test_resume_and_cache_restore_p_true(tmp_path: Path) -> None:
    quiz = make_quiz(10)
    db = tmp_path / "q.db"
    settings = VetSettings(logprobs=True, batch_size=5, concurrency=1)
    with FakeOpenAI(truth_from_quiz(quiz), tpr=0.8, tnr=0.8) as server:
        store = Store(db)
        run = VetRun(quiz, provider_for(server), store, load_prompt("judge_assertions"), settings)
        first: dict[int, float | None] = {}
        events = run.events()
        async for event in events:
            if isinstance(event, VerdictReceived):
                first[event.seq] = event.p_true
            if isinstance(event, UsageUpdated) and len(first) >= 10:
                break  # two batches stored, then the run is "killed"
        await events.aclose()
        run_id = run.run_id
        store.close()
        assert 10 <= len(first) < 40 and all(p is not None for p in first.values())

        resumed, summary = await collect(
            quiz, provider_for(server), db, settings=settings, resume=run_id
        )
        again = verdicts_of(resumed)
        restored = {s: e.p_true for s, e in again.items() if e.cached}
        assert restored and restored == {s: first[s] for s in restored}
        assert all(e.p_true is not None for e in again.values())
        assert all(q.graded is not None for q in summary.questions)

        n_requests = len(server.requests)
        rerun, _ = await collect(quiz, provider_for(server), db, settings=settings)
        assert len(server.requests) == n_requests  # all from the cache
    from_cache = verdicts_of(rerun)
    by_uid = {(e.question_id, e.option_index): e.p_true for e in again.values()}
    assert all(e.cached for e in from_cache.values())
    assert {(e.question_id, e.option_index): e.p_true for e in from_cache.values()} == by_uid


async def test_a_server_that_rejects_logprobs_is_asked_again_without(tmp_path: Path) -> None:
    quiz = make_quiz(10)
    with FakeOpenAI(truth_from_quiz(quiz), reject_logprobs=True) as server:
        provider = provider_for(server)
        events, summary = await collect(
            quiz, provider, tmp_path / "q.db", settings=VetSettings(logprobs=True, batch_size=10)
        )
        log = server.requests
    assert summary.status == "finished" and summary.judged == 40 and summary.unjudged == 0
    rejected = [r for r in log if r.status == 400]
    assert rejected and all(r.logprobs for r in rejected)
    # Refused at most once per request in flight, and never asked for again after that: each
    # batch's first request may carry logprobs, its retry does not. (Not "every request the
    # server logs after the first plain one": a request built before the first refusal came back
    # can reach the server after another batch's plain retry when its connection is slow.)
    by_batch: dict[tuple[str, ...], list[bool]] = {}
    for r in log:
        by_batch.setdefault(r.texts, []).append(r.logprobs)
    assert len(by_batch) == 4
    assert all(asked[1:] == [False] * (len(asked) - 1) for asked in by_batch.values())
    assert len(rejected) <= 4
    assert len([r for r in log if r.status == 200]) == 4
    assert provider.logprobs_rejected
    notices = [e for e in events if isinstance(e, BatchRetried)]
    assert notices and all("without logprobs" in e.error for e in notices)
    assert all(e.p_true is None for e in verdicts_of(events).values())


async def test_logprobs_on_makes_a_refusal_stop_the_run(tmp_path: Path) -> None:
    quiz = make_quiz(10)
    with FakeOpenAI(truth_from_quiz(quiz), reject_logprobs=True) as server:
        _, summary = await collect(
            quiz,
            provider_for(server, logprobs="on"),
            tmp_path / "q.db",
            settings=VetSettings(logprobs=True, batch_size=10, concurrency=1),
        )
        log = server.requests
    assert summary.status == "failed" and "logprobs" in (summary.error or "")
    assert summary.unjudged == 40 and len(log) == 1


async def test_logprobs_off_in_the_provider_sends_none(tmp_path: Path) -> None:
    quiz = make_quiz(2)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        await collect(
            quiz, provider_for(server, logprobs="off"), tmp_path / "q.db", settings=LOGPROBS
        )
        assert not any(r.logprobs for r in server.requests)


async def _logprob_run(quiz: Quiz, db: Path, provider: object) -> RunSummary:
    _, summary = await collect(quiz, provider, db, settings=LOGPROBS)  # type: ignore[arg-type]
    return summary


async def test_graded_score_ranks_wrong_keys_below_right_ones(tmp_path: Path) -> None:
    quiz = make_quiz(120, wrong_every=4)
    truth = truth_from_quiz(quiz)
    simulated = SimulatedProvider(truth, tpr=0.8, tnr=0.8, seed=9)
    summary = await _logprob_run(quiz, tmp_path / "sim.db", simulated)
    wrong = {f"q{i}" for i in range(4, 121, 4)}
    graded = {q.question_id: q.graded for q in summary.questions}
    assert all(g is not None for g in graded.values())
    # "Key is wrong" scored by 1 − graded: wrong keys should rank above right ones.
    wrongness = {qid: 1 - (g or 0) for qid, g in graded.items()}
    score = auroc(
        [wrongness[q] for q in wrong], [wrongness[q] for q in wrongness if q not in wrong]
    )
    assert score > 0.5
    # …and above the verdict-only posterior: P(true) carries how sure the judge was.
    by_verdicts = auroc(
        [1 - q.confidence for q in summary.questions if q.question_id in wrong],
        [1 - q.confidence for q in summary.questions if q.question_id not in wrong],
    )
    assert score > by_verdicts

    # The same judge over HTTP reports the same P(true): one oracle for both.
    with FakeOpenAI(truth, tpr=0.8, tnr=0.8, seed=9) as server:
        over_http = await _logprob_run(quiz, tmp_path / "http.db", provider_for(server))
    assert [q.p_true for q in over_http.questions] == pytest.approx(
        [q.p_true for q in summary.questions]
    )


# -- the official openai client reads the fake server's logprobs ----------------------------


def test_openai_client_parses_logprobs(quiz: Quiz, prompt: str) -> None:
    truth = truth_from_quiz(quiz)
    with FakeOpenAI(truth, tpr=0.8, tnr=0.8, seed=2) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        try:
            messages = [{"role": "user", "content": prompt}]
            whole = client.chat.completions.create(
                model="fake-judge",
                messages=messages,  # type: ignore[arg-type]
                logprobs=True,
                top_logprobs=2,
            )
            stream = client.chat.completions.create(
                model="fake-judge",
                messages=messages,  # type: ignore[arg-type]
                logprobs=True,
                top_logprobs=2,
                stream=True,
            )
            streamed, text = [], []
            for chunk in stream:
                for choice in chunk.choices:
                    if choice.logprobs is not None and choice.logprobs.content:
                        streamed += choice.logprobs.content
                    text.append(choice.delta.content or "")
        finally:
            client.close()
    content = whole.choices[0].message.content or ""
    assert content == oracle_reply(prompt, truth, tpr=0.8, tnr=0.8, seed=2)
    logprobs = whole.choices[0].logprobs
    assert logprobs is not None and logprobs.content is not None
    assert "".join(t.token for t in logprobs.content) == content == "".join(text)
    assert [t.model_dump() for t in streamed] == [t.model_dump() for t in logprobs.content]
    assert all(len(t.top_logprobs) <= 2 for t in logprobs.content)
    assert all(bytes(t.bytes or []).decode() == t.token for t in logprobs.content)
    tokens = [
        TokenLogprob(t.token, t.logprob, tuple((a.token, a.logprob) for a in t.top_logprobs))
        for t in logprobs.content
    ]
    _check_reply_p_true(content, tokens, prompt, quiz)


def test_fake_server_rejects_bad_top_logprobs(prompt: str) -> None:
    with FakeOpenAI({}) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
        url = server.base_url + "/chat/completions"
        bad = httpx.post(url, json={**body, "top_logprobs": 3})  # without logprobs: true
        too_many = httpx.post(url, json={**body, "logprobs": True, "top_logprobs": 21})
        zero = httpx.post(url, json={**body, "logprobs": True})
    assert bad.status_code == too_many.status_code == 400
    items = zero.json()["choices"][0]["logprobs"]["content"]
    assert items and all(item["top_logprobs"] == [] for item in items)


# -- config, TUI detail, reports, CLI -------------------------------------------------------


def test_config_logprobs_setting(tmp_path: Path) -> None:
    assert load_config(environ={}).judge.logprobs == "auto"
    assert load_config(environ={"QUIZTUI_JUDGE_LOGPROBS": "off"}).judge.logprobs == "off"
    path = tmp_path / "c.toml"
    path.write_text('[judge]\nlogprobs = "sometimes"\n')
    with pytest.raises(ConfigError, match="judge.logprobs"):
        load_config(path, environ={})
    path.write_text('[judge]\nprovider = "openai-compat"\nmodel = "m"\nlogprobs = "on"\n')
    provider = build_provider(load_config(path, environ={}), make_quiz(1))
    assert isinstance(provider, OpenAICompatProvider) and provider.logprobs == "on"


async def test_detail_view_shows_p_true_and_the_graded_score(tmp_path: Path) -> None:
    quiz = make_quiz(4, wrong_every=2)
    simulated = SimulatedProvider(truth_from_quiz(quiz), tpr=0.8, tnr=0.8, seed=1)
    events, _ = await collect(quiz, simulated, tmp_path / "q.db", settings=LOGPROBS)
    state = RunState(quiz, clock=lambda: 0.0)
    for event in events:
        state.apply(event)
    record = state.questions["q2"]
    assert record.score is not None and record.score.graded is not None
    assert f"graded {record.score.graded:.2f}" in summary_text(record, 4).plain
    for index, assertion in record.options.items():
        assert assertion.p_true is not None
        assert f"P(true) {assertion.p_true:.2f}" in option_text(record, index).plain
    # Unknown P(true) shows as a dash.
    record.options[0].p_true = None
    assert f"P(true) {DASH}" in option_text(record, 0).plain


async def test_reports_carry_p_true_and_graded(tmp_path: Path) -> None:
    quiz = make_quiz(3)
    simulated = SimulatedProvider(truth_from_quiz(quiz), seed=1)
    _, summary = await collect(quiz, simulated, tmp_path / "q.db", settings=LOGPROBS)
    data = json.loads(to_json(summary))
    q = data["questions"][0]
    assert len(q["p_true"]) == 4 and q["graded"] == pytest.approx(summary.questions[0].graded)
    rows = list(csv.DictReader(io.StringIO(to_csv(summary))))
    assert ",graded,p_true,lint," in to_csv(summary).splitlines()[0]
    assert rows[0]["p_true"].count(";") == 3
    md = to_markdown(summary)
    assert "| graded | P(true) |" in md
    assert f"{summary.questions[0].graded:.3f}" in md


def test_headless_cli_reports_p_true_with_the_default_config(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "quiztui",
            "vet",
            str(REPO / "sample_quizzes" / "planted_errors.json"),
            "--no-tui",
            "--sim-latency",
            "0",
            "--db",
            str(tmp_path / "q.db"),
            "--format",
            "json",
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    questions = json.loads(out.stdout)["questions"]
    assert all(p is not None for q in questions for p in q["p_true"])
    assert all(q["graded"] is not None for q in questions)


def test_tokens_go_with_the_chunk_they_start_in() -> None:
    tokens = [tok(t, 0.9) for t in ("A1", ":", " TRUE", "\n", "A2", ": F", "\n")]
    chunks = ["A1: T", "RUE\nA2", ":", " F\n"]
    got = tokens_by_chunk(tokens, chunks)
    assert [[t.token for t in group] for group in got] == [
        ["A1", ":", " TRUE"],
        ["\n", "A2"],
        [": F"],
        ["\n"],
    ]


@pytest.mark.parametrize("top", [5, "A1", {"token": "A1", "logprob": -0.1}, None, [1, {"x": 2}]])
def test_a_hostile_top_logprobs_leaves_its_token_without_alternatives(top: object) -> None:
    """A reply is untrusted: a ``top_logprobs`` that is not a list of entries (a number raised
    TypeError here and cost the batch) gives the token no alternatives; its text and logprob stay."""
    from quiztui.providers.openai_compat import _parse_logprobs, _TokenTexts

    item = {"token": "A1", "logprob": -0.5, "bytes": [65, 49], "top_logprobs": top}
    (token,) = _parse_logprobs({"content": [item]}, _TokenTexts())
    assert (token.token, token.logprob, token.top) == ("A1", -0.5, ())


# -- the parse of a streamed reply's logprobs, against the eager reading it replaced ---------------


class _EagerTexts:
    """The token texts as every token was decoded before: the incremental decoder throughout."""

    def __init__(self) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def text(self, item: dict[str, object]) -> str:
        raw = item.get("bytes")
        if isinstance(raw, list) and raw:
            try:
                data = bytes(raw)
            except (TypeError, ValueError):
                pass
            else:
                return self._decoder.decode(data)
        token = item.get("token")
        return token if isinstance(token, str) else ""


def _eager_number(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _eager_tokens(content: list[object]) -> list[tuple[str, float, tuple[tuple[str, float], ...]]]:
    """Each token's (text, logprob, alternatives) as the parse read them all on arrival."""
    texts = _EagerTexts()
    out = []
    for item in content:
        if not isinstance(item, dict):
            continue
        top = []
        alternatives = item.get("top_logprobs")
        for alt in alternatives if isinstance(alternatives, list) else ():
            if isinstance(alt, dict) and isinstance(alt.get("token"), str):
                top.append((alt["token"], _eager_number(alt.get("logprob"))))
        out.append((texts.text(item), _eager_number(item.get("logprob")), tuple(top)))
    return out


def _same_number(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


_ALTERNATIVE = st.one_of(
    st.fixed_dictionaries(
        {"token": st.text(max_size=4), "logprob": st.floats(-20, 0)},
        optional={"bytes": st.lists(st.integers(0, 255), max_size=3)},
    ),
    st.fixed_dictionaries({"token": st.integers(), "logprob": st.floats(-20, 0)}),
    st.fixed_dictionaries(
        {"token": st.text(max_size=2)}, optional={"logprob": st.text(max_size=3)}
    ),
    st.integers(),
    st.none(),
)


@st.composite
def _streamed_content(draw: st.DrawFn) -> list[object]:
    """A reply's ``logprobs.content`` as servers (and hostile ones) send it: UTF-8 text cut into
    tokens at any byte, a character's bytes split between tokens, tokens without bytes, bytes that
    are no bytes, alternatives of every shape."""
    data = draw(st.text(max_size=40)).encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    content: list[object] = []
    for piece in pieces:
        item: dict[str, object] = {"token": piece.decode("utf-8", "replace")}
        shape = draw(st.sampled_from(["bytes", "bytes", "bytes", "none", "hostile"]))
        if shape == "bytes":
            item["bytes"] = list(piece)
        elif shape == "hostile":
            item["bytes"] = draw(st.sampled_from([[256], ["a"], [-1], "ab", [1.5]]))
        item["logprob"] = draw(
            st.one_of(st.floats(-30, 0), st.integers(-3, 0), st.text(max_size=2))
        )
        item["top_logprobs"] = draw(
            st.one_of(
                st.lists(_ALTERNATIVE, max_size=4), st.integers(), st.none(), st.text(max_size=2)
            )
        )
        content.append(item)
    if draw(st.booleans()):
        content.insert(draw(st.integers(0, len(content))), draw(st.sampled_from([1, "x", None])))
    return content


@settings(max_examples=200, deadline=None)
@given(_streamed_content())
def test_the_lazy_parse_reads_each_token_as_the_eager_one_did(content: list[object]) -> None:
    """A streamed reply's tokens are parsed with their alternatives left as the server sent them
    (read when first used, ``core/logprobs.ServerAlternatives``) and their texts decoded in one
    call where the bytes are whole characters: each token reads exactly as when every token went
    through the incremental decoder and every alternative was read on arrival — texts, logprobs
    (NaN for no number), alternatives (iterated, compared with the tuple, hashed, indexed)."""
    from quiztui.providers.openai_compat import _parse_logprobs, _TokenTexts

    got = _parse_logprobs({"content": content}, _TokenTexts())
    want = _eager_tokens(content)
    assert len(got) == len(want)
    for token, (text, logprob, top) in zip(got, want, strict=True):
        assert token.token == text
        assert _same_number(token.logprob, logprob)
        assert len(token.top) == len(top)
        for (a, p), (b, q) in zip(token.top, top, strict=True):
            assert a == b and _same_number(p, q)
        if not any(math.isnan(p) for _, p in top):
            assert token.top == top and top == token.top and hash(token.top) == hash(top)
            assert list(token.top) == list(top) and token.top[:1] == top[:1]
            assert token == TokenLogprob(text, logprob, top) or math.isnan(logprob)


def test_server_alternatives_stand_for_the_pairs_of_the_servers_list() -> None:
    """A token's alternatives as the server sent them read as the tuple of (token, logprob)
    pairs they stand for: an item that is no object with a string token left out, a logprob that
    is no number NaN; and P(true) reads them as it reads that tuple."""
    raw: list[object] = [{"token": " TRUE", "logprob": -0.1}, 7, {"token": " FALSE"}, {"x": 1}]
    top = ServerAlternatives(raw)
    assert len(top) == 2 and top[0] == (" TRUE", -0.1) and math.isnan(top[1][1])
    assert [t for t, _ in top] == [" TRUE", " FALSE"]
    assert repr(ServerAlternatives([{"token": "a", "logprob": -1.0}])) == "(('a', -1.0),)"
    assert ServerAlternatives([]) == () and not ServerAlternatives([5])
    one = ServerAlternatives([{"token": "a", "logprob": -1}])
    assert one == ServerAlternatives([{"token": "a", "logprob": -1.0}]) == (("a", -1.0),)
    assert hash(one) == hash((("a", -1.0),)) and (one == "a") is False
    sent = [
        {"token": " TRUE", "logprob": math.log(0.6)},
        {"token": " FALSE", "logprob": math.log(0.3)},
    ]
    pairs = ((" TRUE", math.log(0.6)), (" FALSE", math.log(0.3)))
    lazy = TokenLogprob(" TRUE", math.log(0.6), ServerAlternatives(sent))
    assert p_true_of(lazy) == p_true_of(TokenLogprob(" TRUE", math.log(0.6), pairs))
    assert p_true_of(lazy) == pytest.approx(2 / 3)
