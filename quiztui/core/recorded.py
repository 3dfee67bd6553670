"""Recorded model answers as judges (issue 26 item 1): the data a file of answers becomes.

``formats/recorded.py`` reads the files and joins them to a quiz; ``providers/recorded.py``
answers from a :class:`RecordedJudge`. Pure: no I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quiztui.errors import QuiztuiError

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _show(value: str, limit: int) -> str:
    """A value quoted for a one-line message, shortened."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return repr(value)


@dataclass(frozen=True, slots=True)
class RecordedAnswer:
    """One model's answer to one quiz question."""

    option: int | None  # the quiz's option index; None: the answer names no option
    given: str  # the answer as the file gave it ("C", " 2", "-0.31 … (argmax)")
    where: str  # file:line
    reason: str = ""  # why it names no option (empty when it does)


@dataclass(frozen=True, slots=True)
class RecordedJudge:
    model: str
    source: str  # the file, or "N files in FOLDER", as the judge's label names it
    answers: Mapping[str, RecordedAnswer]  # quiz question id -> answer

    @property
    def label(self) -> str:
        return f"recorded answers of {self.model} from {self.source}"


@dataclass(frozen=True, slots=True)
class RecordedAnswers:
    judges: tuple[RecordedJudge, ...]
    notes: tuple[str, ...] = ()  # what did not join, one line each (summarised)
    rows: int = 0  # rows (or harness documents) read
    joined: int = 0  # of them, rows that joined a quiz question

    def judge(self, model: str | None) -> RecordedJudge:
        """The judge named ``model``; with None, the only one (else an error naming them)."""
        names = [j.model for j in self.judges]
        if model is None:
            if len(self.judges) == 1:
                return self.judges[0]
            raise QuiztuiError(
                f"--answers holds {len(names)} models: name one with --answers-model"
                f" ({', '.join(names)})"
            )
        for j in self.judges:
            if j.model == model:
                return j
        raise QuiztuiError(f"--answers-model {model}: no such model ({', '.join(names) or 'none'})")


def norm(text: str) -> str:
    """Whitespace-normalised text: how rows and questions are compared."""
    return " ".join(str(text).split())


def read_choice(cell: str, options: Sequence[str]) -> tuple[int | None, str]:
    """(option index, "") for an answer cell read against ``options`` (a letter, a 0-based index
    or an option's text), else (None, why). An answer two readings take to different options
    ("1" when the options are 1, 2, 3, 4) names none."""
    text = cell.strip()
    if not text:
        return None, "blank answer"
    n = len(options)
    readings: dict[int, str] = {}
    if len(text) == 1 and text.upper() in LETTERS:
        index = LETTERS.index(text.upper())
        if index < n:
            readings.setdefault(index, "letter")
    if text.isdecimal() and int(text) < n:
        readings.setdefault(int(text), "0-based index")
    wanted = norm(text).casefold()
    for i, option in enumerate(options):
        if norm(option).casefold() == wanted:
            readings.setdefault(i, "option text")
    if len(readings) == 1:
        return next(iter(readings)), ""
    if len(readings) > 1:
        how = ", ".join(f"{LETTERS[i]} as {kind}" for i, kind in readings.items())
        return None, f"answer {_show(text, 30)} is ambiguous ({how})"
    if len(text) == 1 and text.upper() in LETTERS:
        return None, f"answer {_show(text, 30)} is not one of the {n} options"
    return None, f"answer {_show(text, 30)} names no option (not a letter, index or option text)"


__all__ = ["LETTERS", "RecordedAnswer", "RecordedAnswers", "RecordedJudge", "norm", "read_choice"]
