"""S3: batch mode (OpenAI Batch, Anthropic Message Batches) end to end against the fake servers.

Real HTTP over loopback, real SQLite files, real processes for the CLI. The fake answers each batch
with the same oracle as its chat endpoint, so a batch run must reach the online run's verdicts.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import quiztui_main
from conftest import REPO
from pipeline_helpers import collect, make_quiz

from quiztui.config import load_config
from quiztui.core.provider_batch import custom_id, request_fingerprint
from quiztui.core.quiz import Quiz
from quiztui.errors import ConfigError
from quiztui.formats import load_quiz
from quiztui.pipeline.batch import BatchProvider, BatchSettings, build_batch_provider
from quiztui.pipeline.events import ProviderBatchStatus, RunFinished, RunSummary, VetEvent
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.batch_anthropic import AnthropicBatchBackend
from quiztui.providers.batch_openai import OpenAIBatchBackend
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.store import Store
from quiztui.testing.fake_anthropic import FakeAnthropic
from quiztui.testing.fake_batches import EXPIRED
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

APIS = ("openai", "anthropic")
FAST = BatchSettings(poll_seconds=0.02, max_wait=60.0, gather_seconds=0.2)
ORACLE: dict[str, Any] = {
    "tpr": 0.85,
    "tnr": 0.85,
    "seed": 7,
}  # an imperfect judge: some verdicts disagree
SAMPLE = REPO / "sample_quizzes" / "planted_errors.json"


@contextmanager
def fake_server(api: str, quiz: Quiz) -> Iterator[FakeOpenAI]:
    server_type = FakeAnthropic if api == "anthropic" else FakeOpenAI
    with server_type(truth_from_quiz(quiz), **ORACLE) as server:
        yield server


def batch_provider(api: str, server: FakeOpenAI, settings: BatchSettings = FAST) -> BatchProvider:
    backend_type = AnthropicBatchBackend if api == "anthropic" else OpenAIBatchBackend
    backend = backend_type(base_url=server.base_url, model="fake-judge", api_key=None)
    name = "anthropic" if api == "anthropic" else "openai-compat"
    return BatchProvider(backend, name=name, settings=settings)


def batch_settings(**kwargs: object) -> VetSettings:
    """Concurrency high enough that every first-pass request is parked at once."""
    return VetSettings(concurrency=1000, **kwargs)  # type: ignore[arg-type]


async def online_summary(quiz: Quiz, db: Path, **kwargs: object) -> RunSummary:
    """The reference: the same quiz judged online by the same oracle."""
    with FakeOpenAI(truth_from_quiz(quiz), **ORACLE) as server:
        provider = OpenAICompatProvider(base_url=server.base_url, model="fake-judge")
        try:
            _, summary = await collect(quiz, provider, db, settings=VetSettings(**kwargs))  # type: ignore[arg-type]
        finally:
            await provider.aclose()
    return summary


def verdicts(summary: RunSummary) -> dict[str, tuple[bool | None, ...]]:
    return {q.question_id: q.verdicts for q in summary.questions}


def chat_requests(server: FakeOpenAI) -> int:
    return sum(r.path in ("/v1/chat/completions", "/v1/messages") for r in server.requests)


# -- the whole flow -------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
async def test_batch_run_reaches_the_online_verdicts_with_one_batch(
    tmp_path: Path, api: str
) -> None:
    quiz = make_quiz(30, wrong_every=4)
    reference = await online_summary(quiz, tmp_path / "online.db")
    with fake_server(api, quiz) as server:
        provider = batch_provider(api, server)
        try:
            events, summary = await collect(
                quiz, provider, tmp_path / "batch.db", settings=batch_settings()
            )
        finally:
            await provider.aclose()
        # One upload and one batch, not 6 chat requests; and it was polled while in progress.
        assert server.batches.creates == {api: 1}
        assert server.batches.uploads == (1 if api == "openai" else 0)
        assert chat_requests(server) == 0
    statuses = [e.status for e in events if isinstance(e, ProviderBatchStatus)]
    assert statuses[-1] == "collected"
    assert "in_progress" in statuses and statuses.count("in_progress") >= 2
    assert statuses[-2] == ("completed" if api == "openai" else "ended")
    assert summary.status == "finished" and summary.unjudged == 0 and summary.judged == 120
    assert verdicts(summary) == verdicts(reference)
    assert [q.badge for q in summary.questions] == [q.badge for q in reference.questions]
    assert summary.requests == 6 and summary.tokens_in > 0 and summary.tokens_out > 0
    with Store(tmp_path / "batch.db") as store:
        record = store.get_run(summary.run_id)
        assert record.params["batch_api"] == api
        assert record.status == "finished"
        (batch,) = store.provider_batches.for_run(summary.run_id)
        assert not batch.pending and batch.completed == 6 and batch.failed == 0
        assert record.judge_label.endswith(f"({api} batch API)")


@pytest.mark.parametrize("api", APIS)
async def test_a_second_batch_run_is_answered_from_the_verdict_cache(
    tmp_path: Path, api: str
) -> None:
    """Batch verdicts go into the same cache as online ones: nothing is submitted again."""
    quiz = make_quiz(12)
    db = tmp_path / "batch.db"
    with fake_server(api, quiz) as server:
        for _ in range(2):
            provider = batch_provider(api, server)
            try:
                _, summary = await collect(quiz, provider, db, settings=batch_settings())
            finally:
                await provider.aclose()
        assert server.batches.creates == {api: 1}
    assert summary.cached == 48 and summary.judged == 48


# -- restart between submit and collect -----------------------------------------------------


async def submit_then_stop(quiz: Quiz, provider: BatchProvider, db: Path) -> int:
    """Run until the provider has accepted the batch, then stop the stream (a closed TUI, a
    cancelled run); returns the run id."""
    with Store(db) as store:
        run = VetRun(quiz, provider, store, load_prompt("judge_assertions"), batch_settings())
        stream = run.events()
        try:
            async for event in stream:
                if isinstance(event, ProviderBatchStatus):
                    break
        finally:
            await stream.aclose()  # type: ignore[attr-defined]  # an async generator
            await provider.aclose()
        return run.run_id


@pytest.mark.parametrize("api", APIS)
async def test_a_stopped_run_collects_its_batch_on_resume_without_resubmitting(
    tmp_path: Path, api: str
) -> None:
    quiz = make_quiz(30, wrong_every=3)
    reference = await online_summary(quiz, tmp_path / "online.db")
    db = tmp_path / "batch.db"
    with fake_server(api, quiz) as server:
        server.batches.polls = 3
        run_id = await submit_then_stop(quiz, batch_provider(api, server), db)
        assert server.batches.creates == {api: 1}
        with Store(db) as store:
            (pending,) = store.provider_batches.pending()
            assert pending.run_id == run_id and pending.total == 6
            assert not any(v.verdict is not None for v in store.verdicts(run_id).values())

        # A new process: a new store connection, a new provider, the run resumed.
        provider = batch_provider(api, server)
        try:
            events, summary = await collect(
                quiz, provider, db, settings=batch_settings(), resume=run_id
            )
        finally:
            await provider.aclose()
        assert server.batches.creates == {api: 1}  # collected, not submitted again
        assert chat_requests(server) == 0
    batch_events = [e for e in events if isinstance(e, ProviderBatchStatus)]
    assert batch_events and all(e.resumed for e in batch_events)
    assert batch_events[-1].status == "collected"
    assert summary.run_id == run_id and summary.judged == 120 and summary.unjudged == 0
    assert verdicts(summary) == verdicts(reference)
    with Store(db) as store:
        assert store.provider_batches.pending() == []
        assert store.get_run(run_id).status == "finished"


# -- a partly failed batch ------------------------------------------------------------------


def fail_two_questions(custom: str, prompt: str) -> str | None:
    """q7's assertions fail with an error; q9's expire (each request is one assertion)."""
    del custom
    if "What is 7 + 7?" in prompt:
        return "prompt is too long for this model"
    if "What is 9 + 9?" in prompt:
        return EXPIRED
    return None


@pytest.mark.parametrize("api", APIS)
async def test_failed_requests_end_unjudged_with_their_reason_and_the_rest_is_judged(
    tmp_path: Path, api: str
) -> None:
    quiz = make_quiz(12, wrong_every=5)
    reference = await online_summary(quiz, tmp_path / "online.db", batch_size=1)
    with fake_server(api, quiz) as server:
        server.batches.fail = fail_two_questions
        provider = batch_provider(api, server)
        try:
            events, summary = await collect(
                quiz,
                provider,
                tmp_path / "batch.db",
                settings=batch_settings(batch_size=1, max_reasks=1),
            )
        finally:
            await provider.aclose()
        # The first pass, then one re-ask of the failed part: two batches.
        assert server.batches.creates == {api: 2}
    assert summary.status == "finished"
    assert summary.unjudged == 8 and summary.judged == 40
    by_id = {q.question_id: q for q in summary.questions}
    for qid, why in (("q7", "prompt is too long for this model"), ("q9", "expired")):
        q = by_id[qid]
        assert q.verdicts == (None, None, None, None)  # never false, never dropped
        assert q.badge.value == "incomplete"
        for reason in q.reasons:
            assert reason.startswith("batch request failed: ") and why in reason
            assert "(after 2 attempts)" in reason
    expected = verdicts(reference)
    for qid, got in verdicts(summary).items():
        if qid not in ("q7", "q9"):
            assert got == expected[qid]
    collected = [e for e in events if isinstance(e, ProviderBatchStatus)]
    collected = [e for e in collected if e.status == "collected"]
    assert [(e.completed, e.failed) for e in collected] == [(40, 8), (0, 8)]


# -- the command line -----------------------------------------------------------------------


def cli_env(server: FakeOpenAI, api: str, **batch: str) -> dict[str, str]:
    env = {
        **os.environ,
        "QUIZTUI_JUDGE_PROVIDER": "anthropic" if api == "anthropic" else "openai-compat",
        "QUIZTUI_JUDGE_BASE_URL": server.base_url,
        "QUIZTUI_JUDGE_MODEL": "fake-judge",
        "QUIZTUI_BATCH_POLL_SECONDS": "0.05",
        "QUIZTUI_BATCH_GATHER_SECONDS": "0.3",
    }
    return env | {f"QUIZTUI_BATCH_{k.upper()}": v for k, v in batch.items()}


def quiztui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quiztui", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("api", APIS)
def test_cli_batch_run_reports_like_an_online_run(tmp_path: Path, api: str) -> None:
    quiz = load_quiz(SAMPLE)
    db = str(tmp_path / "q.db")
    with fake_server(api, quiz) as server:
        env = cli_env(server, api)
        out = quiztui(
            env, "vet", str(SAMPLE), "--batch-api", "--no-tui", "--db", db, "--format", "json"
        )
        assert out.returncode in (0, 1), out.stderr
        assert server.batches.creates == {api: 1} and chat_requests(server) == 0
        online_env = env | {"QUIZTUI_JUDGE_PROVIDER": "openai-compat"}
        with FakeOpenAI(truth_from_quiz(quiz), **ORACLE) as online_server:
            online_env["QUIZTUI_JUDGE_BASE_URL"] = online_server.base_url
            ref = quiztui_main(  # the online reference: in this process
                "vet", str(SAMPLE), "--no-tui", "--db", str(tmp_path / "o.db"), "--format", "json",
                env=online_env,
            )  # fmt: skip
    assert "Traceback" not in out.stderr
    report, reference = json.loads(out.stdout), json.loads(ref.stdout)
    assert out.returncode == ref.returncode
    assert report["judged"] == reference["judged"] == sum(q.n for q in quiz.questions)
    assert [q["verdicts"] for q in report["questions"]] == [
        q["verdicts"] for q in reference["questions"]
    ]
    assert f"{api} batch" in out.stderr  # the headless progress names the batch and its status


def pending_batch_ids(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [
            b
            for (b,) in conn.execute(
                "SELECT batch_id FROM provider_batches WHERE collected_at IS NULL"
            )
        ]


@pytest.mark.parametrize("api", APIS)
def test_cli_submit_then_collect_later_and_runs_lists_the_pending_batch(
    tmp_path: Path, api: str
) -> None:
    """max_wait 0: submit and stop (exit 3); `quiztui runs` shows the batch; a plain --resume
    (batch mode is remembered) collects it without submitting again."""
    quiz = load_quiz(SAMPLE)
    db = tmp_path / "q.db"
    with fake_server(api, quiz) as server:
        env = cli_env(server, api)
        out = quiztui(env | {"QUIZTUI_BATCH_MAX_WAIT": "0"}, "vet", str(SAMPLE), "--batch-api",
                      "--no-tui", "--db", str(db), "--format", "json")  # fmt: skip
        assert out.returncode == 3, out.stderr
        assert "Traceback" not in out.stderr and "--resume 1" in out.stderr
        (batch_id,) = pending_batch_ids(db)
        runs = quiztui_main("runs", "--db", str(db), env=env)
        assert runs.returncode == 0, runs.stderr
        assert "pending provider batches (1)" in runs.stdout and batch_id in runs.stdout
        assert "batch-pending" in runs.stdout  # the run's status

        again = quiztui(
            env, "vet", "--resume", "1", "--no-tui", "--db", str(db), "--format", "json"
        )
        assert again.returncode in (0, 1), again.stderr
        assert server.batches.creates == {api: 1}
        report = json.loads(again.stdout)
        assert report["judged"] == sum(q.n for q in quiz.questions) and report["unjudged"] == 0
        assert pending_batch_ids(db) == []
        assert (
            "pending provider batches" not in quiztui_main("runs", "--db", str(db), env=env).stdout
        )


def test_cli_killed_after_submit_resumes_without_resubmitting(tmp_path: Path) -> None:
    quiz = load_quiz(SAMPLE)
    db = tmp_path / "q.db"
    with fake_server("openai", quiz) as server:
        server.batches.polls = 10_000  # never ends while the first process lives
        env = cli_env(server, "openai")
        proc = subprocess.Popen(
            [sys.executable, "-m", "quiztui", "vet", str(SAMPLE), "--batch-api", "--no-tui",
             "--db", str(db)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        wait_for(lambda: db.exists() and bool(pending_batch_ids(db)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert server.batches.creates == {"openai": 1}
        server.batches.polls = 1
        again = quiztui(
            env, "vet", "--resume", "1", "--no-tui", "--db", str(db), "--format", "json"
        )
        assert again.returncode in (0, 1), again.stderr
        assert server.batches.creates == {"openai": 1}
        assert json.loads(again.stdout)["judged"] == sum(q.n for q in quiz.questions)


def wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except sqlite3.OperationalError:
            pass  # the child has created the file but not yet its tables
        time.sleep(0.05)
    raise AssertionError("condition not reached")


@pytest.mark.parametrize("judge", ["simulated", "gemini"])
def test_batch_mode_without_a_batch_api_is_a_clear_config_error(judge: str) -> None:
    env = {**os.environ, "QUIZTUI_JUDGE_PROVIDER": judge, "QUIZTUI_JUDGE_MODEL": "m"}
    out = quiztui_main("vet", str(SAMPLE), "--batch-api", "--no-tui", env=env)
    assert out.returncode == 2
    assert "batch mode needs" in out.stderr and "Traceback" not in out.stderr
    with pytest.raises(ConfigError, match=f"judge.provider is {judge}"):
        build_batch_provider(load_config(environ={"QUIZTUI_JUDGE_PROVIDER": judge}))


# -- pieces ---------------------------------------------------------------------------------


def test_custom_ids_are_content_addressed() -> None:
    body = {"messages": [{"role": "user", "content": "Q: 1 + 1? A: 2"}], "temperature": 0.0}
    same = request_fingerprint("m", json.loads(json.dumps(body)))
    assert request_fingerprint("m", body) == same
    assert request_fingerprint("other", body) != same
    assert request_fingerprint("m", {**body, "temperature": 1.0}) != same
    first, second = custom_id(same, 1), custom_id(same, 2)
    assert first != second and len(first) <= 64
    assert all(c.isalnum() or c in "-_" for c in first)


def test_events_of_a_batch_reach_the_tui_state_and_stats_line() -> None:
    from quiztui.tui.state import RunState

    state = RunState(make_quiz(2), clock=lambda: 0.0)
    state.apply(ProviderBatchStatus("batch_x1", "in_progress", 3, 1, 6, "openai"))
    assert state.provider_batch is not None and state.provider_batch.batch_id == "batch_x1"
    assert state.stats_dirty


async def test_the_vet_screen_shows_the_batch_status(tmp_path: Path) -> None:
    from textual.widgets import Static

    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.services import AppServices

    quiz = make_quiz(6)
    with fake_server("openai", quiz) as server:
        server.batches.polls = 2
        provider = batch_provider("openai", server)
        store = Store(tmp_path / "tui.db")
        seen: list[str] = []

        def start_run(only: Quiz | None = None):  # type: ignore[no-untyped-def]
            run = VetRun(quiz, provider, store, load_prompt("judge_assertions"), batch_settings())
            return run.events()

        app = QuiztuiApp(
            quiz,
            AppServices(start_run=start_run, judge_label=provider.label, simulated=False),
            flush_interval=0.05,
        )
        try:
            async with app.run_test(size=(160, 40)) as pilot:  # the run starts by itself
                for _ in range(400):
                    await pilot.pause(0.02)
                    line = str(app.screen.query_one("#stats-line", Static).render())
                    seen.append(line)
                    if app.vet_screen.state.summary is not None:
                        break
        finally:
            await provider.aclose()
            store.close()
    assert any("openai batch batch_fake" in line and "in_progress" in line for line in seen)
    assert "collected" in seen[-1]


def test_run_finished_is_not_reached_when_a_batch_outlives_max_wait(tmp_path: Path) -> None:
    """max_wait passes: the run stops with BatchStillPending (exit 3), the run stays
    batch-pending, and nothing is marked unjudged."""
    from quiztui.pipeline.batch import BatchStillPending

    quiz = make_quiz(4)

    async def go() -> list[VetEvent]:
        with FakeOpenAI(truth_from_quiz(quiz)) as server:
            server.batches.polls = 10_000
            settings = BatchSettings(poll_seconds=0.02, max_wait=0.2, gather_seconds=0.1)
            provider = batch_provider("openai", server, settings)
            seen: list[VetEvent] = []
            with Store(tmp_path / "w.db") as store:
                run = VetRun(
                    quiz, provider, store, load_prompt("judge_assertions"), batch_settings()
                )
                try:
                    with pytest.raises(BatchStillPending, match="--resume 1"):
                        async for event in run.events():
                            seen.append(event)
                finally:
                    await provider.aclose()
                assert store.get_run(run.run_id).status == "batch-pending"
                assert all(v.verdict is None and v.unjudged_reason is None
                           for v in store.verdicts(run.run_id).values())  # fmt: skip
            return seen

    seen = asyncio.run(go())
    assert BatchStillPending.exit_code == 3
    assert not any(isinstance(e, RunFinished) for e in seen)
