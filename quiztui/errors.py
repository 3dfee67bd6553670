"""Domain errors. Every error a user can cause is a QuiztuiError with a readable message.

The CLI prints ``str(error)`` on one line and exits 2; the TUI shows it. A traceback is a bug.
"""

from __future__ import annotations


class QuiztuiError(Exception):
    """Base class of all user-facing errors."""

    exit_code = 2


class QuizFormatError(QuiztuiError):
    """A quiz file could not be read. Carries every problem found, each with its location."""

    def __init__(self, path: str, problems: list[QuizProblem]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(self._message())

    def _message(self) -> str:
        first = self.problems[0]
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        return f"{first}{suffix}"

    def all_lines(self) -> list[str]:
        return [str(p) for p in self.problems]


class QuizProblem:
    """One problem in a quiz file: file, location (item/line/column) and field."""

    def __init__(
        self,
        path: str,
        message: str,
        *,
        line: int | None = None,
        item: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.message = message
        self.line = line
        self.item = item
        self.column = column
        self.field = field

    def __str__(self) -> str:
        where = [self.path]
        if self.line is not None:
            where.append(f"line {self.line}")
            if self.column is not None:
                where[-1] += f" col {self.column}"
        if self.item is not None:
            where.append(f"item {self.item}")
        loc = ":".join(where[:1]) + ("" if len(where) == 1 else ": " + ", ".join(where[1:]))
        fld = f" field '{self.field}':" if self.field else ""
        # One line, whatever the file holds: a field or value quoted from it may hold a newline.
        text = f"{loc}:{fld} {self.message}"
        return text.replace("\r", "\\r").replace("\n", "\\n")

    def __repr__(self) -> str:
        return f"QuizProblem({str(self)!r})"


class ConfigError(QuiztuiError):
    """The configuration file or an override is invalid."""


class ProviderError(QuiztuiError):
    """A model API failed in a way retries could not fix."""


class StoreError(QuiztuiError):
    """The run store could not be opened or a run was not found."""
