"""Snapshots of the authoring views: lint column and not-judged rows, lint in the detail, editor.

A GIFT bank with planted flaws (an "all of the above" option, an unemphasised negative, a key
given away by its stem) and two items the vet pipeline does not judge (an essay, a matching
question). The run is the synthetic stream of tui_helpers; the lint is the real offline lint.
"""

from __future__ import annotations

from collections.abc import Callable

from tui_helpers import constant_clock, settled, stream_factory

from quiztui.core.bank import bank_quiz
from quiztui.core.lint import lint_quiz
from quiztui.formats.gift import parse_bank
from quiztui.tui.app import QuiztuiApp
from quiztui.tui.services import AppServices

SnapCompare = Callable[..., bool]
SIZE = (120, 40)

BANK = """\
$CATEGORY: $course$/top/Science

::Sun::Which planet is closest to the Sun? {~Venus =Mercury ~Mars ~Earth}

::Gas::Which gas do plants absorb for photosynthesis? {~Oxygen ~Nitrogen =Carbon dioxide ~All of the above}

::Not::Which of these is not a noble gas? {~Neon ~Argon =Nitrogen ~Xenon}

::Essay::Describe the water cycle in your own words. {}

::Match::Match each element to its symbol. {=Sodium -> Na =Iron -> Fe =Gold -> Au}

::Ocean::The Pacific Ocean is the largest ocean. Which is the largest ocean? {~Atlantic Ocean ~Indian Ocean =Pacific Ocean ~Arctic Ocean}

::Water::Water boils at 100 °C at sea level. {T}
"""


def make_app() -> QuiztuiApp:
    quiz = bank_quiz(parse_bank(BANK, "bank.gift", "Science bank"))
    return QuiztuiApp(
        quiz,
        AppServices(
            start_run=stream_factory(quiz),
            judge_label="SIMULATED judge (TPR 0.9, TNR 0.9)",
            simulated=True,
            lint=lint_quiz,
        ),
        clock=constant_clock(),
        flush_interval=0.02,
    )


def test_lint_column_and_items_not_judged(snap_compare: SnapCompare) -> None:
    """The Lint column beside the badges; the essay and matching items as 'not judged' rows."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settled)


def test_detail_lists_the_lint_findings(snap_compare: SnapCompare) -> None:
    """The detail of the 'not' question shows its lint finding above the verdicts."""
    assert snap_compare(
        make_app(), press=["j", "j", "enter"], terminal_size=SIZE, run_before=settled
    )


def test_editor(snap_compare: SnapCompare) -> None:
    """`e` on a question: its stem, options (and a blank one to add), and key."""
    assert snap_compare(make_app(), press=["j", "e"], terminal_size=SIZE, run_before=settled)
