"""The windowed verdicts table (widgets/verdict_window.py) and the live question detail.

The table keeps the run's records in a list and renders only the rows on screen; these tests drive
it through the real vet screen with Pilot: keys, the cursor, selection → detail, and how many rows
a repaint renders. bench/tui_stream.py measures the timings (10,000 and 100,000 verdicts).
"""

from __future__ import annotations

import gc

import pytest
from test_tui import finished, make_app, plain, screen_text
from tui_helpers import Gate, make_quiz, vet_flushed, wait_until

from quiztui.tui.screens.detail import QuestionDetailScreen
from quiztui.tui.widgets.verdict_window import VerdictsTable


def line_text(table: VerdictsTable, y: int) -> str:
    return table.render_line(y).text


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_keys_move_the_cursor_and_the_window_follows(size: tuple[int, int]) -> None:
    quiz = make_quiz(60, markup=False)  # 240 verdicts, many screens of them
    app = make_app(quiz)
    async with app.run_test(size=size) as pilot:
        screen = await finished(pilot)
        table = screen.verdicts_table
        rows = table.row_count
        assert rows == 240
        page = table.scrollable_content_region.height - 1  # the header takes a line
        # The cursor followed the stream to the last row, and the last row is on screen.
        assert table.cursor_row == rows - 1
        assert round(table.scroll_offset.y) == rows - page
        last_seq = table.cursor_row_key
        assert line_text(table, page).split()[0] == str(last_seq)
        assert line_text(table, 0).split()[:2] == ["seq", "question"]  # the header stays put

        table.focus()
        await pilot.press("home")
        assert (table.cursor_row, round(table.scroll_offset.y)) == (0, 0)
        first = next(iter(table.rows))
        assert line_text(table, 1).split()[0] == str(first)
        await pilot.press("pagedown")
        assert table.cursor_row == page
        assert round(table.scroll_offset.y) == 1  # just enough to show the cursor row
        await pilot.press("down", "j")
        assert table.cursor_row == page + 2
        await pilot.press("up", "k", "pageup")
        assert table.cursor_row == 0
        await pilot.press("end")
        assert table.cursor_row == rows - 1
        await pilot.press("k", "k")
        assert table.cursor_row == rows - 3
        await pilot.press("g")
        assert table.cursor_row == 0
        await pilot.press("G")
        assert table.cursor_row == rows - 1

        # enter opens the question of the row under the cursor
        await pilot.press("k")
        seq = table.cursor_row_key
        assert seq is not None
        qid = table.rows[seq].question_id
        await pilot.press("enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, QuestionDetailScreen)
        assert detail.record.question.id == qid
        assert f"seq {seq}" in screen_text(detail)


async def test_a_repaint_renders_only_the_rows_on_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    original = VerdictsTable.row_cells

    def counting(record, question):  # type: ignore[no-untyped-def]
        built.append(record.seq)
        return original(record, question)

    quiz = make_quiz(300, markup=False)  # 1,200 verdicts
    app = make_app(quiz, batch_size=20)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await finished(pilot)
        table = screen.verdicts_table
        assert table.row_count == 1200
        table.focus()  # focus changes the cursor's colour: every visible line is drawn again
        await pilot.pause()
        monkeypatch.setattr(VerdictsTable, "row_cells", staticmethod(counting))
        await pilot.press("home")  # rows never drawn before: each is built now, once
        await pilot.pause()
        visible = table.scrollable_content_region.height - 1
        assert 0 < len(built) <= visible
        assert set(built) == set(list(table.rows)[: len(built)])
        built.clear()
        await pilot.press("j", "k")  # the cursor moves: the other lines come from the cache
        await pilot.pause()
        assert len(built) <= 2


async def test_the_detail_follows_its_question_while_verdicts_arrive() -> None:
    gate = Gate(pause_after=6)
    quiz = make_quiz(12, markup=False)
    app = make_app(quiz, gate=gate)
    async with app.run_test(size=(120, 40)) as pilot:
        await gate.reached.wait()
        await wait_until(pilot, lambda: vet_flushed(app), what="the first verdicts shown")
        screen = app.vet_screen
        # a question still waiting for some of its verdicts
        record = next(r for r in screen.state.questions.values() if r.score is None)
        seen = len(record.options)
        screen.open_detail(record)
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, QuestionDetailScreen)
        before = screen_text(detail)
        assert "pending" in before
        assert f"{seen}/4 options judged so far" in before
        assert before.count("not judged yet") == 4 - seen

        gate.release.set()
        await finished(pilot)
        await wait_until(
            pilot, lambda: "pending" not in screen_text(detail), what="the detail updated"
        )
        assert app.screen is detail  # updated in place, still open
        after = screen_text(detail)
        score = screen.state.questions[record.question.id].score
        assert score is not None
        assert f"k {score.k}/{score.n}" in after
        assert f"badge {score.badge}" in after
        assert "not judged yet" not in after
        for index in range(4):
            verdict = screen.state.questions[record.question.id].options[index].verdict
            text = plain(detail.query_one(f"#detail-option-{index}").render())
            assert ("TRUE" if verdict else "FALSE") in text


async def test_the_cyclic_collector_rests_only_while_a_run_streams() -> None:
    assert gc.isenabled()
    gate = Gate(pause_after=6)
    app = make_app(make_quiz(12, markup=False), gate=gate)
    async with app.run_test(size=(120, 40)) as pilot:
        await gate.reached.wait()
        assert not gc.isenabled()  # its full passes over the run's records stalled the screen
        await pilot.press("x")  # cancelled: back on
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert app.vet_screen.state.status == "cancelled"
        assert gc.isenabled()
        gate.release.set()
        await pilot.press("r")
        await pilot.pause()
        await finished(pilot)
        assert app.vet_screen.state.status == "finished"
        assert gc.isenabled()
    gate = Gate(pause_after=6)
    app = make_app(make_quiz(12, markup=False), gate=gate)
    async with app.run_test(size=(120, 40)):
        await gate.reached.wait()
        assert not gc.isenabled()
    assert gc.isenabled()  # the app closed mid-run: the screen's unmount turned it back on
