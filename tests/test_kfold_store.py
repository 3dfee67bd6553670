"""A ``grade --benchmark FILE --fit kfold`` run is kept in the run store (schema v11,
``grade_fits``) and shown again: ``quiztui runs`` lists it as kind "kfold", ``runs show kfold:N``
prints the report the run printed, byte for byte, the Runs screen opens it on the Benchmark
screen; a cancelled or failed fit is stored as incomplete, never as a finished one.

Everything runs for real: the CLI (in-process and as a process), a SQLite file in tmp_path, the
lexical grader (offline) and, for the provider failure and the interrupt, an LLM grader against
the fake OpenAI server on loopback.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest
from runs_helpers import listed_runs
from test_cli import run_cli
from tui_helpers import wait_until

from quiztui.cli import main
from quiztui.cli.runs import LIST_HEADER, listing_line
from quiztui.core.figures import run_state_text
from quiztui.store import Store
from quiztui.store.db import MIGRATIONS
from quiztui.store.grade_fits import GradeFitStore
from quiztui.store.history import listing_key, run_history

# A teacher's export: three questions, four marked answers each, marks out of 10.
MARKS = """\
student,question,model_answer,response,mark
s01,What does a plant make in photosynthesis?,Glucose and oxygen from light water and carbon \
dioxide,It makes glucose and oxygen using light,9
s02,What does a plant make in photosynthesis?,Glucose and oxygen from light water and carbon \
dioxide,Food,3
s03,What does a plant make in photosynthesis?,Glucose and oxygen from light water and carbon \
dioxide,oxygen and sugar (glucose) from carbon dioxide and water,10
s04,What does a plant make in photosynthesis?,Glucose and oxygen from light water and carbon \
dioxide,I don't know,0
s05,Why does ice float on water?,Ice is less dense than liquid water,Because ice is less dense \
than water,10
s06,Why does ice float on water?,Ice is less dense than liquid water,it is cold,1
s07,Why does ice float on water?,Ice is less dense than liquid water,The water molecules in \
ice are spaced out so it is lighter for its volume,8
s08,Why does ice float on water?,Ice is less dense than liquid water,ice is heavy,0
s09,What causes the seasons on Earth?,The tilt of the Earth's axis,The Earth's axis is \
tilted,9
s10,What causes the seasons on Earth?,The tilt of the Earth's axis,distance from the sun,2
s11,What causes the seasons on Earth?,The tilt of the Earth's axis,the tilt of the axis \
changes how directly sunlight hits,8
s12,What causes the seasons on Earth?,The tilt of the Earth's axis,the moon,0
"""
COLUMNS = "question=question,reference=model_answer,answer=response,score=mark,id=student"


def marks_file(tmp_path: Path) -> Path:
    path = tmp_path / "marks.csv"
    path.write_text(MARKS, encoding="utf-8")
    return path


def kfold_args(path: Path, *extra: str) -> list[str]:
    return [
        "grade",
        "--benchmark",
        str(path),
        "--scale",
        "0-10",
        "--columns",
        COLUMNS,
        "--folds",
        "3",
        "--grader",
        "lexical",
        *extra,
    ]


def db_path() -> Path:
    return Path(os.environ["QUIZTUI_DATA_DIR"]) / "quiztui.db"


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


# -- the CLI -------------------------------------------------------------------------------------


def test_a_kfold_run_is_listed_and_shown_again_byte_for_byte(tmp_path: Path) -> None:
    """As a user runs it: the k-fold run, then ``runs``, then ``runs show kfold:1``, each a
    process of its own on the same store."""
    ran = run_cli(*kfold_args(marks_file(tmp_path)))
    assert ran.returncode == 0, ran.stderr
    assert "stored as run kfold:1" in ran.stderr
    assert "constant mean (baseline)" in ran.stdout  # the fold table itself

    listed = run_cli("runs")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == LIST_HEADER
    (line,) = [run for run in listed_runs(listed.stdout) if " kfold " in run]
    fields = line.split()
    assert fields[0] == "kfold:1" and fields[3:5] == ["kfold", "finished"]
    assert "marks.csv" in line and "offline: normalised exact match" in line
    # its count is the marked answers; badges are a vet run's; every answer was scored
    assert re.search(r"\s12\s+—\s+0\s", line), line
    # the lexical grader's own grade run is listed beside it
    assert any(" grade " in ln for ln in lines[1:])

    shown = run_cli("runs", "show", "kfold:1")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == ran.stdout
    assert shown.stderr == ""  # a finished fit: nothing to warn about


@pytest.mark.parametrize("fmt", ["text", "md", "json"])
def test_runs_show_prints_the_format_the_run_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """With an LLM grader beside the lexical one (the simulated judge): the judge line names
    both, and the stored fit prints the same report in each format."""
    args = kfold_args(marks_file(tmp_path), "--also", "pass3", "--format", fmt)
    code, report, err = in_process(capsys, *args)
    assert code == 0, err
    assert "SIMULATED grader (pass3" in report
    fit_id = int(re.search(r"stored as run kfold:(\d+)", err).group(1))  # type: ignore[union-attr]
    code, again, err = in_process(capsys, "runs", "show", f"kfold:{fit_id}", "--format", fmt)
    assert code == 0, err
    assert again == report
    if fmt == "json":
        body = json.loads(again)
        assert body["n"] == 12 and body["k"] == 3 and body["graders"] == ["lexical", "pass3"]
        assert body["calibration"].endswith("marks.json")


def test_the_stored_fit_keeps_what_was_fitted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from quiztui.formats.marked import load_marked, parse_scale
    from quiztui.pipeline.history import load_kfold

    path = marks_file(tmp_path)
    code, _, err = in_process(capsys, *kfold_args(path, "--seed", "7"))
    assert code == 0, err
    marked = load_marked(
        path,
        parse_scale("0-10"),
        {"question": "question", "reference": "model_answer", "candidate": "response"}
        | {"human": "mark", "id": "student"},
    )
    with Store(db_path()) as store:
        record = GradeFitStore(store.conn).get_fit(1)
        stored = load_kfold(store, 1)
    assert record is not None and record.status == "finished"
    assert (record.source, record.digest, record.marked) == (str(path), marked.digest, 12)
    assert (record.graders, record.folds, record.seed, record.scale) == (
        ("lexical",),
        3,
        7,
        (0, 10),
    )
    assert record.judge_label == "offline: normalised exact match / token F1"
    assert (record.model, record.simulated) == ("lexical", False)
    assert record.calibration_path is not None and Path(record.calibration_path).is_file()
    assert (record.unscored, record.not_run, record.error) == (0, 0, None)
    assert record.result is not None and record.result.n == 12 and record.result.k == 3
    assert record.finished_at is not None and record.finished_at >= record.created_at
    # the replay: the grade run's 12 stored outcomes, then the fold table
    kinds = [type(e).__name__ for e in stored.events]
    assert kinds[0] == "GradeStarted" and kinds[-2:] == ["GradeFinished", "KFoldScored"]
    assert kinds.count("ItemGraded") == 12 and len(record.grade_runs) == 1


async def test_the_stored_result_is_the_run_s_own(tmp_path: Path) -> None:
    """Every field of the KFoldResult — held-out predictions, intervals, refitted models — reads
    back equal to what the run made (neighbours and combined models, a calibration saved)."""
    from quiztui.formats.marked import load_marked, parse_scale
    from quiztui.pipeline.grade import GradeSettings
    from quiztui.pipeline.grade_fit import KFoldRun, KFoldScored

    marked = load_marked(
        marks_file(tmp_path),
        parse_scale("0-10"),
        {"question": "question", "reference": "model_answer", "candidate": "response"}
        | {"human": "mark", "id": "student"},
    )
    with Store(tmp_path / "runs.db") as store:
        run = KFoldRun(
            marked,
            ["lexical"],
            GradeSettings(grader="lexical"),
            store=store,
            folds=4,
            seed=3,
            save_dir=tmp_path / "calibrations",
        )
        scored = [e async for e in run.events() if isinstance(e, KFoldScored)]
        (event,) = scored
        assert event.run_id is not None
        record = GradeFitStore(store.conn).get_fit(event.run_id)
    assert record is not None and record.status == "finished"
    assert event.result.neighbour_groups == 3 and event.result.final
    assert record.result == event.result
    assert record.calibration_path == str(event.calibration_path)


def test_runs_show_refuses_what_it_cannot_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = in_process(capsys, "runs", "show", "kfold:3")
    assert code == 2 and err.count("\n") == 1 and "no kfold fit 3" in err
    code, _, err = in_process(capsys, "runs", "show", "grade:1")
    assert code == 2 and err.count("\n") == 1 and "grade:1" in err and "kfold:N" in err
    code, _, err = in_process(capsys, "runs", "show", "kfold:0")  # bounded as every run id
    assert (
        code == 2
        and err.count("\n") == 1
        and "RUN_ID kfold:0: input should be greater than or equal to 1" in err
    )
    code, _, err = in_process(capsys, *kfold_args(marks_file(tmp_path)))
    assert code == 0
    code, _, err = in_process(capsys, "runs", "show", "kfold:1", "--format", "csv")
    assert code == 2 and "--format csv is not available" in err and err.count("\n") == 1


# -- an early end ------------------------------------------------------------------------------


async def test_a_cancelled_fit_is_stored_as_incomplete(tmp_path: Path) -> None:
    """The consumer stops after three graded answers (the TUI's x, a closed stream): the fit
    is "cancelled" with the answers never graded as "not run", and has no fold table."""
    from quiztui.formats.marked import load_marked, parse_scale
    from quiztui.pipeline.grade import GradeSettings, ItemGraded
    from quiztui.pipeline.grade_fit import KFoldRun

    marked = load_marked(
        marks_file(tmp_path),
        parse_scale("0-10"),
        {"question": "question", "reference": "model_answer", "candidate": "response"}
        | {"human": "mark", "id": "student"},
    )
    with Store(tmp_path / "runs.db") as store:
        run = KFoldRun(marked, ["lexical"], GradeSettings(grader="lexical"), store=store, folds=3)
        graded = 0
        stream = run.events()
        assert isinstance(stream, AsyncGenerator)
        async with aclosing(stream) as events:
            async for event in events:
                graded += isinstance(event, ItemGraded)
                if graded == 3:
                    break
        (listing,) = run_history(store, kind="kfold")
        record = GradeFitStore(store.conn).get_fit(listing.id)
    assert record is not None and record.result is None
    assert (record.status, record.not_run, record.unscored) == ("cancelled", 9, 9)
    assert (listing.status, listing.not_run, listing.unjudged, listing.has_summary) == (
        "cancelled",
        9,
        9,
        False,
    )
    # the house wording for a partial run, in the runs list
    state = run_state_text("cancelled", 9)
    assert state == "incomplete (cancelled) · not run: 9 · k/confidence partial"
    assert listing_line(listing).endswith("  " + state)
    assert listing_key(listing) == f"kfold:{listing.id}"


def test_a_provider_failure_mid_grading_is_a_failed_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge refuses the key part-way (401): the LLM grader stops, its answers are never
    graded, and the fit — made or not — is stored as failed, never finished."""
    from quiztui.testing.fake_openai import FakeOpenAI

    path = marks_file(tmp_path)
    with FakeOpenAI(require_key="the-right-key") as server:
        judge = ["--judge", "openai-compat", "--base-url", server.base_url, "--model", "m"]
        code, _, err = in_process(capsys, *kfold_args(path, *judge, "--also", "pass3"))
        assert any(r.status == 401 for r in server.requests)
    assert "Traceback" not in err
    # not a result: exit 1, the grader and why named, and no calibration fitted without it
    assert code == 1
    assert "quiztui: error: grader pass3 stopped part-way (" in err
    assert "no calibration was saved" in err and "calibration saved:" not in err
    # the run says where it was stored, and that it is incomplete, in the house wording
    assert f"stored as run kfold:1, {run_state_text('failed', 12)} (quiztui runs" in err
    with Store(db_path()) as store:
        (listing,) = run_history(store, kind="kfold")
        record = GradeFitStore(store.conn).get_fit(listing.id)
    assert record is not None and record.status == "failed" and record.error
    assert record.not_run == 12 and record.unscored == 12  # pass3 graded none of them
    assert record.judge_label.startswith("offline: normalised exact match")
    assert "m" in record.model.split(" + ")
    assert "incomplete (failed) · not run: 12" in listing_line(listing)
    # the table was made on what was graded (pass3's rows left out): shown, and said partial
    assert record.result is not None and record.result.unscored == {"lexical": 0, "pass3": 12}
    code, out, err = in_process(capsys, "runs", "show", f"kfold:{listing.id}")
    assert code == 0 and "pass3: 12 unscored answers left out of its rows" in out
    assert err == f"quiztui: kfold:{listing.id} is {run_state_text('failed', 12)}\n"


def chats(server: Any) -> int:
    return sum(r.path.endswith("/chat/completions") for r in server.requests)


def test_ctrl_c_mid_grading_stores_the_fit_as_cancelled(tmp_path: Path) -> None:
    """A real process interrupted (SIGINT, as Ctrl-C sends) while its LLM grader waits on the
    judge: the fit is stored as cancelled, not left running and not finished."""
    from quiztui.testing.fake_openai import FakeOpenAI

    path = marks_file(tmp_path)
    db = db_path()
    with FakeOpenAI(models=["m"], latency=0.5) as server:
        argv = [sys.executable, "-m", "quiztui", *kfold_args(path, "--grader", "pass3")]
        argv += ["--judge", "openai-compat", "--base-url", server.base_url, "--model", "m"]
        argv += ["--concurrency", "1"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not chats(server) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert chats(server), "the judge was never asked"
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130, err
    conn = sqlite3.connect(db)
    status, not_run, result = conn.execute(
        "SELECT status, not_run, result_json FROM grade_fits"
    ).fetchone()
    conn.close()
    assert status == "cancelled" and result is None
    assert 0 < not_run <= 12


async def test_x_on_the_benchmark_screen_stores_the_fit_as_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``grade --benchmark FILE --tui``'s screen over the real k-fold stream, an LLM grader
    waiting on the fake server: ``x`` cancels, and the fit is stored cancelled with the answers
    never graded as "not run"."""
    from quiztui.assemble.grade import kfold_events
    from quiztui.config import load_config
    from quiztui.formats.marked import load_marked, parse_scale
    from quiztui.testing.fake_openai import FakeOpenAI
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.benchmark import BenchmarkScreen

    marked = load_marked(
        marks_file(tmp_path),
        parse_scale("0-10"),
        {"question": "question", "reference": "model_answer", "candidate": "response"}
        | {"human": "mark", "id": "student"},
    )
    with FakeOpenAI(models=["m"], latency=0.3) as server:
        monkeypatch.setenv("QUIZTUI_JUDGE_PROVIDER", "openai-compat")
        monkeypatch.setenv("QUIZTUI_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("QUIZTUI_JUDGE_MODEL", "m")
        monkeypatch.setenv("QUIZTUI_JUDGE_CONCURRENCY", "1")
        config = load_config()
        with Store(tmp_path / "runs.db") as store:
            screen = BenchmarkScreen(
                lambda: kfold_events(config, store, marked, ["pass3"], folds=3, seed=0),
                dataset=marked.name,
                grader="pass3",
                calibration="kfold",
                train=len(marked.items),
                test=0,
                flush_interval=0.02,
            )
            app = GradeApp(screen)
            async with app.run_test(size=(120, 40)) as pilot:
                await wait_until(pilot, lambda: screen.progress.done >= 2, what="two graded")
                await pilot.press("x")
                await wait_until(pilot, lambda: screen.run_status == "cancelled", what="cancel")
            (listing,) = run_history(store, kind="kfold")
    assert listing.status == "cancelled" and not listing.has_summary
    assert 0 < listing.not_run < 12 and listing.unjudged >= listing.not_run
    assert "incomplete (cancelled) · not run: " in listing_line(listing)


# -- the migration -------------------------------------------------------------------------------


def v10_store(path: Path) -> None:
    """A run store as quiztui wrote it at schema v10, with a grade run and a generate run."""
    conn = sqlite3.connect(path, isolation_level=None)
    for script in MIGRATIONS[:10]:
        for statement in script.split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute("PRAGMA user_version = 10")
    conn.execute(
        "INSERT INTO grade_runs (id, created_at, status, source, grader, provider, model,"
        " judge_label, simulated, prompt_hash, params_json)"
        " VALUES (4, 1.0, 'finished', 'answers.csv', 'lexical', 'offline', 'lexical',"
        " 'offline', 0, 'lexical', '{}')"
    )
    conn.execute(
        "INSERT INTO generate_runs (id, created_at, status, document, subject, output,"
        " judge_label, model, simulated) VALUES (2, 2.0, 'finished', 'notes.md', 'x', 'qa.json',"
        " 'SIMULATED', 'sim', 1)"
    )
    conn.close()


def test_a_v10_store_is_migrated_and_keeps_its_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "old.db"
    v10_store(db)
    with Store(db) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 11
        assert run_history(store, kind="kfold") == []
        assert [(r.kind, r.id) for r in run_history(store)] == [("generate", 2), ("grade", 4)]
    # a k-fold run into the migrated store: the history has all three, the fit newest
    code, report, err = in_process(capsys, *kfold_args(marks_file(tmp_path)), "--db", str(db))
    assert code == 0, err
    assert "stored as run kfold:1" in err
    with Store(db) as again:  # opening it again applies nothing twice
        assert again.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        listed = [(r.kind, r.id, r.status) for r in run_history(again)]
    # the fit's own grade run continues the old grade runs' ids
    assert sorted(listed) == [
        ("generate", 2, "finished"),
        ("grade", 4, "finished"),
        ("grade", 5, "finished"),
        ("kfold", 1, "finished"),
    ]
    code, again_report, err = in_process(capsys, "runs", "show", "kfold:1", "--db", str(db))
    assert code == 0 and again_report == report


# -- the TUI -------------------------------------------------------------------------------------


async def test_the_runs_screen_opens_a_fit_on_the_benchmark_screen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from quiztui.pipeline.history import StoreHistory
    from quiztui.report.grade_fit import kfold_rows
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.benchmark import BenchmarkScreen
    from quiztui.tui.screens.runs import RunsScreen

    # the CLI runs its own event loop: in a thread, as in tests/test_one_figure.py
    code, _, err = await asyncio.to_thread(in_process, capsys, *kfold_args(marks_file(tmp_path)))
    assert code == 0, err
    with Store(db_path()) as store:
        record = GradeFitStore(store.conn).get_fit(1)
    assert record is not None and record.result is not None
    home = RunsScreen(StoreHistory(db_path()))
    app = GradeApp(home, title="quiztui runs")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: home.loaded, what="the history loaded")
        keys = [str(key.value) for key in home.table.rows]
        assert sorted(keys) == ["grade:1", "kfold:1"]  # the fit and the grade run it made
        assert str(home.table.get_cell("kfold:1", "kind")) == "kfold"
        assert str(home.table.get_cell("kfold:1", "status")) == "finished"
        assert str(home.table.get_cell("kfold:1", "questions")).strip() == "12"
        home.table.move_cursor(row=keys.index("kfold:1"), animate=False)
        await pilot.pause()
        assert home.current is not None and home.current.kind == "kfold"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, BenchmarkScreen), what="Benchmark")
        screen = app.screen
        assert isinstance(screen, BenchmarkScreen)
        await wait_until(pilot, lambda: screen.run_status == "finished", what="the replay")
        await wait_until(pilot, lambda: screen.progress.kfold is not None, what="the table")
        screen.flush()
        await pilot.pause()
        scored = screen.progress.kfold
        assert scored is not None and scored.run_id == 1
        assert scored.result == record.result  # the stored table, not a new fit
        widget = screen.query_one("#bench-comparison")
        table = "\n".join(widget.render_line(y).text for y in range(widget.size.height))
        for row in kfold_rows(record.result, scored.scale):
            assert row["model"].split(" (")[0] in table
            assert row["AAD (0-10)"] in table and row["bracket acc"] in table
        count = screen.query_one("#bench-count").render_line(0).text
        assert "graded 12/12" in count  # the grade run's stored outcomes, replayed
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is home, what="back to the runs")
