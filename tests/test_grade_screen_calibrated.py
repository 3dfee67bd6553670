"""The Grade screen with a saved calibration (``quiztui grade ANSWERS --calibration NAME --tui``):
a "calibrated (LO-HI)" column beside the raw score, in the detail view too, the header naming the
calibration; the values are ``Calibration.apply``'s, the CLI report's.

The calibration is fitted here through the real CLI (``--benchmark FILE --fit kfold``, offline
lexical grader) on a teacher's marks written to ``tmp_path``; the screen grades real answer files
through ``grade_events`` into a real SQLite store.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_calibration_names import MARKS, UNMARKED, calibrations, fit, write_marks
from textual.pilot import Pilot
from textual.widgets import Select, Static
from textual.widgets.data_table import ColumnKey
from tui_helpers import wait_until

from quiztui.assemble.grade import grade_events
from quiztui.cli import main
from quiztui.config import load_config
from quiztui.core.grading import GradeItem
from quiztui.formats.answers import load_answers
from quiztui.pipeline.grade import GradeFinished
from quiztui.pipeline.grade_fit import Calibration, find_calibration, load_calibration
from quiztui.store import Store
from quiztui.tui.grade_app import GradeApp
from quiztui.tui.screens.grade import GradeScreen
from quiztui.tui.screens.grade_detail import GradeDetailScreen

SnapCompare = Callable[..., bool]
SIZE = (120, 40)
SMALL = (80, 24)

# Unmarked answers to the marked questions, more than one flush's worth of rows.
MORE = [
    ("What gas do plants take in?", "Carbon dioxide", "plants breathe in oxygen"),
    ("What gas do plants take in?", "Carbon dioxide", "CO2, carbon dioxide"),
    ("Where is DNA kept?", "In the nucleus", "inside the nucleus of the cell"),
    ("Where is DNA kept?", "In the nucleus", "I don't remember"),
    ("What gas do plants take in?", "Carbon dioxide", "dioxide"),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "grade.sqlite") as s:
        yield s


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "week4-answers.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "reference", "candidate"])
        for n, row in enumerate([*UNMARKED, *MORE], start=1):
            w.writerow([f"w{n}", *row])
    return path


@pytest.fixture
def calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Calibration:
    fit(write_marks(tmp_path / "marks.csv"), capsys, "--save-calibration", "bio")
    return find_calibration("bio", calibrations(tmp_path))


def starter(store: Store, source: str) -> Callable[[list[GradeItem], str], AsyncIterator[Any]]:
    """What ``quiztui grade --tui`` passes, with the run's duration zeroed for snapshots."""
    config = load_config()

    async def start(items: list[GradeItem], grader: str) -> AsyncIterator[Any]:
        async for event in grade_events(config, store, items, source, grader):
            if isinstance(event, GradeFinished):
                event = GradeFinished(event.run_id, dataclasses.replace(event.summary, seconds=0))
            yield event

    return start


def calibrated_app(store: Store, answers: Path, calibration: Calibration) -> GradeApp:
    screen = GradeScreen(
        load_answers(answers),
        starter(store, answers.name),
        grader=calibration.grader,
        source=answers.name,
        flush_interval=0.02,
        calibration=calibration,
    )
    return GradeApp(screen)


async def finished(pilot: Pilot[None]) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, GradeScreen)
    screen.flush()
    await pilot.pause()


def column(screen: GradeScreen, key: str) -> dict[str, str]:
    """One column's cells as shown, by answer id."""
    table = screen.table
    return {table.get_cell(row, "id").plain: table.get_cell(row, key).plain for row in table.rows}


def header(screen: GradeScreen) -> str:
    return str(screen.query_one("#grade-header", Static).render())


