"""Estimates (issue 7, S1 first half): counted on the prompts the run sends, checked against the
usage the loopback fake server reports; the price table; the ``--estimate`` command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline_helpers import make_quiz

from quiztui.cli import main
from quiztui.config import load_config
from quiztui.core.assertions import decompose
from quiztui.core.estimate import (
    Measured,
    ModelPrice,
    approx_tokens,
    estimate,
    plan_request,
    usd,
)
from quiztui.core.quiz import Quiz
from quiztui.errors import ConfigError
from quiztui.pipeline.calibrate import CalibrationRun, GoldSet
from quiztui.pipeline.estimate import estimate_run, measured_from_profile
from quiztui.pipeline.events import RunFinished, RunStarted, RunSummary, UsageUpdated
from quiztui.pipeline.prompts import load_prompt
from quiztui.pipeline.vet import VetRun, VetSettings
from quiztui.providers.openai_compat import OpenAICompatProvider
from quiztui.providers.retry import RetryPolicy
from quiztui.providers.simulated import SimulatedProvider
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

PRICE = ModelPrice(0.15, 0.6, "fake-judge")
FAST_RETRY = RetryPolicy(max_retries=6, base_delay=0.01, max_delay=0.05)


def provider_for(server: FakeOpenAI) -> OpenAICompatProvider:
    return OpenAICompatProvider(base_url=server.base_url, model="fake-judge", retry=FAST_RETRY)


def vet_run(quiz: Quiz, provider, store: Store, **kw) -> VetRun:  # type: ignore[no-untyped-def]
    mode = kw.pop("mode", "assertion")
    prompt = load_prompt("judge_question" if mode == "question" else "judge_assertions")
    settings = kw.pop("settings", VetSettings(mode=mode))
    return VetRun(quiz, provider, store, prompt, settings, **kw)


async def run_all(run: VetRun) -> tuple[list, RunSummary]:  # type: ignore[type-arg]
    events = [e async for e in run.events()]
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert len(finished) == 1
    return events, finished[0].summary


def served(server: FakeOpenAI) -> tuple[int, int, int]:
    """(requests, prompt tokens, completion tokens) the server answered with 200."""
    ok = [r for r in server.requests if r.status == 200 and r.path.endswith("/chat/completions")]
    return len(ok), sum(r.prompt_tokens for r in ok), sum(r.completion_tokens for r in ok)


def rel_err(estimated: int, actual: int) -> float:
    return abs(estimated - actual) / actual


async def measure_profile(server: FakeOpenAI, store: Store) -> Measured:
    """Calibrate the fake judge on a 50-question gold set (the profile the estimate scales)."""
    gold_quiz = make_quiz(50, title="gold")
    labels = {a.uid: a.keyed for a in decompose(gold_quiz)}
    run = CalibrationRun(
        GoldSet(gold_quiz, labels, "gold: 50 questions"),
        provider_for(server),
        store,
        load_prompt("judge_assertions"),
    )
    profile = None
    async for event in run.events():
        profile = getattr(event, "profile", profile)
    assert profile is not None
    return measured_from_profile(profile)


async def test_s1_estimate_of_a_1000_question_run_is_within_10_percent_of_the_server_usage(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(1000)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        store = Store(tmp_path / "q.db")
        measured = await measure_profile(server, store)
        server.clear_log()
        provider = provider_for(server)
        by_format = estimate_run(vet_run(quiz, provider, store, price=PRICE))
        by_profile = estimate_run(vet_run(quiz, provider, store, price=PRICE, measured=measured))
        events, summary = await run_all(
            vet_run(quiz, provider, store, price=PRICE, measured=measured)
        )
        store.close()
        requests, prompt, completion = served(server)
    assert summary.judged == 4000 and summary.unjudged == 0
    assert by_profile.requests == requests == 200 and by_profile.assertions == 4000
    assert by_profile.basis.startswith("profile")
    assert by_format.basis.startswith("reply format")
    errors = {
        "prompt": rel_err(by_profile.prompt_tokens, prompt),
        "completion (profile)": rel_err(by_profile.completion_tokens, completion),
        "completion (reply format)": rel_err(by_format.completion_tokens, completion),
    }
    print(
        f"\nS1 server: {requests} requests, {prompt} prompt / {completion} completion tokens;"
        f" estimate: {by_profile.prompt_tokens} / {by_profile.completion_tokens} (profile),"
        f" {by_format.completion_tokens} (reply format); relative errors "
        + ", ".join(f"{k} {v:.2%}" for k, v in errors.items())
    )
    assert errors["prompt"] <= 0.10
    assert errors["completion (profile)"] <= 0.10
    # The run carries the same estimate, and its cost is the server's tokens at the price.
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.estimate == by_profile
    assert summary.tokens_in == prompt and summary.tokens_out == completion
    assert summary.cost == pytest.approx(PRICE.cost(prompt, completion))
    costs = [e.cost for e in events if isinstance(e, UsageUpdated)]
    assert all(c is not None for c in costs) and costs == sorted(costs)  # type: ignore[type-var]


async def test_every_planned_prompt_is_the_prompt_the_server_received(tmp_path: Path) -> None:
    """Same builder, same order: the per-request prompt token counts agree one for one."""
    quiz = make_quiz(37)  # 148 assertions: 7 full batches and one of 8
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        store = Store(tmp_path / "q.db")
        provider = provider_for(server)
        est = estimate_run(vet_run(quiz, provider, store))
        _, summary = await run_all(vet_run(quiz, provider, store))
        store.close()
        requests, prompt, _ = served(server)
    assert summary.judged == 148
    assert (est.requests, est.prompt_tokens) == (requests, prompt) == (8, summary.tokens_in)
    assert est.cost is None and est.cost_text() == "unknown (no price for fake-judge in [cost])"
    assert summary.cost is None


async def test_question_mode_estimate_is_one_request_per_question(tmp_path: Path) -> None:
    quiz = make_quiz(60)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        store = Store(tmp_path / "q.db")
        provider = provider_for(server)
        est = estimate_run(vet_run(quiz, provider, store, mode="question", price=PRICE))
        _, summary = await run_all(vet_run(quiz, provider, store, mode="question"))
        store.close()
        requests, prompt, completion = served(server)
    assert summary.judged == 240
    assert est.requests == requests == 60 and est.mode == "question"
    assert est.prompt_tokens == prompt
    error = rel_err(est.completion_tokens, completion)
    print(f"\nquestion mode: completion {est.completion_tokens} vs {completion} ({error:.2%})")
    assert "one verdict line per question" in est.basis


async def test_cached_and_resumed_assertions_are_left_out_of_the_estimate(tmp_path: Path) -> None:
    small, large = make_quiz(10), make_quiz(25)  # the first 10 questions are the same
    with FakeOpenAI(truth_from_quiz(large)) as server:
        store = Store(tmp_path / "q.db")
        provider = provider_for(server)
        await run_all(vet_run(small, provider, store))  # caches 40 verdicts
        est = estimate_run(vet_run(large, provider, store, price=PRICE))
        no_cache = estimate_run(
            vet_run(large, provider, store, settings=VetSettings(use_cache=False))
        )
        server.clear_log()
        _, summary = await run_all(vet_run(large, provider, store))
        store.close()
        requests, prompt, _ = served(server)
    assert (est.assertions, est.already_judged, est.to_judge) == (100, 40, 60)
    assert no_cache.already_judged == 0 and no_cache.requests == 5
    assert summary.cached == 40
    assert (est.requests, est.prompt_tokens) == (requests, prompt) == (3, summary.tokens_in)


def test_profile_and_format_bases_scale_completion_tokens() -> None:
    system, user = "s" * 400, "u" * 800
    fmt = plan_request(system, user, 20, False, None)
    assert fmt.prompt_tokens == approx_tokens(system) + approx_tokens(user) == 300
    # "A1: FALSE - " + 24 characters + newline per line, ids A1..A20.
    assert fmt.completion_tokens == approx_tokens(
        "".join(f"A{i}: FALSE - {'x' * 24}\n" for i in range(1, 21))
    )
    measured = Measured(tokens_out_per_assertion=7.5, tokens_out_per_request=30, source="p")
    assert plan_request(system, user, 20, False, measured).completion_tokens == 150
    assert plan_request(system, user, 4, True, measured).completion_tokens == 30
    est = estimate(
        [fmt] * 33,
        assertions=660,
        already_judged=0,
        model="m",
        price=PRICE,
        concurrency=16,
        question_mode=False,
        measured=Measured(latency=2.0, source="profile #1"),
    )
    assert est.wall_seconds == 3 * 2.0  # 33 requests, 16 at a time: three waves
    assert est.cost == pytest.approx(PRICE.cost(33 * 300, 33 * fmt.completion_tokens))
    assert "wall time from profile #1" in est.basis
    assert PRICE.batched().cost(1_000_000, 1_000_000) == pytest.approx(0.375)


def write_config(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def test_price_table_per_model_with_the_default_as_fallback(tmp_path: Path) -> None:
    config = load_config(
        write_config(
            tmp_path / "c.toml",
            "[cost]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\nbatch_discount = 0.4\n"
            '[cost.models."gpt-4o-mini"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.6\n',
        ),
        environ={},
    )
    mini = config.cost.price_for("gpt-4o-mini")
    other = config.cost.price_for("llama3.1:8b")
    assert mini is not None and (mini.input_per_mtok, mini.output_per_mtok) == (0.15, 0.6)
    assert mini.source == "gpt-4o-mini" and mini.batch_discount == 0.4
    assert other is not None and (other.input_per_mtok, other.source) == (1.0, "default")
    empty = load_config(write_config(tmp_path / "empty.toml", ""), environ={})
    assert empty.cost.price_for("x") is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[cost.models."m"]\ninput_per_mtok = -1\noutput_per_mtok = 1\n', "cost.models.m.input"),
        ('[cost.models."m"]\ninput_per_mtok = 1\n', "cost.models.m.output_per_mtok: Field req"),
        ('[cost.models."m"]\ninput_per_mtok = 1\noutput_per_mtok = 2\nper = 1\n', "unknown key"),
        ("[cost]\ninput_per_mtok = 1\n", "set both input_per_mtok and output_per_mtok"),
        ("[cost]\nbatch_discount = 0\n", "cost.batch_discount"),
        ('[cost.models."m"]\ninput_per_mtok = "cheap"\noutput_per_mtok = 1\n', "valid number"),
        ("[vet]\nbudget = 0\n", "vet.budget"),
    ],
)
def test_bad_price_and_budget_values_are_config_errors(
    tmp_path: Path, body: str, message: str
) -> None:
    path = write_config(tmp_path / "c.toml", body)
    with pytest.raises(ConfigError) as err:
        load_config(path, environ={})
    assert str(path) in str(err.value) and message in str(err.value)


def test_budget_without_a_price_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    quiz = make_quiz(3)
    with (
        Store(tmp_path / "q.db") as store,
        pytest.raises(ConfigError, match="budget needs a price"),
    ):
        vet_run(quiz, SimulatedProvider(truth_from_quiz(quiz)), store, budget=1.0)


def quiz_file(tmp_path: Path, quiz: Quiz) -> Path:
    items = [
        {"question": q.text, "responses": list(q.options), "correct": q.options[q.key]}
        for q in quiz.questions
    ]
    path = tmp_path / "quiz.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def fake_config(tmp_path: Path, server: FakeOpenAI, extra: str = "") -> Path:
    return write_config(
        tmp_path / "config.toml",
        f'[judge]\nprovider = "openai-compat"\nbase_url = "{server.base_url}"\n'
        f'model = "fake-judge"\n[store]\npath = "{tmp_path / "runs.db"}"\n{extra}',
    )


def test_estimate_command_prints_a_table_and_creates_no_run(tmp_path: Path) -> None:
    quiz = make_quiz(40)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        config = fake_config(
            tmp_path,
            server,
            '[cost.models."fake-judge"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.6\n',
        )
        args = [
            *("vet", str(quiz_file(tmp_path, quiz)), "--config", str(config), "--estimate"),
            *("--judge", "openai-compat"),  # the tests' environment says simulated
        ]
        done = subprocess.run(
            [sys.executable, "-m", "quiztui", *args], capture_output=True, text=True, timeout=60
        )
        as_json = subprocess.run(
            [sys.executable, "-m", "quiztui", *args, "--format", "json", "--budget", "0.001"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        asked = len(server.requests)
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines()[1:] if line)
    assert lines["assertions"].strip() == "160" and lines["requests"].startswith("8 ")
    assert "$0.00" in done.stdout and "fake-judge" in done.stdout and "basis" in done.stdout
    data = json.loads(as_json.stdout)
    assert data["requests"] == 8 and data["budget"] == 0.001 and data["cost"] > 0
    assert asked == 0  # nothing was sent
    with Store(tmp_path / "runs.db") as store:
        assert store.list_runs() == []


def test_estimate_without_a_price_says_unknown(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    quiz = make_quiz(5)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        config = fake_config(tmp_path, server)
        args = ["vet", str(quiz_file(tmp_path, quiz)), "--config", str(config), "--estimate"]
        code = main([*args, "--judge", "openai-compat"])
    out = capsys.readouterr().out
    assert code == 0
    assert "unknown (no price for fake-judge in [cost])" in out
    assert "unknown (no measured latency" in out


def test_small_amounts_keep_their_digits() -> None:
    assert [usd(v) for v in (0, 0.001, 0.009615, 0.5, 12.345)] == [
        "$0.00",
        "$0.001",
        "$0.00962",
        "$0.50",
        "$12.35",
    ]
