"""Issue 27 item 3: readable at 80×24 and over SSH.

Pilot tests of the vet app at both sizes, and the headless progress line through a real
process on a pseudo-terminal.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import constant_clock, settled, stream_factory

from quiztui.core.quiz import Question, Quiz
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.services import AppServices

PLANTED = Path(__file__).resolve().parents[1] / "sample_quizzes" / "planted_errors.json"
SIZES = [(80, 24), (120, 40)]
IDS = ["80x24", "120x40"]
KEY = "Sydney, the largest city and the seat of the colonial government of New South Wales"
RIGHT = "Canberra, purpose-built as the capital in the Australian Capital Territory"
LONG = Quiz(
    title="Capitals",
    questions=(
        Question(
            id="q1",
            text="What is the capital of Australia?",
            options=(KEY, RIGHT, "Melbourne", "Perth"),
            key=0,
        ),
        Question(id="q2", text="What is 2 + 2?", options=("3", "4", "5"), key=1),
    ),
    truth={"q1": 1},
)


def long_app() -> QuiztuiApp:
    services = AppServices(
        start_run=stream_factory(LONG, tpr=1.0, tnr=1.0),
        judge_label="SIMULATED judge (TPR 1.0, TNR 1.0)",
        simulated=True,
    )
    return QuiztuiApp(LONG, services, clock=constant_clock(), flush_interval=0.02)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_key_and_the_suggestion_are_shown_whole_for_the_highlighted_question(
    size: tuple[int, int],
) -> None:
    app = long_app()
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        screen = app.vet_screen
        table = screen.questions_table
        key_column = table.columns[next(k for k in table.columns if k.value == "key")]
        assert key_column.width < len(KEY)  # the table's column cuts it at either size ...
        table.focus()
        await pilot.press("g")
        await pilot.pause()
        preview = screen.query_one("#preview", Static)
        await pilot.pause()
        shown = " ".join(line.text for line in preview.render_lines(preview.region.reset_offset))
        shown = " ".join(shown.split())
        # ... the preview line under the table has them whole.
        assert f"key A: {KEY}" in shown
        assert f"judge suggests B: {RIGHT}" in shown
        assert preview.region.height >= 1 and preview.region.y > table.region.y
        await pilot.press("j")
        await pilot.pause()
        shown = str(preview.render())
        assert "Q2 key B: 4" in shown and "agrees with the key" in shown
        # The question column takes the width the fixed columns leave.
        question = table.columns[next(k for k in table.columns if k.value == "question")]
        assert question.width > key_column.width * 3


@pytest.mark.parametrize("columns", [80, 120])
def test_headless_progress_redraws_one_line_at_any_width(columns: int, tmp_path: Path) -> None:
    """``vet --no-tui`` with stderr on a terminal of ``columns``: every redraw fits one row, so
    ``\\r`` redraws it in place (before, at 80 columns each update wrapped into a new line)."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["QUIZTUI_SIMULATED_LATENCY"] = "0.05"  # a few updates, each redrawn
    args = ["vet", str(PLANTED), "--no-tui", "--format", "json", "--fail-on", "never"]
    with subprocess.Popen(
        [sys.executable, "-m", "quiztui", *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
        cwd=tmp_path,
    ) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the follower closed: the process ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.communicate(timeout=120)
    os.close(leader)
    assert proc.returncode == 0
    err = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    redraws = [s for line in err.split("\n") for s in line.split("\r") if "assertions (" in s]
    assert len(redraws) >= 2, err
    for shown in redraws:
        visible = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", shown)
        assert len(visible) < columns, visible
        assert "…" not in visible  # whole items, no value cut
    # One row for the whole run: the redraws share it, the final one ends it.
    progress_rows = [line for line in err.split("\n") if "assertions (" in line]
    assert len(progress_rows) == 1, progress_rows


# -- the stats line, dialogs and the detail view (3c) ------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_stats_line_leaves_out_whole_items_never_a_value(size: tuple[int, int]) -> None:
    from tui_helpers import make_quiz

    from quiztui.tui.widgets.stats import RunStats

    quiz = make_quiz(12).model_copy(update={"skipped": ("row 9: no answer",) * 3})
    services = AppServices(
        start_run=stream_factory(quiz),
        judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
        simulated=True,
        prior=lambda: "auto 0.86 [0.35, 0.90] · 12 q, shrunk toward 0.95",
    )
    app = QuiztuiApp(quiz, services, clock=constant_clock(), flush_interval=0.02)
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        await pilot.pause()
        stats = app.vet_screen.query_one(RunStats)
        line = stats.query_one("#stats-line", Static)
        shown = str(line.render())
        parts = stats._parts
        assert " · ".join(parts) != shown or size == (120, 40)  # too long for 80 columns
        assert "…" not in shown and len(shown) <= line.content_region.width
        kept = shown.split(" · ")
        assert kept == parts[: len(kept)]  # the first items, each whole
        assert kept[0] == "prior auto 0.86"


def dialogs() -> list[tuple[str, object]]:
    from quiztui.tui.help import HelpScreen
    from quiztui.tui.screens.confirm import ConfirmQuitScreen, SaveQuitScreen

    return [
        ("save-or-discard", lambda: SaveQuitScreen("2 edited question(s) not written. Save?")),
        ("confirm", lambda: ConfirmQuitScreen("A run is in progress. Quit anyway?")),
        ("help", lambda: HelpScreen([])),
    ]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
@pytest.mark.parametrize(("name", "make"), dialogs(), ids=[n for n, _ in dialogs()])
async def test_dialogs_are_centred(size: tuple[int, int], name: str, make: object) -> None:
    app = long_app()
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        app.push_screen(make())  # type: ignore[operator]
        await pilot.pause()
        await pilot.pause()
        dialog = app.screen.query("Vertical").first()
        box, screen = dialog.region, app.screen.region
        left, right = box.x, screen.width - box.right
        top, bottom = box.y, screen.height - 1 - box.bottom  # the footer's row below
        assert abs(left - right) <= 1, (name, box, screen)
        assert abs(top - bottom) <= 1, (name, box, screen)


LABELS = (
    "k",
    "badge",
    "confidence",
    "judged",
    "graded",
    "keyed",
    "verdict",
    "P(true)",
    "agrees",
    "seq",
)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_detail_view_keeps_each_label_with_its_value(size: tuple[int, int]) -> None:
    from textual.app import App

    from quiztui.core.kscore import Badge
    from quiztui.pipeline.events import QuestionScored
    from quiztui.tui.screens.detail import QuestionDetailScreen
    from quiztui.tui.state import AssertionRecord, QuestionRecord

    question = LONG.questions[0]
    record = QuestionRecord(1, question)
    record.score = QuestionScored(
        "q1", 2, 4, 4, Badge.QUESTIONABLE, 0.18, 1, 0.8, interval=(0.05, 0.40), graded=0.12
    )
    for i in range(4):
        record.options[i] = AssertionRecord(1200 + i, "q1", i, i == 1, "it is so", True, 0.12)

    import quiztui.tui.app

    class DetailApp(App[None]):
        CSS_PATH = str(Path(quiztui.tui.app.__file__).with_name("app.tcss"))

        def on_mount(self) -> None:
            self.push_screen(QuestionDetailScreen(record, 12))

    app = DetailApp()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.pause()
        texts = [app.screen.query_one("#detail-summary", Static)]
        texts += [app.screen.query_one(f"#detail-option-{i}", Static) for i in range(4)]
        label_end = re.compile(r"(?:^|\s)(?:" + "|".join(map(re.escape, LABELS)) + r")\s*$")
        for widget in texts:
            rows = [
                strip.text.rstrip() for strip in widget.render_lines(widget.region.reset_offset)
            ]
            for row in rows:
                assert not label_end.search(row), rows
            assert any("confidence 0.18" in row or "P(true) 0.12" in row for row in rows), rows


# -- keys are discoverable (3d) -----------------------------------------------------------------


def footer(app: object) -> list[tuple[str, str, int]]:
    """(key, description, right edge) of every key the footer shows."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    bar = app.screen.query_one(Footer)  # type: ignore[attr-defined]
    return [(k.key_display, k.description, k.region.right) for k in bar.query(FooterKey)]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_footer_shows_the_desk_keys_while_the_desk_is_in_use(
    size: tuple[int, int], tmp_path: Path
) -> None:
    from test_review_desk_snapshots import desk_app
    from tui_helpers import wait_until

    from quiztui.store import Store
    from quiztui.tui.screens.decide import DecideScreen

    with Store(tmp_path / "runs.db") as store:
        app = desk_app(store)
        async with app.run_test(size=size) as pilot:
            await settled(pilot)
            before = {d for _, d, _ in footer(app)}
            assert "Run" in before and "accept" not in before
            app.vet_screen.questions_table.focus()
            await pilot.press("y")
            await wait_until(pilot, lambda: isinstance(app.screen, DecideScreen))
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.screen is app.vet_screen)
            await pilot.pause()
            shown = footer(app)
            desk = {"accept", "fix", "rewrite", "drop", "undo", "desk", "apply"}
            assert desk <= {d for _, d, _ in shown}
            assert {"Quit", "Help"} <= {d for _, d, _ in shown}
            assert all(right <= size[0] for _, _, right in shown), shown  # all on screen
            from quiztui.tui.help import collect_sections

            described = {
                e.binding_id: e.description for s in collect_sections(app.screen) for e in s.entries
            }
            assert described["review.accept"] == "Review desk: accept the key"  # F1: in full
            await pilot.press("u")  # no decision left: the usual keys come back
            await pilot.pause()
            after = {d for _, d, _ in footer(app)}
            assert "Run" in after and "accept" not in after


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_e_is_in_the_detail_footer_and_ctrl_k_reaches_the_key_field(
    size: tuple[int, int],
) -> None:
    from textual.widgets import Input
    from tui_helpers import wait_until

    from quiztui.tui.screens.detail import QuestionDetailScreen
    from quiztui.tui.screens.edit import EditQuestionScreen

    app = long_app()
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        app.vet_screen.questions_table.focus()
        await pilot.press("g", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionDetailScreen))
        await pilot.pause()
        assert ("e", "Edit and re-judge") in {(k, d) for k, d, _ in footer(app)}
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditQuestionScreen))
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "edit-text"
        assert ("^k", "Key field") in {(k, d) for k, d, _ in footer(app)}
        await pilot.press("ctrl+k")  # one key, from the question's text
        assert app.focused is not None and app.focused.id == "edit-key"
        await pilot.press("B")  # the old key was selected: typing replaces it
        key = app.screen.query_one("#edit-key", Input)
        assert key.value == "B"
