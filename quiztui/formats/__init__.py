"""Quiz files in: a registry of formats, detection by extension and content, and truth files.

``load_quiz(path)`` returns a validated ``Quiz`` or raises ``QuizFormatError`` listing every
problem with its file, line/item and field; no other exception escapes for a bad file. A truth
file ``<quiz stem>.truth.json`` beside the quiz is applied automatically.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from quiztui.core.quiz import Quiz
from quiztui.core.records import record
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats._depth import MAX_JSON_DEPTH, too_deep
from quiztui.formats._source import read_text
from quiztui.formats.truth import load_truth, truth_path_for

__all__ = ["load_quiz", "load_truth", "FORMATS", "BANK_FORMATS", "detect_format"]

# Authoring formats read into a question bank (every item kept, judged or not).
BANK_FORMATS = ("gift", "aiken", "moodle_xml")


def format_module(name: str):  # type: ignore[no-untyped-def]
    """The module reading and writing format ``name`` (imported on first use)."""
    return importlib.import_module(f"quiztui.formats.{name}")


def _parser(name: str) -> Callable[..., Quiz]:
    """Format ``name``'s reader, its module imported when a file of it is read (a run reads one
    format: the others' modules and what they import stay out of its start-up)."""

    def parse(text: str, shown: str, title: str, **kwargs: object) -> Quiz:
        return format_module(name).parse(text, shown, title, **kwargs)  # type: ignore[no-any-return]

    return parse


def _bank_parser(name: str) -> Callable[..., Quiz]:
    def parse(text: str, shown: str, title: str, *, strict: bool = True) -> Quiz:
        from quiztui.core.bank import bank_quiz

        return bank_quiz(format_module(name).parse_bank(text, shown, title, strict=strict))

    return parse


@record(frozen=True)
class QuizFormat:
    name: str
    extensions: tuple[str, ...]
    description: str
    # (text, path as shown, default title, *, strict) -> Quiz; strict=False keeps the good items
    parse: Callable[..., Quiz]


FORMATS: dict[str, QuizFormat] = {
    fmt.name: fmt
    for fmt in (
        QuizFormat(
            "quizaic",
            (".json", ".jsonl", ".txt"),
            "Quizaic JSON: question/responses/correct, an array or one object per line",
            _parser("quizaic"),
        ),
        QuizFormat(
            "opentdb",
            (".json",),
            'Open Trivia DB API JSON: {"results": [...]} with HTML entities',
            _parser("opentdb"),
        ),
        QuizFormat(
            "csv",
            (".csv",),
            "CSV: question,correct,distractor1,... or one column per option"
            " (question,A,B,C,D,answer; a choices list), with or without a header",
            _parser("csv"),
        ),
        QuizFormat(
            "gift",
            (".gift",),
            "Moodle GIFT: ::title:: stem {=right ~wrong}, categories, feedback, every type",
            _bank_parser("gift"),
        ),
        QuizFormat(
            "aiken",
            (".aiken",),
            "Aiken: a stem line, options A) ..., then ANSWER: X",
            _bank_parser("aiken"),
        ),
        QuizFormat(
            "moodle_xml",
            (".xml",),
            "Moodle XML: <quiz> of <question type=...>, categories and tags",
            _bank_parser("moodle_xml"),
        ),
    )
}


