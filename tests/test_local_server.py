"""Issue 18, LO2: a judge on your own box. Each failure seen against llama.cpp's Python server,
reproduced with the loopback fake: a one-slot server that ends running streams with [DONE] and no
finish reason when another request waits, streams without usage, replies that echo the prompt,
name no option or stop at the token limit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pipeline_helpers import make_quiz
from test_estimate import run_all, served, vet_run

from quiztui.core.estimate import ModelPrice
from quiztui.pipeline.events import AssertionUnjudged, VerdictReceived
from quiztui.pipeline.vet import VetSettings
from quiztui.providers.base import ChatRequest, StreamInterrupted
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import Retryable, RetryPolicy
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

FAST = RetryPolicy(max_retries=4, base_delay=0.02, max_delay=0.2)
PRICE = ModelPrice(input_per_mtok=0.15, output_per_mtok=0.6)


def provider(server: FakeOpenAI, **kw: object) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        base_url=server.base_url,
        model="fake-judge",
        retry=kw.pop("retry", FAST),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


# (d) concurrency that fits the server ---------------------------------------------------------


async def test_cut_streams_at_concurrency_16_against_a_one_slot_server_converge(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(12)  # 48 assertions, as in the issue
    with FakeOpenAI(truth_from_quiz(quiz), slots=1, stream_delay=0.002) as server:
        judge = provider(server, concurrency=16)
        settings = VetSettings(batch_size=3, concurrency=16)
        with Store(tmp_path / "q.db") as store:
            _, summary = await run_all(vet_run(quiz, judge, store, settings=settings))
        interrupted = server.interrupted
        requests, _, _ = served(server)
    print(
        f"\none-slot server, concurrency 16: {summary.judged}/48 judged, {interrupted} streams"
        f" ended early, {requests} chat requests for 16 batches, limit now {judge.limiter.limit}"
    )
    assert interrupted > 0  # the server did cut streams
    assert summary.status == "finished"
    assert (summary.judged, summary.unjudged) == (48, 0)
    assert judge.limiter.limit == 1  # down to the server's one slot
    await judge.aclose()


async def test_a_stream_ending_with_done_and_no_finish_reason_is_a_cut_stream() -> None:
    reply = "A1: TRUE\n" * 5
    with FakeOpenAI({}, slots=1, stream_delay=0.02, responder=lambda p: reply) as server:
        judge = provider(server, concurrency=2, adaptive=False)
        request = ChatRequest(messages=(("user", "say it"),))
        seen: list[str] = []
        first = asyncio.create_task(judge.complete(request, on_text=seen.append))
        while not seen:  # the first stream is running
            await asyncio.sleep(0.005)
        second = await judge.complete(request, on_text=lambda _: None)
        with pytest.raises(StreamInterrupted, match="without a finish reason") as cut:
            await first
        await judge.aclose()
        interrupted = server.interrupted
    # Ended by the server with [DONE] when the second request came: a cut stream, never a
    # complete reply; what came before the cut is kept for the caller (which re-asks the rest).
    assert interrupted == 1
    assert cut.value.partial == "".join(seen) and 0 < len(cut.value.partial) < len(reply)
    assert (second.finish_reason, second.text) == ("stop", reply)


@pytest.mark.parametrize(
    ("kind", "signal"),
    [("drop", "connection reset"), ("cut", "stream cut halfway"), ("429", "rate limit")],
)
async def test_overload_signals_lower_the_concurrency_limit(kind: str, signal: str) -> None:
    with FakeOpenAI({}, responder=lambda p: "A1: TRUE\n") as server:
        judge = provider(server, concurrency=16)
        server.inject(kind)
        result = await judge.complete(
            ChatRequest(messages=(("user", "x"),)), on_text=lambda _: None
        )
        await judge.aclose()
    assert result.text == "A1: TRUE\n" and result.attempts == 2, signal
    assert judge.limiter.limit == 8, signal


def test_503_timeouts_and_resets_are_overload_signals_and_500_is_not() -> None:
    import httpx

    assert Retryable.from_status(503, "HTTP 503", None, rate_limited=False).overloaded
    assert not Retryable.from_status(500, "HTTP 500", None, rate_limited=False).overloaded
    assert Retryable.from_transport(httpx.ReadTimeout("t")).overloaded
    assert Retryable.from_transport(httpx.RemoteProtocolError("reset")).overloaded


# (c) tokens never silently zero ----------------------------------------------------------------


async def test_usage_less_streams_give_estimated_tokens_and_an_enforced_budget(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(100)
    with FakeOpenAI(truth_from_quiz(quiz), usage=False) as server:
        judge = provider(server)
        with Store(tmp_path / "q.db") as store:
            _, full = await run_all(vet_run(quiz, judge, store))
            n, prompt_tokens, completion_tokens = served(server)
            server.clear_log()
            budget = round(PRICE.cost(prompt_tokens, completion_tokens) * 0.4, 6)
            no_cache = VetSettings(use_cache=False)
            _, stopped = await run_all(
                vet_run(quiz, judge, store, price=PRICE, budget=budget, settings=no_cache)
            )
            batch = max(PRICE.cost(r.prompt_tokens, r.completion_tokens) for r in server.requests)
        await judge.aclose()
    print(
        f"\nno usage in streams: {full.tokens_in}/{full.tokens_out} tokens estimated over {n}"
        f" requests (the server counted {prompt_tokens}/{completion_tokens}); budget"
        f" ${budget:.6f} stopped at ${stopped.cost:.6f}"
    )
    # The same ceil(chars / 4) count the fake server makes: estimated, and not zero.
    assert full.tokens_estimated and (full.tokens_in, full.tokens_out) == (
        prompt_tokens,
        completion_tokens,
    )
    assert full.tokens_in > 0 and full.tokens_out > 0
    assert stopped.status == "stopped" and stopped.tokens_estimated
    assert stopped.cost is not None and 0 < stopped.cost <= budget + batch


# (a) replies judged for what they are ----------------------------------------------------------


def _options_of(prompt: str) -> list[str]:
    return [line for line in prompt.splitlines() if line[:2] in ("A)", "B)", "C)", "D)")]


async def _question_run(tmp_path: Path, server: FakeOpenAI, quiz):  # type: ignore[no-untyped-def]
    judge = provider(server)
    with Store(tmp_path / "q.db") as store:
        events, summary = await run_all(vet_run(quiz, judge, store, mode="question"))
        rows = store.verdicts(summary.run_id)
    await judge.aclose()
    return events, summary, rows


@pytest.mark.parametrize(
    ("name", "reply", "reason"),
    [
        ("echo", lambda p: "\n".join(_options_of(p)), "echoed the prompt"),
        ("whole prompt echoed", lambda p: p, "echoed the prompt"),
        ("no option", lambda p: "Hard to say; both look plausible.", "named no option"),
        ("a letter past the options", lambda p: "ANSWER: F - none fit", "named no option"),
    ],
)
async def test_per_question_replies_without_an_answer_are_unjudged_with_their_reason(
    tmp_path: Path, name: str, reply, reason: str
) -> None:  # type: ignore[no-untyped-def]
    quiz = make_quiz(3)
    with FakeOpenAI(truth_from_quiz(quiz), responder=reply) as server:
        events, summary, rows = await _question_run(tmp_path, server, quiz)
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert not [e for e in events if isinstance(e, VerdictReceived)], name
    assert summary.judged == 0 and summary.unjudged == 12
    # Re-asked within the limit (max_reasks 2: three requests per question), never a verdict.
    assert len(chats) == 3 * 3
    assert {v.unjudged_reason for v in rows.values()} == {f"{reason} (after 3 attempts)"}
    unjudged = [e for e in events if isinstance(e, AssertionUnjudged)]
    assert len(unjudged) == 12 and all(e.reason.startswith(reason) for e in unjudged)


async def test_an_echo_followed_by_an_answer_and_a_lone_option_line_are_answers(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(4)

    def reply(prompt: str) -> str:
        options = _options_of(prompt)
        if "1 + 1" in prompt or "2 + 2" in prompt:
            return "\n".join(options) + "\nANSWER: A - the sum"
        return options[0]  # "A) 6": the option line alone, as an answer

    with FakeOpenAI(truth_from_quiz(quiz), responder=reply) as server:
        _, summary, _ = await _question_run(tmp_path, server, quiz)
    assert (summary.judged, summary.unjudged) == (16, 0)
    assert all(q.verdicts[0] is True for q in summary.questions)


@pytest.mark.parametrize("mode", ["question", "assertion"])
async def test_replies_cut_at_max_tokens_are_unjudged_and_reasked(
    tmp_path: Path, mode: str
) -> None:
    quiz = make_quiz(2)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        server.inject("length", times=100)
        judge = provider(server)
        with Store(tmp_path / "q.db") as store:
            events, summary = await run_all(
                vet_run(quiz, judge, store, mode=mode, settings=VetSettings(mode=mode))
            )
            rows = store.verdicts(summary.run_id)
        await judge.aclose()
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    reasons = {v.unjudged_reason for v in rows.values() if v.verdict is None}
    if mode == "question":  # nothing from a cut answer
        assert not [e for e in events if isinstance(e, VerdictReceived)]
        assert summary.unjudged == 8 and len(chats) == 2 * 3
        assert reasons == {"cut at max_tokens (after 3 attempts)"}
    else:  # the lines before the cut count; the rest is asked again, then unjudged
        assert summary.unjudged > 0 and summary.judged > 0
        assert reasons == {"cut at max_tokens (after 3 attempts)"}
    assert summary.status == "finished"


@pytest.mark.parametrize(("props", "limit"), [(True, 2), (False, 16)])
async def test_the_limit_starts_at_the_slots_a_local_server_reports(
    props: bool, limit: int
) -> None:
    with FakeOpenAI({}, slots=2, props=props) as server:
        judge = provider(server, concurrency=16)
        assert judge.probe() == ["fake-judge"]
        await judge.aclose()
        paths = [r.path for r in server.requests]
    assert judge.limiter.limit == limit and judge.usage.limit == limit
    assert paths[:2] == ["/v1/models", "/props"]  # llama.cpp's /props asked once, answered or not
    assert paths[2:] == ["/tokenize", "/extras/tokenize"]  # its tokenizer looked for (none here)
