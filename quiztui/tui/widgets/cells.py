"""Cell builders: every piece of quiz or model text becomes a ``rich.text.Text``.

Quiz content and judge replies are untrusted, so they are never parsed as markup: a question
containing ``[bold]`` or ``[/]`` shows exactly those characters. Badges carry their name as text;
colour is only an extra (and disappears under NO_COLOR).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from quiztui.core.kscore import Badge

BADGE_STYLES: dict[str, str] = {
    Badge.GOOD: "bold green",
    Badge.QUESTIONABLE: "bold yellow",
    Badge.POOR: "bold red",
    Badge.INCOMPLETE: "bold magenta",
    Badge.PENDING: "dim",
}

DASH = "–"
_BREAKS = re.compile(r"[\r\n\t\v\f\u2028\u2029]+")


def one_line(text: str) -> str:
    """Collapse line breaks so a cell stays one row high."""
    return _BREAKS.sub(" ", text)


class Cell(Text):
    """A literal, single-line, ellipsised table cell that DataTable does not measure."""

    __rich_measure__ = None  # type: ignore[assignment]


def cell(text: str, style: str = "") -> Cell:
    """A literal, single-line, ellipsised cell."""
    return Cell(one_line(text), style=style, no_wrap=True, overflow="ellipsis", end="")


def option_letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else str(index + 1)


def option_cell(index: int, option: str) -> Text:
    return cell(f"{option_letter(index)}: {option}")


def badge_cell(badge: str) -> Text:
    return cell(str(badge), BADGE_STYLES.get(badge, ""))


def verdict_cell(verdict: bool | None) -> Text:
    if verdict is None:
        return cell("unjudged", "bold magenta")
    return cell("TRUE" if verdict else "FALSE", "green" if verdict else "red")


def agrees_cell(verdict: bool | None, keyed: bool) -> Text:
    if verdict is None:
        return cell(DASH, "dim")
    return cell("yes", "green") if verdict == keyed else cell("no", "bold red")


def keyed_cell(keyed: bool) -> Text:
    return cell("true" if keyed else "false", "bold" if keyed else "")


def confidence_text(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def elapsed_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
