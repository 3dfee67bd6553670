"""Issue 18, item 4: tokens counted by the server's own tokenizer where a stream carries no usage
(llama.cpp's ``POST /tokenize``, llama-cpp-python's ``POST /extras/tokenize``), the estimate where
there is none, and the label saying which; and llama-cpp-python, found by its tokenizer, asked the
way it serves (one request at a time, ``json_object`` structured output, no logprobs under
"auto"). Against the loopback fake, whose tokenizer counts one token per word — a count unlike the
estimate's, so a figure shows which of the two made it."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from pipeline_helpers import make_quiz
from test_estimate import run_all, vet_run

from quiztui.pipeline.events import UsageUpdated
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.probe import server_tokenizer
from quiztui.providers.retry import RetryPolicy
from quiztui.report.progress import Progress
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

FAST = RetryPolicy(max_retries=4, base_delay=0.02, max_delay=0.2)


def provider(server: FakeOpenAI, **kw: object) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        base_url=server.base_url,
        model="fake-judge",
        retry=FAST,
        **kw,  # type: ignore[arg-type]
    )


def chats(server: FakeOpenAI):  # type: ignore[no-untyped-def]
    return [r for r in server.requests if r.path.endswith("/chat/completions")]


def words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize(
    ("server", "path"),
    [("llama.cpp", "/tokenize"), ("llama-cpp-python", "/extras/tokenize")],
)
async def test_usage_less_streams_are_counted_by_the_servers_tokenizer(
    tmp_path: Path, server: str, path: str
) -> None:
    quiz = make_quiz(6)
    with FakeOpenAI(truth_from_quiz(quiz), usage=False, tokenize=server) as fake:
        judge = provider(fake)
        judge.probe()
        assert judge.tokenizer is not None and judge.tokenizer.server == server
        with Store(tmp_path / "q.db") as store:
            events, summary = await run_all(vet_run(quiz, judge, store))
        await judge.aclose()
        sent = chats(fake)
        tokenized = [r for r in fake.requests if r.path == path and r.status == 200]
    usage = [e for e in events if isinstance(e, UsageUpdated)]
    # Each reply's prompt and text went to the tokenizer (besides the probe's one word).
    assert len(tokenized) == 1 + 2 * len(sent)
    assert judge.usage.counted == len(sent) and judge.usage.estimated == 0
    assert not summary.tokens_estimated
    assert usage[-1].tokens_note == "counted by the server's tokenizer"
    # One token per word, as the fake's tokenizer counts: not the estimate's chars / 4.
    # After the probe's word: each request's prompt and reply (requests run side by side, so
    # the pairs interleave); a prompt is the text that carries the batch's assertions.
    counted = fake.tokenized[1:]
    asked = {text for r in sent for text in r.texts}
    prompts = [t for t in counted if any(a in t for a in asked)]
    replies = [t for t in counted if not any(a in t for a in asked)]
    assert len(prompts) == len(replies) == len(sent)
    assert summary.tokens_in == sum(words(t) for t in prompts) > 0
    assert summary.tokens_out == sum(words(t) for t in replies) > 0


async def test_without_a_tokenizer_the_figures_are_estimated_and_labelled_so(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(4)
    with FakeOpenAI(truth_from_quiz(quiz), usage=False) as fake:
        judge = provider(fake)
        judge.probe()
        with Store(tmp_path / "q.db") as store:
            events, summary = await run_all(vet_run(quiz, judge, store))
        await judge.aclose()
        paths = [r.path for r in fake.requests if r.method == "POST" and "tokenize" in r.path]
    assert judge.tokenizer is None and paths == ["/tokenize", "/extras/tokenize"]  # asked once
    assert summary.tokens_estimated and judge.usage.estimated > 0 and judge.usage.counted == 0
    assert [e for e in events if isinstance(e, UsageUpdated)][-1].tokens_note == "estimated"


async def test_a_usage_carrying_server_is_not_asked_to_tokenize(tmp_path: Path) -> None:
    quiz = make_quiz(4)
    with FakeOpenAI(truth_from_quiz(quiz), tokenize="llama.cpp") as fake:
        judge = provider(fake)
        judge.probe()
        with Store(tmp_path / "q.db") as store:
            events, summary = await run_all(vet_run(quiz, judge, store))
        await judge.aclose()
        tokenized = [r for r in fake.requests if r.path == "/tokenize"]
    assert len(tokenized) == 1  # the probe's only: the server's usage stands
    assert not summary.tokens_estimated and judge.usage.counted == 0
    assert [e for e in events if isinstance(e, UsageUpdated)][-1].tokens_note == ""


async def test_llama_cpp_python_is_asked_one_at_a_time_in_json_object_without_logprobs(
    tmp_path: Path,
) -> None:
    """The issue's set-up: one slot that ends a running stream when another request waits, no
    usage in streams, json_object structured output. Found by its /extras/tokenize, it is asked
    one request at a time (its tokenize calls included), so no stream is cut."""
    quiz = make_quiz(12)
    with FakeOpenAI(
        truth_from_quiz(quiz),
        slots=1,
        stream_delay=0.002,
        usage=False,
        structured="json_object",
        tokenize="llama-cpp-python",
    ) as fake:
        judge = provider(fake, concurrency=16)
        judge.probe()
        settings = VetSettings(batch_size=6, concurrency=16, logprobs=True)
        with Store(tmp_path / "q.db") as store:
            _, summary = await run_all(vet_run(quiz, judge, store, settings=settings))
        await judge.aclose()
        sent = chats(fake)
        interrupted = fake.interrupted
    assert judge.limiter.limit == judge.limiter.max_limit == 1
    assert interrupted == 0  # nothing waited while a stream ran: not even a tokenize call
    assert {r.response_format for r in sent} == {"json_object"}  # no json_schema 500 first
    assert {r.status for r in sent} == {200}
    assert not any(r.logprobs for r in sent)
    assert (summary.judged, summary.unjudged) == (48, 0)
    assert not summary.tokens_estimated and judge.usage.counted == len(sent)


@pytest.mark.parametrize(("logprobs", "asked"), [("on", True), ("auto", False)])
async def test_logprobs_on_still_asks_llama_cpp_python(
    tmp_path: Path, logprobs: str, asked: bool
) -> None:
    quiz = make_quiz(3)
    with FakeOpenAI(truth_from_quiz(quiz), tokenize="llama-cpp-python") as fake:
        judge = provider(fake, logprobs=logprobs)
        judge.probe()
        settings = VetSettings(logprobs=True)  # the run wants them (judge.logprobs not "off")
        with Store(tmp_path / "q.db") as store:
            await run_all(vet_run(quiz, judge, store, settings=settings))
        await judge.aclose()
        sent = chats(fake)
    assert sent and {r.logprobs for r in sent} == {asked}


def test_a_tokenizer_is_looked_for_on_loopback_and_lan_only() -> None:
    # No request at all: neither host is local, so nothing is sent (no DNS, no connection).
    assert server_tokenizer("https://api.openai.com/v1") is None
    assert server_tokenizer("http://8.8.8.8:8080/v1") is None


@pytest.mark.parametrize(
    ("note", "shown"),
    [
        ("estimated", "tokens 120/40 (estimated)"),
        ("counted by the server's tokenizer", "tokens 120/40 (counted by the server's tokenizer)"),
        ("", "tokens 120/40 ·"),
    ],
)
def test_the_live_progress_line_says_how_tokens_were_had(note: str, shown: str) -> None:
    stream = io.StringIO()
    clock = iter(range(100))
    progress = Progress(stream, clock=lambda: float(next(clock)))
    event = UsageUpdated(
        requests=2,
        retries=0,
        tokens_in=120,
        tokens_out=40,
        judged=4,
        unjudged=0,
        total=8,
        cached=0,
        tokens_note=note,
    )
    progress.usage(event)
    assert shown in stream.getvalue()


async def test_the_tui_stats_line_says_how_tokens_were_had() -> None:
    from collections.abc import AsyncIterator

    from rich.text import Text
    from textual.widgets import Static
    from tui_helpers import constant_clock, make_quiz, wait_until

    from quiztui.pipeline.events import RunStarted, VetEvent
    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.services import AppServices

    quiz = make_quiz()
    done = asyncio.Event()

    async def stream() -> AsyncIterator[VetEvent]:
        yield RunStarted(
            run_id=1,
            quiz_title=quiz.title,
            quiz_path=None,
            questions=12,
            assertions=48,
            batches=6,
            already_judged=0,
            judge_label="llama-cpp-python",
            simulated=False,
            seed=1,
            batch_size=8,
            concurrency=1,
            calibration="uncalibrated",
        )
        yield UsageUpdated(
            requests=2,
            retries=0,
            tokens_in=1200,
            tokens_out=300,
            judged=8,
            unjudged=0,
            total=48,
            cached=0,
            tokens_note="counted by the server's tokenizer",
        )
        await done.wait()

    services = AppServices(start_run=stream, judge_label="llama-cpp-python", simulated=False)
    app = QuiztuiApp(quiz, services, clock=constant_clock(), flush_interval=0.02)
    async with app.run_test(size=(120, 40)) as pilot:

        def line() -> str:
            content = app.vet_screen.query_one("#stats-line", Static).content
            return content.plain if isinstance(content, Text) else str(content)

        shown = "tokens 1,200 in / 300 out (counted by the server's tokenizer)"
        await wait_until(pilot, lambda: shown in line(), what="the tokens' label")
        done.set()
