"""Issue 26 item 3: review the likely wrong keys first — the questions table ordered by P(key
wrong) (s), the header's expected number of wrong keys with its interval, and the detail view's
sentence on what a flag is worth. Pilot tests at 80x24 and 120x40 on the sample quiz."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import settled, wait_until

from quiztui.assemble.vet import vet_runs
from quiztui.cli.vet import build_vet_app
from quiztui.config import load_config
from quiztui.core.wrong_keys import worth_text, wrong_keys_of, wrong_keys_short
from quiztui.formats import load_quiz
from quiztui.store import Store
from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.widgets.header import RunHeader

REPO = Path(__file__).resolve().parents[1]


def test_worth_text_says_what_a_flag_is_worth() -> None:
    assert worth_text(0.11, disagree=True, judges=3) == (
        "on questions like this, judges that disagree with the key are right about 1 time in 9:"
        " check it"
    )
    assert worth_text(0.11, disagree=True).startswith("on questions like this, a judge that")
    assert worth_text(0.02, disagree=False) == (
        "on questions like this the key is wrong about 1 time in 50"
    )
    assert worth_text(0.001, disagree=False).endswith("more than 99 times in 100")
    assert worth_text(0.7, disagree=True).endswith("fix it")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_likeliest_wrong_keys_come_first_and_the_header_counts_them(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    config = load_config()
    config = config.model_copy(
        update={
            "judge": config.judge.model_copy(update={"provider": "simulated", "logprobs": "off"}),
            "simulated": config.simulated.model_copy(update={"latency": 0.0, "line_delay": 0.0}),
        }
    )
    quiz = load_quiz(REPO / "sample_quizzes" / "planted_errors.json")
    with Store(tmp_path / "runs.db") as store:
        runs = vet_runs(config, quiz, store, None)
        app = build_vet_app(config, store, quiz, runs, autostart=True)
        async with app.run_test(size=size) as pilot:
            screen = app.vet_screen
            await wait_until(pilot, lambda: screen.state.summary is not None, what="the run")
            await settled(pilot)
            summary = screen.state.summary
            assert summary is not None
            header = screen.query_one(RunHeader)
            expected = wrong_keys_short(wrong_keys_of([q.confidence for q in summary.questions]))
            assert header.wrong_keys == expected
            assert expected in header.render_line(0).text  # always on the one-line header
            table = screen.questions_table
            first = table.coordinate_to_cell_key((0, 0)).row_key.value
            assert first == "q1"  # quiz order
            screen.questions_table.focus()
            await pilot.press("s")
            await settled(pilot)
            ordered = [
                table.coordinate_to_cell_key((row, 0)).row_key.value
                for row in range(table.row_count)
            ]
            by_confidence = sorted(summary.questions, key=lambda q: q.confidence)
            assert ordered[:4] == [q.question_id for q in by_confidence[:4]]
            assert set(ordered[:4]) == {"q1", "q4", "q8", "q10"}  # the planted wrong keys
            # the detail view of the top question says what its figure is worth
            await pilot.press("g", "enter")
            await wait_until(
                pilot, lambda: isinstance(app.screen, QuestionDetailScreen), what="the detail"
            )
            shown = str(app.screen.query_one("#detail-summary", Static).content)
            top = by_confidence[0]
            sentence = worth_text(1 - top.confidence, disagree=True)
            assert sentence.split(":")[0] in " ".join(shown.split())
            await pilot.press("escape", "s")
            await settled(pilot)
            assert table.coordinate_to_cell_key((0, 0)).row_key.value == "q1"
