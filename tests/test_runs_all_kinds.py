"""Every run is in the history (issue 20 item 5): ``quiztui runs`` and the Runs screen list vet,
grade, review and robustness runs, each with its kind. The runs are made as a user makes them:
real processes against the fake OpenAI server on loopback, one real SQLite store. Within a test,
the listings after the first run through ``main()`` in-process (``cli_helpers``)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from cli_helpers import quiztui_main
from conftest import REPO, isolated_env
from runs_helpers import listed_runs
from test_cli import run_cli
from tui_helpers import wait_until

from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.store.history import listing_key, run_history
from quiztui.testing.fake_openai import FakeOpenAI

QUIZ = REPO / "sample_quizzes" / "planted_errors.json"

ANSWERS = """\
id,question,reference,candidate,human
w1,Why does ice float on water?,Ice is less dense than liquid water.,It is lighter for its size \
than the water around it.,4
w2,What gas do we breathe out?,Carbon dioxide.,We breathe out oxygen.,1
w3,Why is the sky blue?,Air scatters blue light more than red light.,Blue light is scattered \
most by the air.,5
"""


def judged_by(server: FakeOpenAI) -> dict[str, str]:
    return {
        "QUIZTUI_JUDGE_PROVIDER": "openai-compat",
        "QUIZTUI_JUDGE_BASE_URL": server.base_url,
        "QUIZTUI_JUDGE_MODEL": "fake-judge",
    }


@pytest.fixture(scope="module")
def every_kind_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One vet, one grade, one review and one robustness run in the store, in that order: made
    once per module, in a home of their own."""
    home = tmp_path_factory.mktemp("every-kind")
    answers = home / "answers.csv"
    answers.write_text(ANSWERS, encoding="utf-8")
    with FakeOpenAI.from_quiz(load_quiz(QUIZ)) as server:
        env = isolated_env(home) | judged_by(server)
        for args in (
            ("vet", str(QUIZ), "--no-tui"),
            ("grade", str(answers)),
            ("review", str(QUIZ), "--limit", "2"),
            ("robustness", str(QUIZ), "--variants", "1"),
        ):
            out = run_cli(*args, env=env)
            assert out.returncode in (0, 1), f"{args[0]}: {out.stderr}"
        assert any(r.status == 200 for r in server.requests)
    return Path(env["QUIZTUI_DATA_DIR"]) / "quiztui.db"


