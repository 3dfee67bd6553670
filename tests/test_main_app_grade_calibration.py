"""The vet app's Grade screen (``a`` in ``quiztui QUIZ``) with calibrations, as ``grade --tui``
has them: ``[grade] answers_calibration`` applied (a "calibrated (LO-HI)" column equal to
``Calibration.apply`` on the same answers), the picker over the saved calibrations when none is
configured, and a configured one that cannot be loaded named in the screen with raw scores shown.

The app is built as ``quiztui QUIZ`` builds it (``cli.vet.build_vet_app``, simulated vet judge,
real config file, real SQLite store); the calibrations are fitted through the real CLI
(``grade --benchmark FILE --grader lexical --fit kfold``) on a geography teacher's marks written to
``tmp_path``; answers are typed into the screen's one-answer form.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static
from tui_helpers import paste, settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli import main
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.core.grading import GradeItem
from quiztui.formats import load_quiz
from quiztui.pipeline.grade import lexical_outcome
from quiztui.pipeline.grade_fit import load_calibration
from quiztui.store import Store
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.grade import GradeScreen

REPO = Path(__file__).resolve().parents[1]
PLANTED = REPO / "sample_quizzes" / "planted_errors.json"
SIZE = (120, 40)
SMALL = (80, 24)

# question, reference, answer, the teacher's mark out of 5
MARKS = [
    ("What is the capital of Australia?", "Canberra", "Canberra", "5"),
    ("What is the capital of Australia?", "Canberra", "Canberra, in the ACT", "5"),
    ("What is the capital of Australia?", "Canberra", "Sydney", "0"),
    ("What is the capital of Australia?", "Canberra", "I think it is Melbourne", "0"),
    ("What is the capital of Australia?", "Canberra", "canberra city", "4"),
    ("Which river flows through Cairo?", "The Nile", "the Nile", "5"),
    ("Which river flows through Cairo?", "The Nile", "Nile river", "4"),
    ("Which river flows through Cairo?", "The Nile", "the Amazon", "0"),
    ("Which river flows through Cairo?", "The Nile", "not sure", "0"),
    ("Which river flows through Cairo?", "The Nile", "the river Nile in Egypt", "4"),
    ("What is the largest ocean?", "The Pacific Ocean", "Pacific", "4"),
    ("What is the largest ocean?", "The Pacific Ocean", "the Pacific ocean", "5"),
    ("What is the largest ocean?", "The Pacific Ocean", "Atlantic Ocean", "1"),
    ("What is the largest ocean?", "The Pacific Ocean", "the Indian ocean", "1"),
    ("What is the largest ocean?", "The Pacific Ocean", "no idea", "0"),
    ("Which mountain range contains Everest?", "The Himalayas", "the Himalayas", "5"),
    ("Which mountain range contains Everest?", "The Himalayas", "Himalaya mountains", "4"),
    ("Which mountain range contains Everest?", "The Himalayas", "the Alps", "0"),
    ("Which mountain range contains Everest?", "The Himalayas", "the Andes I believe", "0"),
    ("Which mountain range contains Everest?", "The Himalayas", "The Himalayas in Nepal", "5"),
]

# Unmarked answers typed into the Grade screen's form (grouped by question, as a teacher would).
UNMARKED = [
    ("What is the capital of Australia?", "Canberra", "canberra"),
    ("What is the capital of Australia?", "Canberra", "Perth"),
    ("Which river flows through Cairo?", "The Nile", "it is the Nile"),
    ("Which river flows through Cairo?", "The Nile", "the Danube"),
]


def config_file(text: str) -> None:
    """The user's config.toml, in the isolated QUIZTUI_CONFIG_DIR."""
    path = Path(os.environ["QUIZTUI_CONFIG_DIR"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def saved_dir() -> Path:
    return Path(os.environ["QUIZTUI_DATA_DIR"]) / "calibrations"


def fit(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, scale: str) -> Path:
    """``grade --benchmark marks.csv --grader lexical --fit kfold --save-calibration NAME``."""
    marks = tmp_path / "geography-marks.csv"
    with marks.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "reference", "answer", "score"])
        w.writerows(MARKS)
    args = ["grade", "--benchmark", str(marks), "--grader", "lexical", "--fit", "kfold"]
    assert main([*args, "--scale", scale, "--save-calibration", name, "--format", "json"]) == 0
    capsys.readouterr()
    path = saved_dir() / f"{name}.json"
    assert path.is_file()
    return path


@pytest.fixture
def geo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    return fit(tmp_path, capsys, "geo", "0-5")


