"""Issue 27 item 5: one fact, one figure. A run's cost reads the same in the TUI header, its
Usage tab and the reports; runs of different kinds never show the same bare id (``kind:N``)
and the Runs screen has a kind column; every line of ``quiztui runs`` fits 80 columns."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import quiztui_main
from conftest import REPO
from test_review_desk_tui import QUIZ, judge_config, truth
from tui_helpers import settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli import main
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.testing.fake_openai import FakeOpenAI

PLANTED = REPO / "sample_quizzes" / "planted_errors.json"
ANSWERS = REPO / "sample_quizzes" / "answers_sample.csv"


def _plain(widget: object) -> str:
    from rich.text import Text

    content = getattr(widget, "content", None) or getattr(widget, "renderable", "")
    return content.plain if isinstance(content, Text) else str(content)


async def test_a_runs_cost_reads_the_same_in_header_usage_tab_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from textual.widgets import Static

    from quiztui.tui.screens.metrics import MetricsScreen
    from quiztui.tui.widgets.header import RunHeader

    quiz_path = tmp_path / "space.json"
    quiz_path.write_text(QUIZ, encoding="utf-8")
    (tmp_path / "config.toml").write_text(
        '[cost.models."fake-judge"]\ninput_per_mtok = 150\noutput_per_mtok = 600\n',
        encoding="utf-8",
    )
    with FakeOpenAI(truth(quiz_path)) as server:
        base = judge_config(server)
        priced = load_config(tmp_path / "config.toml")
        config = priced.model_copy(update={"judge": base.judge})

        def open_app():  # type: ignore[no-untyped-def]
            store = Store(config.db_path())
            quiz = load_quiz(quiz_path)
            return build_vet_app(
                config, store, quiz, vet_runs(config, quiz, store, None), autostart=True
            ), store

        app, store = await asyncio.to_thread(open_app)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                screen = app.vet_screen
                await wait_until(pilot, lambda: screen.state.summary is not None, what="run")
                await settled(pilot)
                summary = screen.state.summary
                assert summary is not None and summary.cost is not None and summary.cost > 0
                header = screen.query_one(RunHeader).cost_text()
                screen.action_open_metrics()
                await wait_until(pilot, lambda: isinstance(app.screen, MetricsScreen))
                metrics = app.screen
                assert isinstance(metrics, MetricsScreen)
                await wait_until(pilot, lambda: metrics.query("#usage-body"), what="the tabs")
                await pilot.pause()
                metrics.show_tab("usage")
                await pilot.pause()
                usage = _plain(metrics.query_one("#usage-body", Static))
        finally:
            store.close()
    figure = re.match(r"cost (\$[\d.,]+)(?: of ~|$)", header)
    assert figure, header
    cost = figure.group(1)
    assert re.search(rf"cost\s+{re.escape(cost)}(\s|$)", usage), usage
    assert main(["report", str(summary.run_id), "--config", str(tmp_path / "config.toml")]) == 0
    md = capsys.readouterr().out
    assert f"cost {cost}" in md


def test_runs_of_different_kinds_never_show_the_same_bare_id_and_fit_80_columns(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "COLUMNS": "80"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "quiztui", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    # The three runs are made in this process (the same main()); the listing is a real process's.
    for args in (
        ("vet", str(PLANTED), "--no-tui"),
        ("grade", str(ANSWERS)),
        ("review", str(PLANTED)),
    ):
        made = quiztui_main(*args, env=env)
        assert made.returncode in (0, 1), made.stderr
    listed = run("runs")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    ids = [line.split()[0] for line in lines[1:] if re.match(r"\s*(\w+:)?\d+\s+\d\d-\d\d", line)]
    assert sorted(ids) == ["1", "grade:1", "review:1"]  # each kind's first run: told apart


async def test_the_runs_screen_has_a_kind_column_and_kind_ids(tmp_path: Path) -> None:
    from quiztui.pipeline.history import StoreHistory
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.runs import RunsScreen, RunTable

    vet = ["vet", str(PLANTED), "--no-tui", "--sim-latency", "0", "-o", os.devnull]
    assert await asyncio.to_thread(main, vet) in (0, 1)
    assert await asyncio.to_thread(main, ["grade", str(ANSWERS), "-o", os.devnull]) in (0, 1)
    config = load_config()
    for size in ((80, 24), (120, 40)):
        app = GradeApp(RunsScreen(StoreHistory(config.db_path())), title="quiztui runs")
        async with app.run_test(size=size) as pilot:
            table = app.screen.query_one(RunTable)
            await wait_until(pilot, lambda: table.row_count == 2, what="the runs")  # noqa: B023
            labels = [str(c.label).strip() for c in table.ordered_columns if c.width]
            assert "kind" in labels, labels
            kinds = {table.get_cell(key, "kind").plain for key in table.rows}
            ids = {table.get_cell(key, "id").plain.strip() for key in table.rows}
            assert kinds == {"vet", "grade"} and ids == {"1", "grade:1"}
