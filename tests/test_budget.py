"""Budgets (issue 7, S1 second half): a run stops within one batch of its budget, keeps what was
judged, marks the rest not run, and a resume finishes it without sending anything twice."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline_helpers import make_quiz
from test_estimate import (
    PRICE,
    fake_config,
    provider_for,
    quiz_file,
    run_all,
    served,
    vet_run,
)

from quiztui.cli import main
from quiztui.cli.estimate import STOPPED_EXIT
from quiztui.core.estimate import usd
from quiztui.pipeline.estimate import estimate_run
from quiztui.pipeline.events import AssertionUnjudged, RunStarted, UsageUpdated
from quiztui.pipeline.summary import summary_from_dict
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI, truth_from_quiz

PRICE_TOML = '[cost.models."fake-judge"]\ninput_per_mtok = 0.15\noutput_per_mtok = 0.6\n'


async def test_s1_budget_stops_within_one_batch_and_resume_sends_nothing_twice(
    tmp_path: Path,
) -> None:
    quiz = make_quiz(1000)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        store = Store(tmp_path / "q.db")
        provider = provider_for(server)
        est = estimate_run(vet_run(quiz, provider, store, price=PRICE))
        assert est.cost is not None
        budget = round(est.cost * 0.3, 6)
        events, stopped = await run_all(vet_run(quiz, provider, store, price=PRICE, budget=budget))
        first = server.requests
        batch_costs = [PRICE.cost(r.prompt_tokens, r.completion_tokens) for r in first]
        batch = max(batch_costs)
        _, spent_in, spent_out = served(server)

        # Stopped near the budget: spent ≤ budget + one batch, and not more than two short.
        print(
            f"\nS1 budget ${budget:.6f} (30 % of the estimated ${est.cost:.6f}); spent"
            f" ${stopped.cost:.6f} over {len(first)} requests; one batch ≤ ${batch:.6f};"
            f" judged {stopped.judged}, not run {stopped.not_run}"
        )
        assert stopped.status == "stopped" and "budget $" in (stopped.error or "")
        assert stopped.cost is not None and stopped.cost <= budget + batch
        assert stopped.cost >= budget - 2 * batch
        assert stopped.cost == PRICE.cost(spent_in, spent_out)
        assert (stopped.tokens_in, stopped.tokens_out) == (spent_in, spent_out)
        assert 0 < stopped.judged < 4000 and stopped.judged + stopped.not_run == 4000
        assert stopped.unjudged == stopped.not_run  # no other losses on a fault-free server
        not_run = [e for e in events if isinstance(e, AssertionUnjudged)]
        assert len(not_run) == stopped.not_run
        assert all(e.reason == f"not run: budget {usd(budget)} reached" for e in not_run)
        started = next(e for e in events if isinstance(e, RunStarted))
        assert started.budget == budget and started.estimate == est

        # Stored: what was judged, the rest as not run, the run as stopped with its summary.
        record = store.get_run(stopped.run_id)
        assert record.status == "stopped" and record.summary is not None
        assert summary_from_dict(record.summary).not_run == stopped.not_run
        rows = store.verdicts(stopped.run_id)
        assert sum(v.verdict is not None for v in rows.values()) == stopped.judged
        assert (
            sum((v.unjudged_reason or "").startswith("not run: budget") for v in rows.values())
            == stopped.not_run
        )

        # Resume (a new budget is allowed): the rest is judged, nothing judged is sent again.
        rest = estimate_run(
            vet_run(quiz, provider, store, price=PRICE, resume_run_id=stopped.run_id)
        )
        assert rest.already_judged == stopped.judged and rest.to_judge == stopped.not_run
        resume = vet_run(
            quiz, provider, store, price=PRICE, budget=est.cost * 2, resume_run_id=stopped.run_id
        )
        _, done = await run_all(resume)
        store.close()
        asked = server.asked_texts()
        requests, prompt, completion = served(server)
    assert done.status == "finished" and done.run_id == stopped.run_id
    assert done.judged == 4000 and done.unjudged == 0 and done.not_run == 0
    assert len(asked) == 4000 and max(asked.values()) == 1
    assert requests == est.requests  # the two parts together are the estimated run
    assert done.cost == PRICE.cost(prompt, completion)  # the run's cost counts both parts
    print(
        f"S1 both parts: {prompt} prompt / {completion} completion tokens"
        f" (estimate {est.prompt_tokens} / {est.completion_tokens})"
    )


async def test_a_budget_smaller_than_one_batch_sends_nothing(tmp_path: Path) -> None:
    quiz = make_quiz(20)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        with Store(tmp_path / "q.db") as store:
            events, summary = await run_all(
                vet_run(quiz, provider_for(server), store, price=PRICE, budget=1e-6)
            )
        assert server.requests == []
    assert summary.status == "stopped" and summary.judged == 0 and summary.not_run == 80
    assert summary.cost == 0.0
    assert [e.cost for e in events if isinstance(e, UsageUpdated)] == [0.0]


def test_budget_from_the_config_default_stops_the_headless_run(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    quiz = make_quiz(200)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        config = fake_config(tmp_path, server, f"{PRICE_TOML}[vet]\nbudget = 0.001\n")
        base = ["vet", str(quiz_file(tmp_path, quiz)), "--config", str(config), "--no-tui"]
        base += ["--judge", "openai-compat", "--format", "json"]
        code = main(base)
        captured = capsys.readouterr()
        report = json.loads(captured.out)
        # The resume takes a budget from the command line that covers the rest.
        resumed = main([*base, "--resume", str(report["run_id"]), "--budget", "1"])
        again = capsys.readouterr()
        asked = server.asked_texts()
    print(captured.err)
    assert code == STOPPED_EXIT
    assert "quiztui: estimate: 40 requests" in captured.err and "budget $0.001" in captured.err
    assert "quiztui: stopped: budget $0.001 reached" in captured.err
    assert report["status"] == "stopped" and report["not_run"] > 0
    assert report["cost"] is not None and report["cost"] <= 0.001 + 0.0001
    assert resumed == 0, again.err
    assert json.loads(again.out)["status"] == "finished"
    assert len(asked) == 800 and max(asked.values()) == 1


def test_a_budget_without_a_price_is_a_config_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    quiz = make_quiz(5)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        config = fake_config(tmp_path, server)
        args = ["vet", str(quiz_file(tmp_path, quiz)), "--config", str(config), "--no-tui"]
        code = main([*args, "--judge", "openai-compat", "--budget", "$2"])
        assert server.requests == []
    err = capsys.readouterr().err
    assert code == 2
    assert "needs a price for model 'fake-judge'" in err and "Traceback" not in err


def test_a_bad_budget_flag_is_a_usage_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["vet", str(quiz_file(tmp_path, make_quiz(2))), "--no-tui", "--budget", "-1"])
    err = capsys.readouterr().err
    assert code == 2 and err == "quiztui: error: --budget -1: input should be greater than 0" + (
        " (config key vet.budget)\n"
    )


async def test_the_vet_screen_shows_the_estimate_the_cost_so_far_and_the_stop(
    tmp_path: Path,
) -> None:
    from textual.widgets import Static
    from tui_helpers import constant_clock, settled

    from quiztui.tui.app import QuiztuiApp
    from quiztui.tui.services import AppServices
    from quiztui.tui.widgets.header import RunHeader

    quiz = make_quiz(100)
    with FakeOpenAI(truth_from_quiz(quiz)) as server:
        store = Store(tmp_path / "q.db")
        provider = provider_for(server)

        def start_run():  # type: ignore[no-untyped-def]
            return vet_run(quiz, provider, store, price=PRICE, budget=0.001).events()

        app = QuiztuiApp(
            quiz,
            AppServices(start_run=start_run, judge_label=provider.label, simulated=False),
            clock=constant_clock(),
        )
        try:
            async with app.run_test(size=(230, 40)) as pilot:  # the header's extras fit
                await settled(pilot)
                screen = app.vet_screen
                header = str(app.screen.query_one(RunHeader).render())
                stats = str(screen.query_one("#stats-line", Static).render())
                summary = screen.state.summary
        finally:
            store.close()
    assert summary is not None and summary.status == "stopped" and summary.cost is not None
    assert screen.state.status == "stopped" and "[stopped]" in header
    assert "estimate: 20 requests" in header and "budget $0.001" in header
    assert f"cost {usd(summary.cost)}" in stats