def load_quiz(
    path: str | Path,
    fmt: str | None = None,
    *,
    with_truth: bool = True,
    strict: bool = True,
    columns: Mapping[str, Sequence[str]] | None = None,
) -> Quiz:
    """Read, detect, validate. ``fmt`` forces a format by name (see ``FORMATS``).

    ``strict=False`` loads the items that read well and lists the others in ``Quiz.skipped``
    (``Quiz.load_report``); a file where nothing reads well still raises. ``columns`` (role ->
    names, ``--columns``) says which CSV column or JSON Lines field holds what."""
    shown = str(path)
    path = Path(path)
    if fmt is not None and fmt not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise _error(shown, f"unknown quiz format {fmt!r} (known: {known})")
    notes: list[str] = []
    text = read_text(path, shown, notes)  # a missing file is "not found", whatever its name
    title = quiz_title(path)
    fmt = fmt or detect_format(path, text, shown)
    if fmt in ("json", "quizaic", "opentdb") and (line := too_deep(text)) is not None:
        # Before json recurses into it: a RecursionError is a traceback, not a message.
        raise QuizFormatError(
            shown,
            [QuizProblem(shown, f"nested deeper than {MAX_JSON_DEPTH} levels", line=line)],
        )
    given = {"columns": columns} if columns and fmt in ("json", "csv", "quizaic") else {}
    if fmt == "json":
        quiz = _parse_json(text, shown, title, strict, columns)
    else:
        quiz = FORMATS[fmt].parse(text, shown, title, strict=strict, **given)
    truth_file = truth_path_for(path)
    if with_truth and truth_file.exists():
        quiz = load_truth(quiz, truth_file)
    if notes:
        quiz = quiz.model_copy(update={"notes": (*notes, *quiz.notes)})
    return quiz


def quiz_title(path: Path) -> str:
    """``quiz.json`` -> ``quiz``; ``bank.gift.txt`` -> ``bank``."""
    name = path.name
    for suffix in (".gift.txt", ".aiken.txt"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


# How to name a quiz file's format where its extension says none: the subcommands that read a
# quiz have no format flag, so the way is a known extension or `quiztui convert --from`.
FORMAT_HINT = (
    "rename the file with one of these extensions, or convert it: quiztui convert FILE"
    " --from FORMAT NEW_FILE"
)


def unknown_format(shown: str, suffix: str, hint: str = FORMAT_HINT) -> QuizFormatError:
    """The one-line error of a file whose extension names no quiz format."""
    what = f"extension {suffix!r}" if suffix else "no extension"
    known = "; ".join(f"{f.name} {' '.join(f.extensions)}" for f in FORMATS.values())
    return _error(shown, f"unknown quiz format: {what} (known: {known}); {hint}")


def detect_format(path: Path, text: str, shown: str | None = None) -> str:
    """The format of a file by its extension, then its content where the extension is shared:
    ``.json`` is "json" (Open Trivia DB or Quizaic, told apart when parsed); ``.txt`` may be
    Quizaic JSON Lines, Aiken or GIFT (``name.gift.txt`` and ``name.aiken.txt`` say which).
    An extension no format has is a ``QuizFormatError`` (``unknown_format``)."""
    name = path.name.lower()
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix != ".txt":
        found = next((f.name for f in FORMATS.values() if suffix in f.extensions), None)
        if found is None:
            raise unknown_format(shown or str(path), suffix)
        return found
    if name.endswith(".gift.txt"):
        return "gift"
    if name.endswith(".aiken.txt"):
        return "aiken"
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return "quizaic"
    if format_module("aiken").sniff(text):
        return "aiken"
    if "{" in text:
        return "gift"
    return "quizaic"


def _parse_json(
    text: str,
    shown: str,
    title: str,
    strict: bool = True,
    columns: Mapping[str, Sequence[str]] | None = None,
) -> Quiz:
    """``.json``: an object with "results" is Open Trivia DB; anything else is Quizaic."""
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSON Lines, or broken: the Quizaic reader reports which line
        if isinstance(data, dict) and ("results" in data or "response_code" in data):
            return format_module("opentdb").parse_data(  # type: ignore[no-any-return]
                data, shown, title, strict=strict
            )
    return format_module("quizaic").parse(  # type: ignore[no-any-return]
        text, shown, title, strict=strict, columns=columns
    )


def _error(shown: str, message: str) -> QuizFormatError:
    return QuizFormatError(shown, [QuizProblem(shown, message)])