@pytest.mark.parametrize("size", [SIZE, SMALL])
async def test_the_calibrated_column_shows_calibration_apply_beside_the_raw_score(
    store: Store,
    answers: Path,
    calibration: Calibration,
    capsys: pytest.CaptureFixture[str],
    size: tuple[int, int],
) -> None:
    app = calibrated_app(store, answers, calibration)
    items = load_answers(answers)
    async with app.run_test(size=size) as pilot:
        await finished(pilot)
        screen = app.home
        assert isinstance(screen, GradeScreen) and screen.progress.status == "finished"
        table = screen.table
        labels = [str(c.label) for c in table.ordered_columns]
        assert labels[:3] == ["id", "score", "calibrated (0-10)"]
        # Every column fits the terminal: none folded away, no sideways scrolling.
        assert table.hidden_columns == [] and not table.overflowing
        assert table.columns[ColumnKey("calibrated")].width >= len("calibrated (0-10)")

        shown = column(screen, "calibrated")
        by_id = {r.item.id: r for r in screen.records.values()}
        raw = [by_id[item.id].outcome.raw for item in items]  # type: ignore[union-attr]
        expected = calibration.apply(items, raw)
        assert len(shown) == len(items) == len(expected)
        for item, value in zip(items, expected, strict=True):
            assert value is not None and shown[item.id] == f"{value:.2f}"
        # The wrong answers map below the right ones on the marks' 0-10 scale.
        assert float(shown["w2"]) < 5 < float(shown["w1"])
        assert "calibration bio (grader lexical, " in header(screen)
        assert "scale 0-10" in header(screen)

        # The detail view says the same number and which calibration gave it.
        table.focus()
        await pilot.press("g", "enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, GradeDetailScreen)
        head = str(detail.query_one("#grade-detail-head", Static).render())
        assert f"calibrated (0-10) {shown['w1']}" in head and "calibration bio" in head

    # The CLI report over the same file prints the same calibrated scores (the CLI runs its
    # own event loop: a thread of its own here).
    args = ["grade", str(answers), "--calibration", "bio", "--format", "json"]
    assert await asyncio.to_thread(main, args) == 0
    report = json.loads(capsys.readouterr().out)
    assert {i["id"]: f"{i['calibrated']:.2f}" for i in report["items"]} == shown


async def test_another_grader_gets_no_calibrated_score_and_the_header_says_why(
    store: Store, answers: Path, calibration: Calibration
) -> None:
    app = calibrated_app(store, answers, calibration)
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        screen = app.home
        assert isinstance(screen, GradeScreen)
        screen.set_grader("pass3")
        screen.action_start_run()
        await finished(pilot)
        assert screen.progress.grader == "pass3" and screen.progress.done == len(MORE) + 3
        assert set(column(screen, "calibrated").values()) == {"n/a"}
        assert "calibration bio is for grader lexical, not pass3: calibrated n/a" in header(screen)
        assert all(r.calibration is None for r in screen.records.values())


def test_grade_tui_hands_the_named_calibration_to_the_screen(
    answers: Path, calibration: Calibration, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``quiztui grade ANSWERS --calibration NAME --tui``: the app is built with that
    calibration and its grader (the app's run is replaced by a capture)."""
    opened: list[GradeScreen] = []

    def capture(self: GradeApp, *args: object, **kwargs: object) -> None:
        home = self.home
        assert isinstance(home, GradeScreen)
        opened.append(home)

    monkeypatch.setattr(GradeApp, "run", capture)
    assert main(["grade", str(answers), "--calibration", "bio", "--tui"]) == 0
    (screen,) = opened
    assert screen.calibration is not None and screen.calibration.name == "bio"
    assert screen.calibration.path == calibration.path and screen.grader == "lexical"
    assert [i.id for i in screen.items] == [f"w{n}" for n in range(1, len(MORE) + 4)]
    assert len(MARKS) == len(screen.calibration.marked_scores)
    # The picker offers the saved calibrations and loads them from the data dir.
    assert screen.calibration_names == ["bio"] and screen.load_calibration is not None
    assert screen.load_calibration("bio")[0].path == calibration.path


def test_grade_calibrated_snapshot(
    snap_compare: SnapCompare, store: Store, answers: Path, calibration: Calibration
) -> None:
    """120×40: the calibrated column beside the score, the calibration named in the header."""
    app = calibrated_app(store, answers, calibration)
    assert snap_compare(app, terminal_size=SIZE, run_before=finished)


def test_grade_calibrated_small_terminal_snapshot(
    snap_compare: SnapCompare, store: Store, answers: Path, calibration: Calibration
) -> None:
    """80×24: every column still fits."""
    app = calibrated_app(store, answers, calibration)
    assert snap_compare(app, terminal_size=SMALL, run_before=finished)


def picker_app(store: Store, answers: Path, tmp_path: Path) -> GradeApp:
    """What ``grade ANSWERS --tui`` opens when calibrations are saved: none applied, a picker."""
    saved = calibrations(tmp_path)

    def load(name: str) -> tuple[Calibration, Any]:
        return load_calibration(saved / f"{name}.json"), None

    screen = GradeScreen(
        load_answers(answers),
        starter(store, answers.name),
        grader="lexical",
        source=answers.name,
        flush_interval=0.02,
        calibrations=["bio", "bio20"],
        load_calibration=load,
    )
    return GradeApp(screen)


@pytest.fixture
def bio20(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], calibration: Calibration
) -> Calibration:
    """The same marks read as out of 20: another calibration, on another scale."""
    marks = write_marks(tmp_path / "marks.csv")
    fit(marks, capsys, "--save-calibration", "bio20", "--scale", "0-20")
    return load_calibration(calibrations(tmp_path) / "bio20.json")


async def test_the_picker_applies_a_saved_calibration_to_the_rows_and_none_takes_it_away(
    store: Store,
    answers: Path,
    calibration: Calibration,
    bio20: Calibration,
    tmp_path: Path,
) -> None:
    app = picker_app(store, answers, tmp_path)
    items = load_answers(answers)
    async with app.run_test(size=SMALL) as pilot:
        await finished(pilot)
        screen = app.home
        assert isinstance(screen, GradeScreen)
        assert "calibrated" not in [c.key.value for c in screen.table.ordered_columns]
        assert "calibration" not in header(screen)
        raw = [r.outcome.raw for r in sorted(screen.records.values(), key=lambda r: r.order)]  # type: ignore[union-attr]

        for expected_name, cal in (("bio", calibration), ("bio20", bio20)):
            screen.table.focus()
            await pilot.press("c")
            picked = lambda name=expected_name: (  # noqa: E731
                screen.calibration is not None and screen.calibration.name == name
            )
            await wait_until(pilot, picked, what=f"calibration {expected_name} applied")
            await pilot.pause()
            screen.flush()
            table = screen.table
            head = f"calibrated ({cal.scale})"
            assert [str(c.label) for c in table.ordered_columns][:3] == ["id", "score", head]
            assert table.hidden_columns == [] and not table.overflowing
            values = cal.apply(items, raw)
            shown = column(screen, "calibrated")
            assert shown == {i.id: f"{v:.2f}" for i, v in zip(items, values, strict=True)}
            assert f"calibration {expected_name} (grader lexical" in header(screen)

        await pilot.press("c")  # back to none
        await wait_until(pilot, lambda: screen.calibration is None)
        await pilot.pause()
        assert "calibrated" not in [c.key.value for c in screen.table.ordered_columns]
        assert "calibration" not in header(screen) and screen.table.row_count == len(items)


async def test_a_calibration_that_cannot_be_loaded_is_a_toast_and_the_picker_stays(
    store: Store, answers: Path, calibration: Calibration, tmp_path: Path
) -> None:
    app = picker_app(store, answers, tmp_path)
    (calibrations(tmp_path) / "bio.json").write_text("{}", encoding="utf-8")  # broken meanwhile
    async with app.run_test(size=SIZE) as pilot:
        await finished(pilot)
        screen = app.home
        assert isinstance(screen, GradeScreen)
        await screen.pick_calibration("bio")
        await pilot.pause()
        assert screen.calibration is None
        assert screen.query_one("#grade-calibration", Select).value == "none"
        toasts = [n.message for n in app._notifications]
        assert any("bio.json: not a calibration file" in m for m in toasts)
