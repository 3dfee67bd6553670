"""Cell builders: every piece of quiz or model text becomes a ``rich.text.Text``.

Quiz content and judge replies are untrusted, so they are never parsed as markup: a question
containing ``[bold]`` or ``[/]`` shows exactly those characters. Badges carry their name as text;
colour is only an extra (and disappears under NO_COLOR).
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from rich.text import Text

from quiztui.core.kscore import Badge

if TYPE_CHECKING:
    from quiztui.core.grading import GradeOutcome

BADGE_STYLES: dict[str, str] = {
    Badge.GOOD: "bold green",
    Badge.QUESTIONABLE: "bold yellow",
    Badge.POOR: "bold red",
    Badge.INCOMPLETE: "bold magenta",
    Badge.PENDING: "dim",
}

DASH = "–"
UNSCORED_STYLE = "bold magenta"  # a grade or review that has no score (never shown as zero)
_BREAKS = re.compile(r"[\r\n\t\v\f\u2028\u2029]+")


_PARAGRAPHS = {0x2028: "\n", 0x2029: "\n", 0x0D: "\n"}


def printable(text: str) -> str:
    """Replace control and format characters (ESC, bidi overrides, …) except newlines.

    Untrusted text must not reach the terminal as escape sequences or reorder what is shown.
    """
    if text.isprintable():
        return text
    return "".join(
        ch if ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf") else "\ufffd"
        for ch in text.replace("\r\n", "\n").replace("\t", " ").translate(_PARAGRAPHS)
    )


def one_line(text: str) -> str:
    """Collapse line breaks (and neutralise control characters) so a cell stays one row high."""
    return printable(_BREAKS.sub(" ", text))


class Cell(Text):
    """A literal, single-line, ellipsised table cell that DataTable does not measure.

    DataTable measures every new cell to size auto-width columns, asking the console for the
    terminal size each time (~10 µs a cell, most of a 500-row flush). Our columns have fixed
    widths, so the measurement is useless; without ``__rich_measure__`` Textual skips it.
    """

    __rich_measure__ = None  # type: ignore[assignment]


def cell(text: str, style: str = "") -> Cell:
    """A literal, single-line, ellipsised cell."""
    return Cell(one_line(text), style=style, no_wrap=True, overflow="ellipsis", end="")


def option_letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else str(index + 1)


def option_cell(index: int, option: str) -> Cell:
    return cell(f"{option_letter(index)}: {option}")


def badge_cell(badge: str) -> Cell:
    return cell(str(badge), BADGE_STYLES.get(badge, ""))


def verdict_cell(verdict: bool | None) -> Cell:
    if verdict is None:
        return cell("unjudged", "bold magenta")
    return cell("TRUE" if verdict else "FALSE", "green" if verdict else "red")


def agrees_cell(verdict: bool | None, keyed: bool) -> Cell:
    if verdict is None:
        return cell(DASH, "dim")
    return cell("yes", "green") if verdict == keyed else cell("no", "bold red")


def keyed_cell(keyed: bool) -> Cell:
    return cell("true" if keyed else "false", "bold" if keyed else "")


def confidence_text(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def score_text(outcome: GradeOutcome | None) -> str:
    """A grade's raw score, as the grader gave it (– when there is none)."""
    if outcome is None or outcome.raw is None:
        return DASH
    return f"{outcome.raw:.3g}"


def judge_text(text: Text, simulated: bool, label: str) -> None:
    """Append a judge's label; a simulated judge's SIMULATED stands out (added if missing)."""
    label = one_line(label)
    if simulated:
        text.append("SIMULATED", style="bold yellow")
        label = label.removeprefix("SIMULATED")
        if not label.startswith(" "):
            text.append(" ")
    text.append(label)


def elapsed_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