@pytest.fixture
def geo10(tmp_path: Path, capsys: pytest.CaptureFixture[str], geo: Path) -> Path:
    """The same marks read as out of 10: a second saved calibration, on another scale."""
    return fit(tmp_path, capsys, "geo10", "0-10")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "runs.sqlite") as s:
        yield s


def vet_app(store: Store) -> QuiztuiApp:
    """``quiztui sample_quizzes/planted_errors.json`` with the config as the user wrote it."""
    config = load_config()
    quiz = load_quiz(PLANTED)
    app = build_vet_app(config, store, quiz, vet_runs(config, quiz, store, None))
    assert isinstance(app, QuiztuiApp)
    return app


async def open_grade(pilot: Pilot[None]) -> GradeScreen:
    """The vet run settles, then ``a`` opens the Grade screen with its form."""
    await settled(pilot)
    await pilot.press("a")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, GradeScreen), what="Grade")
    screen = pilot.app.screen
    assert isinstance(screen, GradeScreen)
    return screen


async def type_answers(pilot: Pilot[None], screen: GradeScreen) -> list[GradeItem]:
    """Each unmarked answer typed into the form and graded (enter); the items as graded."""
    items = []
    for n, (question, reference, candidate) in enumerate(UNMARKED, start=1):
        screen.query_one("#grade-question", Input).value = question
        screen.query_one("#grade-reference", Input).value = reference
        screen.query_one("#grade-candidate", Input).focus()
        await pilot.pause()
        await paste(pilot, candidate)
        await pilot.press("enter")
        items.append(GradeItem(f"ans-{n}", question, reference, candidate))
    await wait_until(
        pilot,
        lambda: (
            len(screen.records) == len(items)
            and all(r.outcome is not None for r in screen.records.values())
        ),
        what="every typed answer graded",
    )
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen.flush()
    await pilot.pause()
    return items


def column(screen: GradeScreen, key: str) -> dict[str, str]:
    table = screen.table
    return {table.get_cell(row, "id").plain: table.get_cell(row, key).plain for row in table.rows}


def column_keys(screen: GradeScreen) -> list[object]:
    return [c.key.value for c in screen.table.ordered_columns]


def header(screen: GradeScreen) -> str:
    return str(screen.query_one("#grade-header", Static).render())


