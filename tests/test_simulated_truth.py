"""Issue 21 item 5 (T5): the simulated judge keeps the truth it had when the run started.

The app is built the way ``quiztui QUIZ --provider simulated`` builds it (``build_vet_app`` over
``vet_runs``), with a real SQLite store and a real quiz file. Editing a question — its stem and
its key — must not teach the simulated judge that the edited key is right: the new assertions
take their truth from the original question (the option that was correct stays correct, matched
by option text; options it never had are false), so a correct key edited to a wrong option is
judged wrong and its badge drops, and a wrong key fixed against a truth file is judged good.
"""

from __future__ import annotations

import json
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input
from tui_helpers import paste, settled, wait_until

from quiztui.assemble.vet import teach_simulated_judge, vet_runs
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.core.assertions import assertion_text
from quiztui.core.kscore import Badge
from quiztui.core.quiz import Quiz
from quiztui.formats import load_quiz
from quiztui.providers.factory import simulated_provider
from quiztui.store import Store
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.screens.edit import EditQuestionScreen

QUESTIONS = [
    {
        "question": "What is the capital of Australia?",
        "responses": ["Sydney", "Canberra", "Melbourne", "Perth"],
        "correct": "Canberra",
        "category": "Geography",
    },
    {
        "question": "Which planet is closest to the Sun?",
        "responses": ["Venus", "Mercury", "Mars", "Earth"],
        "correct": "Mercury",
        "category": "Science",
    },
    {
        "question": "How many sides does a hexagon have?",
        "responses": ["5", "6", "7", "8"],
        "correct": "8",  # a planted wrong key: the truth file says 6
        "category": "Mathematics",
    },
]
TRUTH = {
    "answers": [
        {"question": "What is the capital of Australia?", "correct": "Canberra"},
        {"question": "Which planet is closest to the Sun?", "correct": "Mercury"},
        {"question": "How many sides does a hexagon have?", "correct": "6"},
    ]
}


def write_quiz(tmp_path: Path, *, truth_file: bool) -> Path:
    path = tmp_path / "geo.json"
    path.write_text(json.dumps(QUESTIONS, indent=2), encoding="utf-8")
    if truth_file:
        (tmp_path / "geo.truth.json").write_text(json.dumps(TRUTH, indent=2), encoding="utf-8")
    return path


def build_app(quiz_path: Path, db: Path) -> tuple[QuiztuiApp, Store]:
    """A perfect simulated judge (TPR = TNR = 1), so a badge says exactly what it believes."""
    config = load_config()
    judge = config.judge.model_copy(update={"provider": "simulated", "logprobs": "off"})
    simulated = config.simulated.model_copy(
        update={"tpr": 1.0, "tnr": 1.0, "latency": 0.0, "line_delay": 0.0}
    )
    config = config.model_copy(update={"judge": judge, "simulated": simulated})
    store = Store(db)
    quiz = load_quiz(quiz_path)
    return build_vet_app(config, store, quiz, vet_runs(config, quiz, store, None)), store


async def edit_question(pilot: Pilot[None], row: int, stem: str, key: str) -> None:
    """Open row ``row``'s detail, press e, retype the stem and the key letter, ctrl+s."""
    app = pilot.app
    assert isinstance(app, QuiztuiApp)
    app.vet_screen.questions_table.focus()
    await pilot.press("g", *(["j"] * row), "enter")
    assert isinstance(app.screen, QuestionDetailScreen)
    await pilot.press("e")
    await wait_until(pilot, lambda: isinstance(app.screen, EditQuestionScreen), what="editor")
    for field_id, value in (("#edit-text", stem), ("#edit-key", key)):
        field = app.screen.query_one(field_id, Input)
        field.focus()
        await pilot.press("end", "ctrl+u")
        await paste(pilot, value)
        assert field.value == value
    await pilot.press("ctrl+s")
    await settled(pilot)


def badge_of(app: QuiztuiApp, qid: str) -> Badge:
    score = app.vet_screen.state.questions[qid].score
    assert score is not None, f"{qid} has no score"
    return score.badge


async def test_editing_a_correct_key_to_a_wrong_option_drops_the_badge(tmp_path: Path) -> None:
    app, store = build_app(write_quiz(tmp_path, truth_file=False), tmp_path / "runs.db")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            assert badge_of(app, "q1") is Badge.GOOD
            # A new stem makes every assertion new: none of them can come from the cache or
            # from the truth table as it was, so only the kept truth decides.
            await edit_question(pilot, 0, "Which city is the capital of Australia?", "A")
            record = app.vet_screen.state.questions["q1"]
            assert record.question.key == 0 and record.question.options[0] == "Sydney"
            assert badge_of(app, "q1") is Badge.POOR
            assert record.score is not None and record.score.k == 2  # Sydney and Canberra
            assert record.score.suggested_option == 1  # the judge still names Canberra
            # Nothing else moved.
            assert badge_of(app, "q2") is Badge.GOOD
    finally:
        store.close()


async def test_fixing_a_wrong_key_against_the_truth_file_makes_it_good(tmp_path: Path) -> None:
    app, store = build_app(write_quiz(tmp_path, truth_file=True), tmp_path / "runs.db")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            assert badge_of(app, "q3") is Badge.POOR  # keyed 8, the truth file says 6
            await edit_question(pilot, 2, "How many sides does a regular hexagon have?", "B")
            assert badge_of(app, "q3") is Badge.GOOD
            # And keying it back to the wrong answer is caught again.
            await edit_question(pilot, 2, "How many sides has a hexagon?", "D")
            assert badge_of(app, "q3") is Badge.POOR
    finally:
        store.close()


def test_new_options_take_the_original_truth_by_text_and_unknown_ones_are_false(
    tmp_path: Path,
) -> None:
    quiz = load_quiz(write_quiz(tmp_path, truth_file=True))
    provider = simulated_provider(load_config(), quiz)
    hexagon = quiz.questions[2]
    stem = "A hexagon has how many sides?"
    edited = hexagon.model_copy(update={"text": stem, "options": ("6", "8", "twelve"), "key": 1})
    teach_simulated_judge(provider, Quiz(title="one", questions=(edited,)), quiz)
    truth = {o: provider.truth[assertion_text(stem, o)] for o in edited.options}
    assert truth == {"6": True, "8": False, "twelve": False}
    # The start table is never rewritten: the original assertions keep their truth.
    for i, option in enumerate(hexagon.options):
        assert provider.truth[assertion_text(hexagon.text, option)] is (option == "6"), i
