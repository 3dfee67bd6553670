"""A stored vet run's report: the one code path of ``quiztui report N``, ``quiztui runs show N``
and the TUI's export (``ctrl+e``/the palette), so the three print the same report.

The summary is the stored one (a run that stored none is rebuilt from its verdicts, with a note
saying so); beside it the review desk's decisions on the run's questions and, when the quiz file
is still where it was and unchanged (same content hash), its not-judged items and its lint. A
file edited since the run is said so in the note, and its lint is not mixed into the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from quiztui.errors import QuiztuiError

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.report.extras import ReportExtras
    from quiztui.store import Store
    from quiztui.store.runs import RunRecord


@dataclass(frozen=True)
class StoredReport:
    text: str
    notes: tuple[str, ...]  # for stderr (CLI) or a toast (TUI): rebuilt, or the file edited since
    run_id: int


def stored_report(
    config: Config, store: Store, run_id: int, fmt: str, *, raw_csv: bool = False
) -> StoredReport:
    """Run ``run_id``'s report in ``fmt`` (md, json, csv, html, junit); a ``QuiztuiError`` names
    an unknown id or an unreadable stored summary."""
    from dataclasses import replace

    from quiztui.assemble.review_desk import decisions_for, run_quiz
    from quiztui.pipeline.history import load_run
    from quiztui.report.writers import render_report

    try:
        loaded = load_run(store, run_id)
    except (KeyError, TypeError, ValueError) as exc:
        raise QuiztuiError(f"run {run_id}: its stored summary is unreadable: {exc}") from None
    decisions = decisions_for(store, run_quiz(store, run_id))  # the review desk's
    extras, edited = _file_extras(config, loaded.record)
    extras = replace(extras, decisions=decisions)
    notes = tuple(n for n in (loaded.note, edited) if n)
    text = render_report(loaded.summary, fmt, extras, raw_csv=raw_csv)
    return StoredReport(text, notes, run_id)


def _file_extras(config: Config, record: RunRecord) -> tuple[ReportExtras, str]:
    """Not-judged items and lint of the run's quiz when its file is still there unchanged; else
    none, and why (the file was edited or is gone)."""
    from quiztui.assemble.common import lint_report
    from quiztui.formats import load_quiz
    from quiztui.report.extras import ReportExtras

    extras = ReportExtras(created_at=record.created_at)
    path = Path(record.quiz_path) if record.quiz_path else None
    if path is None or not path.is_file():
        return extras, ""
    try:
        quiz = load_quiz(path, strict=config.formats.strict)  # as vet loaded it
    except QuiztuiError:
        return extras, f"{path} no longer reads as a quiz: the report is the run's alone"
    if quiz.content_hash() != record.quiz_hash:
        return extras, (
            f"{path} was edited since run {record.id}: the report shows the questions and keys"
            " the run judged, without the file's lint (re-run to judge the file as it is now)"
        )
    return ReportExtras(
        unjudged=quiz.unjudged, lint=lint_report(config, quiz), created_at=record.created_at
    ), ""