@pytest.mark.parametrize("size", [SIZE, SMALL])
async def test_the_configured_calibration_maps_the_answers_graded_in_the_vet_app(
    store: Store,
    geo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    size: tuple[int, int],
) -> None:
    config_file('[grade]\nanswers_calibration = "geo"\n')
    app = vet_app(store)
    async with app.run_test(size=size) as pilot:
        screen = await open_grade(pilot)
        # The calibration's grader, not [grade] grader's default: its raw scores are mapped.
        assert screen.grader == "lexical"
        assert screen.calibration is not None and screen.calibration.name == "geo"
        assert screen.query_one("#grade-calibration", Select).value == "geo"
        assert screen.calibration_names == ["geo"]
        assert "calibration geo (grader lexical, " in header(screen)
        items = await type_answers(pilot, screen)

        table = screen.table
        assert [str(c.label) for c in table.ordered_columns][:3] == [
            "id",
            "score",
            "calibrated (0-5)",
        ]
        assert table.hidden_columns == [] and not table.overflowing
        raw = [lexical_outcome(item).raw for item in items]
        expected = load_calibration(geo).apply(items, raw)
        shown = column(screen, "calibrated")
        assert None not in expected
        assert shown == {i.id: f"{v:.2f}" for i, v in zip(items, expected, strict=True)}
        # Right answers map above wrong ones on the teacher's 0-5 scale.
        assert float(shown["ans-1"]) > float(shown["ans-2"])
        assert float(shown["ans-3"]) > float(shown["ans-4"])

    # The CLI, configured alike, gives the same calibrated scores for the same answers.
    answers = tmp_path / "typed.csv"
    with answers.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "question", "reference", "candidate"])
        w.writerows([(i.id, i.question, i.reference, i.candidate) for i in items])
    code = await asyncio.to_thread(main, ["grade", str(answers), "--format", "json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert {i["id"]: f"{i['calibrated']:.2f}" for i in report["items"]} == shown


async def test_with_none_configured_the_picker_offers_the_saved_calibrations(
    store: Store, geo: Path, geo10: Path
) -> None:
    config_file('[grade]\ngrader = "lexical"\n')
    app = vet_app(store)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_grade(pilot)
        assert screen.calibration is None and screen.calibration_problem is None
        assert screen.calibration_names == ["geo", "geo10"]
        assert screen.query_one("#grade-calibration", Select).value == "none"
        items = await type_answers(pilot, screen)
        assert "calibrated" not in column_keys(screen)
        raw = [lexical_outcome(item).raw for item in items]

        await pilot.press("escape")  # the form closes; the table has the keys
        assert isinstance(app.screen, GradeScreen) and screen.table.has_focus
        for name, path in (("geo", geo), ("geo10", geo10)):
            await pilot.press("c")
            picked = lambda name=name: (  # noqa: E731
                screen.calibration is not None and screen.calibration.name == name
            )
            await wait_until(pilot, picked, what=f"calibration {name} applied")
            await pilot.pause()
            screen.flush()
            calibration = load_calibration(path)
            expected = calibration.apply(items, raw)
            assert column(screen, "calibrated") == {
                i.id: f"{v:.2f}" for i, v in zip(items, expected, strict=True) if v is not None
            }
            assert len(expected) == len(items) and None not in expected
            assert f"calibrated ({calibration.scale})" in [
                str(c.label) for c in screen.table.ordered_columns
            ]
            assert f"calibration {name} (grader lexical" in header(screen)

        await pilot.press("c")  # back to none
        await wait_until(pilot, lambda: screen.calibration is None, what="no calibration")
        await pilot.pause()
        assert "calibrated" not in column_keys(screen)
        assert screen.table.row_count == len(items)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "physics",
            "[grade] answers_calibration 'physics': no such file or saved calibration",
        ),
        ("BROKEN", "broken.json: not a calibration file"),
    ],
)
async def test_a_configured_calibration_that_cannot_be_loaded_is_named_and_raw_scores_shown(
    store: Store, geo: Path, tmp_path: Path, setting: str, message: str
) -> None:
    if setting == "BROKEN":  # a file cut off mid-write
        broken = tmp_path / "broken.json"
        broken.write_text(geo.read_text(encoding="utf-8")[:200], encoding="utf-8")
        setting = str(broken)
    config_file(f'[grade]\ngrader = "lexical"\nanswers_calibration = "{setting}"\n')
    app = vet_app(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_grade(pilot)
        assert screen.calibration is None
        assert screen.calibration_problem is not None and message in screen.calibration_problem
        # The header line (cut to the width: a long path gives way) and the toast (in full).
        assert "calibration not applied: " in header(screen)
        assert message.split(": ", 1)[-1] in header(screen)
        toasts = [str(n.message) for n in app._notifications]
        assert any(message in m for m in toasts), toasts
        # The picker still offers the saved calibrations.
        assert screen.calibration_names == ["geo"]
        assert screen.query_one("#grade-calibration", Select).value == "none"

        items = await type_answers(pilot, screen)
        assert "calibrated" not in column_keys(screen)
        scores = column(screen, "score")
        assert scores == {i.id: f"{lexical_outcome(i).raw:.3g}" for i in items}

        # Picking a saved one applies it and the problem line goes.
        await pilot.press("escape", "c")
        await wait_until(pilot, lambda: screen.calibration is not None, what="geo applied")
        await pilot.pause()
        assert "calibration not applied" not in header(screen)
        assert "calibration geo (grader lexical" in header(screen)


async def test_a_stored_grade_run_opened_from_the_runs_screen_gets_the_configured_calibration(
    geo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``quiztui runs --tui`` (and ``h`` in the vet app) re-opens a grade run on the Grade
    screen with the calibrations the other two faces give it: the configured one applied."""
    from quiztui.assemble.grade import configured_calibrations
    from quiztui.pipeline.history import StoreHistory
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.runs import RunsScreen

    config_file('[grade]\nanswers_calibration = "geo"\n')
    answers = tmp_path / "unmarked.csv"
    with answers.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "reference", "answer"])
        w.writerows(UNMARKED)
    db = tmp_path / "grade-runs.sqlite"
    args = ["grade", str(answers), "--db", str(db), "--format", "json"]
    assert await asyncio.to_thread(main, args) == 0  # the CLI runs its own event loop
    cli = json.loads(capsys.readouterr().out)["items"]
    config = load_config()
    home = RunsScreen(StoreHistory(db), calibrations=lambda: configured_calibrations(config))
    app = GradeApp(home, title="quiztui runs")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: home.loaded, what="the history loaded")
        assert home.current is not None and home.current.kind == "grade"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GradeScreen), what="Grade")
        screen = app.screen
        assert isinstance(screen, GradeScreen)
        await wait_until(pilot, lambda: screen.run_status == "finished", what="the replay")
        screen.flush()
        await pilot.pause()
        assert screen.calibration is not None and screen.calibration.name == "geo"
        assert "calibration geo (grader lexical, " in header(screen)
        shown = column(screen, "calibrated")
        # the same mapped scores as the CLI's report of the same run
        assert shown == {item["id"]: f"{item['calibrated']:.2f}" for item in cli}