@pytest.fixture
def every_kind(every_kind_once: Path) -> Path:
    """A copy of that store in this test's data dir (closed: its WAL is empty)."""
    data = Path(os.environ["QUIZTUI_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    for part in (every_kind_once, every_kind_once.with_name(every_kind_once.name + "-wal")):
        if part.exists():
            shutil.copy(part, data / part.name)
    return data / "quiztui.db"


def test_runs_lists_every_kind_newest_first(every_kind: Path) -> None:
    out = run_cli("runs")
    assert out.returncode == 0, out.stderr
    lines = listed_runs(out.stdout)
    assert all(len(line) <= 80 for line in out.stdout.splitlines())
    kinds = [line.split()[3] for line in lines]
    assert kinds == ["robustness", "review", "grade", "vet"]
    # each kind's first run: kind:N beside the vet sequence, never the same bare id
    assert [line.split()[0] for line in lines] == ["robustness:1", "review:1", "grade:1", "1"]
    grade = next(line for line in lines if " grade " in line)
    assert "answers.csv" in grade and "fake-judge" in grade
    # 3 answers graded; badges are a vet run's: a dash, not 0/0/0
    assert re.search(r"\s3\s+—\s", grade), grade
    review = next(line for line in lines if " review " in line)
    assert "planted_errors" in review  # the quiz title review stored
    assert re.search(r"\s2\s+—\s", review), review
    vet = next(line for line in lines if " vet " in line)
    assert re.search(r"\s12\s+\d+/\d+/\d+\s", vet), vet  # 12 questions, good/quest/poor

    only = quiztui_main("runs", "--kind", "grade")
    assert only.returncode == 0, only.stderr
    assert [run.split()[3] for run in listed_runs(only.stdout)] == ["grade"]
    # --quiz: the runs of that quiz (a grade run grades answers: it has none)
    of_quiz = quiztui_main("runs", "--quiz", str(QUIZ))
    assert of_quiz.returncode == 0, of_quiz.stderr
    kinds = {run.split()[3] for run in listed_runs(of_quiz.stdout)}
    assert kinds == {"vet", "review", "robustness"}


def test_each_kind_has_its_own_ids_and_keys(every_kind: Path) -> None:
    with Store(every_kind) as store:
        listings = run_history(store)
    by_kind = {r.kind: r for r in listings}
    assert set(by_kind) == {"vet", "grade", "review", "robustness"}
    # each table numbers its runs from 1: the key tells them apart
    assert {r.id for r in listings} == {1}
    assert len({listing_key(r) for r in listings}) == 4
    assert listing_key(by_kind["vet"]) == "1"
    assert listing_key(by_kind["grade"]) == "grade:1"
    assert by_kind["review"].questions == 2 and by_kind["robustness"].questions == 12
    assert by_kind["grade"].judged + by_kind["grade"].unjudged == 3


def test_unknown_kind_is_refused() -> None:
    out = quiztui_main("runs", "--kind", "lint")
    assert out.returncode == 2
    assert "invalid choice: 'lint'" in out.stderr and "Traceback" not in out.stderr


async def test_the_runs_screen_lists_every_kind_and_opens_each_in_its_screen(
    every_kind: Path,
) -> None:
    from quiztui.pipeline.history import StoreHistory
    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.grade import GradeScreen
    from quiztui.tui.screens.review import ReviewScreen
    from quiztui.tui.screens.robustness import RobustnessScreen
    from quiztui.tui.screens.runs import RunsScreen
    from quiztui.tui.widgets.cells import DASH

    with Store(every_kind) as store:
        outcomes = store.grades.outcomes(1)
    home = RunsScreen(StoreHistory(every_kind))
    app = GradeApp(home, title="quiztui runs")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: home.loaded, what="the history loaded")
        table = home.table
        keys = [str(key.value) for key in table.rows]
        assert keys == ["robustness:1", "review:1", "grade:1", "1"]
        kinds = [str(table.get_cell(key, "kind")) for key in keys]
        assert kinds == ["robustness", "review", "grade", "vet"]
        ids = [str(table.get_cell(key, "id")).strip() for key in keys]
        assert ids == keys  # kind:N, as quiztui runs prints them
        assert {str(table.get_cell(key, "status")) for key in keys} == {"finished"}
        badges = [str(table.get_cell(key, "badges")).strip() for key in keys]
        assert badges[:3] == [DASH] * 3  # badges are a vet run's
        assert re.fullmatch(r"\d+/\d+/\d+", badges[3])

        await pilot.press("j", "j")  # the grade run
        assert home.current is not None and home.current.kind == "grade"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GradeScreen), what="Grade screen")
        grade = app.screen
        assert isinstance(grade, GradeScreen)
        await wait_until(pilot, lambda: grade.run_status == "finished", what="the replay")
        # the stored outcomes, one row each, with their stored scores: nothing was re-graded
        assert len(grade.records) == 3
        shown = sorted(r.outcome.raw for r in grade.records.values() if r.outcome is not None)
        assert shown == sorted(o.raw for _, _, o in outcomes)

        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is home, what="back to the runs")
        # the review run: the two questions it reviewed, with their stored final scores
        with Store(every_kind) as store:
            reviewed = {o.question_id: o.scores for _, _, o, _ in store.reviews.outcomes(1)}
        await pilot.press("k", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="Review")
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await wait_until(pilot, lambda: review.run_status == "finished", what="the replay")
        scores = {
            r.question.id: r.outcome.scores
            for r in review.records.values()
            if r.outcome is not None
        }
        assert scores == reviewed and len(scores) == 2
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is home, what="back to the runs")

        # the robustness run: its stored results over its quiz file, nothing measured again
        with Store(every_kind) as store:
            stored = {r.question_id: r.fragile for r in store.robustness.results(1)}
        await pilot.press("k", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RobustnessScreen), what="Robustness")
        robust = app.screen
        assert isinstance(robust, RobustnessScreen)
        await wait_until(pilot, lambda: robust.run_status == "finished", what="the replay")
        shown = {qid: r.result.fragile for qid, r in robust.records.items() if r.result is not None}
        assert shown == stored and len(shown) == 12


def test_a_generate_run_is_listed_with_its_document_and_pairs(tmp_path: Path) -> None:
    # Generate runs are kept in the store too (schema v10), so the history has every kind.
    from test_generate import MARKDOWN

    doc = tmp_path / "vell.md"
    doc.write_text(MARKDOWN, encoding="utf-8")
    output = tmp_path / "vell_qa.json"
    made = run_cli("generate", str(doc), "--subject", "islands", "-o", str(output))
    assert made.returncode == 0, made.stderr
    written = len(json.loads(output.read_text(encoding="utf-8")))
    out = quiztui_main("runs", "--kind", "generate")
    assert out.returncode == 0, out.stderr
    (line,) = listed_runs(out.stdout)
    assert line.split()[3:5] == ["generate", "finished"] and "vell.md" in line
    with Store(Path(os.environ["QUIZTUI_DATA_DIR"]) / "quiztui.db") as store:
        (listing,) = run_history(store, kind="generate")
        pairs = store.generate.pairs(listing.id)
    assert listing.simulated and listing.quiz_path == str(output)
    assert listing.questions == written == len(pairs) > 0
    assert [n for n, *_ in pairs] == list(range(1, written + 1))
    assert listing_key(listing) == f"generate:{listing.id}"
