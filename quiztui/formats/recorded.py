"""Answers models have already given, read as judges' per-question answers (issue 26 item 1).

Two shapes:

* a wide CSV/TSV: a question column, its options (a ``choices`` cell holding a list, or one
  column per option ``A``, ``B``, …; optional), an optional id column, and one column per model
  holding that model's answer as a letter (``A``–``D``, spaces around it ignored), a 0-based
  index or the option's text — the dev data's ``answers/<subject>.csv``;
* an lm-evaluation-harness ``samples_<task>_<date>.jsonl`` of a multiple-choice task: one line per
  document with ``doc``, ``doc_id``, ``arguments`` (``{"gen_args_i": {"arg_0": context, "arg_1":
  " choice"}}``), ``resps`` and ``filtered_resps`` (per choice ``[log-likelihood, is_greedy]``,
  written as strings by the harness's ``sanitize_list``); the model's choice is the argmax of the
  per-choice log-likelihoods, as the harness's ``process_results`` takes it (with
  ``acc_mutual_info`` the second half are unconditional and left out). The judge is named after
  the folder the harness writes the file into (the sanitised model name), else the file's stem.

A row joins the quiz by id (an ``id``/``question_id`` column, or the harness's ``doc_id``, equal
to a question's id), else by its whitespace-normalised question text and option set; the
answer's letter or index is read against the *file's* option order, mapped to the option's text
and then to the quiz's option index, so a file that lists the options in another order still
answers the right option. Every row or quiz question that does not join, and every column that
holds no answers, is one line of ``RecordedAnswers.notes`` (counts and the first few when many).
An answer that names no option ("To", "E" of four options, blank) is kept with its reason: the
run marks that question unjudged with it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quiztui.core.quiz import Question, Quiz
from quiztui.core.recorded import (
    RecordedAnswer,
    RecordedAnswers,
    RecordedJudge,
    norm,
    read_choice,
)
from quiztui.errors import QuiztuiError
from quiztui.formats import _dataset
from quiztui.formats._source import read_text, show

ID_NAMES = ("id", "question_id", "qid", "item_id", "doc_id")
# Columns of an answers file that are not a model's answers.
NOT_MODELS = frozenset(
    _dataset.canonical(n)
    for n in (
        *_dataset.QUESTION_NAMES,
        *_dataset.LIST_NAMES,
        *_dataset.ANSWER_NAMES,
        *_dataset.CATEGORY_NAMES,
        *ID_NAMES,
        "error_type",
        "source",
        "potential_reason",
        "explanation",
        "notes",
        "difficulty",
    )
)
# lm-evaluation-harness docs: where the question's text is, beyond quiztui's question names
HARNESS_TEXT = (*_dataset.QUESTION_NAMES, "question_stem", "ctx", "sentence", "goal")
SHOWN = 3  # rows or questions named in a note before "…"
MIN_READABLE = 0.5  # a column is a model's answers when at least this share of its cells are


class _Joiner:
    """Rows → quiz questions: by id, else by normalised text and option set."""

    def __init__(self, quiz: Quiz) -> None:
        self.by_id = {q.id: q for q in quiz.questions}
        self.by_content: dict[tuple[str, frozenset[str]], list[Question]] = {}
        self.by_text: dict[str, list[Question]] = {}
        for q in quiz.questions:
            key = (norm(q.text), frozenset(norm(o) for o in q.options))
            self.by_content.setdefault(key, []).append(q)
            self.by_text.setdefault(norm(q.text), []).append(q)

    def join(self, ident: str | None, text: str, options: Sequence[str] | None) -> list[Question]:
        if ident is not None and ident.strip() in self.by_id:
            return [self.by_id[ident.strip()]]
        if options is None:
            return list(self.by_text.get(norm(text), ()))
        return list(self.by_content.get((norm(text), frozenset(norm(o) for o in options)), ()))


def to_quiz_option(
    question: Question, options: Sequence[str] | None, index: int | None, reason: str
) -> tuple[int | None, str]:
    """A file's option index → the quiz's (through the option's text when the file listed its
    options)."""
    if index is None or options is None:
        return index, reason
    wanted = norm(options[index])
    for i, option in enumerate(question.options):
        if norm(option) == wanted:
            return i, ""
    return None, f"option {show(options[index], 40)} is not among the quiz's options"


@dataclass
class _Collect:
    """The answers of every model, as rows join."""

    quiz: Quiz
    models: Sequence[str]
    answers: dict[str, dict[str, RecordedAnswer]] = field(default_factory=dict)
    sources: dict[str, list[str]] = field(default_factory=dict)
    unjoined: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repeated: dict[str, int] = field(default_factory=dict)
    # a wide file's model columns: [cells read as an option, cells], and the answers they gave,
    # kept until every file is read (a column that names no option anywhere is not a model)
    readable: dict[str, list[int]] = field(default_factory=dict)
    pending: list[tuple[str, str, Question, RecordedAnswer]] = field(default_factory=list)
    rows: int = 0
    joined: int = 0

    def __post_init__(self) -> None:
        self.joiner = _Joiner(self.quiz)

    def wants(self, model: str) -> bool:
        return not self.models or model in self.models

    def add(self, model: str, source: str, question: Question, answer: RecordedAnswer) -> None:
        mine = self.answers.setdefault(model, {})
        files = self.sources.setdefault(model, [])
        if source not in files:
            files.append(source)
        if question.id in mine:
            self.repeated[model] = self.repeated.get(model, 0) + 1
            return
        mine[question.id] = answer

    def _take_pending(self) -> None:
        """The wide files' columns that hold answers (at least ``MIN_READABLE`` of their cells
        name an option, over every file; any column the user named), in file order."""
        left_out = set()
        for model, (ok, cells) in self.readable.items():
            if cells and ok < MIN_READABLE * cells and not self.models:
                left_out.add(model)
                self.notes.append(
                    f"column '{model}' left out: {ok} of {cells} cells name an option"
                )
        for model, source, q, answer in self.pending:
            if model not in left_out:
                self.add(model, source, q, answer)

    def result(self, shown_source: str) -> RecordedAnswers:
        self._take_pending()
        missing = [m for m in self.models if m not in self.answers]
        if missing:
            raise QuiztuiError(
                f"--answers-model {', '.join(missing)}: not in {shown_source}"
                + (f" (models: {', '.join(self.answers)})" if self.answers else "")
            )
        if not self.answers:
            raise QuiztuiError(f"{shown_source}: no model's answers found")
        notes = list(self.notes)
        if self.unjoined:
            notes.append(
                f"{len(self.unjoined)} of {self.rows} answer rows join no quiz question: "
                + ", ".join(self.unjoined[:SHOWN])
                + (", …" if len(self.unjoined) > SHOWN else "")
            )
        answered = set().union(*(set(a) for a in self.answers.values()))
        lost = [q for q in self.quiz.questions if q.id not in answered]
        if lost:
            notes.append(
                f"{len(lost)} of {len(self.quiz.questions)} quiz questions have no recorded"
                " answer (unjudged): "
                + ", ".join(f"{q.id} {show(norm(q.text), 40)}" for q in lost[:SHOWN])
                + (", …" if len(lost) > SHOWN else "")
            )
        for model, count in self.repeated.items():
            notes.append(f"{model}: {count} rows answer a question already answered (first kept)")
        judges = []
        for model, answers in self.answers.items():
            files = self.sources[model]
            source = files[0] if len(files) == 1 else _several(files)
            judges.append(RecordedJudge(model, source, answers))
        return RecordedAnswers(tuple(judges), tuple(notes), self.rows, self.joined)


def _several(files: Sequence[str]) -> str:
    parents = {str(Path(f).parent) for f in files}
    where = f" in {parents.pop()}" if len(parents) == 1 else ""
    return f"{len(files)} files{where}"


def answer_files(paths: Sequence[Path]) -> list[Path]:
    """The files ``--answers`` names: each file, and the CSV/TSV/JSONL files of each folder."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.suffix.lower() in (".csv", ".tsv", ".jsonl")
            )
            if not found:
                raise QuiztuiError(f"{path}: no .csv, .tsv or .jsonl answers file in the folder")
            out += found
        else:
            out.append(path)
    return out


def load_answers(
    paths: Sequence[Path], quiz: Quiz, *, models: Sequence[str] = ()
) -> RecordedAnswers:
    """Every model's recorded answers to ``quiz`` from ``paths`` (files or folders); only the
    ``models`` named, when given."""
    files = answer_files(paths)
    collect = _Collect(quiz, models)
    for path in files:
        if path.suffix.lower() in (".jsonl", ".json"):
            _read_harness(path, collect)
        else:
            _read_wide(path, collect)
    shown = str(files[0]) if len(files) == 1 else _several([str(f) for f in files])
    return collect.result(shown)


# -- the wide CSV/TSV ---------------------------------------------------------------------------


def _read_wide(path: Path, collect: _Collect) -> None:
    from quiztui.formats.csv import delimiter

    shown = str(path)
    notes: list[str] = []
    text = read_text(path, shown, notes)
    collect.notes += notes
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter(text))
    header = next(reader, None)
    if not header:
        raise QuiztuiError(f"{shown}: empty answers file")
    names = [h.strip() for h in header]
    question_col = _dataset.find(names, _dataset.QUESTION_NAMES)
    if question_col is None:
        raise QuiztuiError(
            f"{shown}: line 1: no question column (one of {', '.join(_dataset.QUESTION_NAMES)})"
        )
    list_col = _dataset.find(names, _dataset.LIST_NAMES)
    option_cols = _option_columns(names) if list_col is None else []
    id_col = _dataset.find(names, ID_NAMES)
    used = {question_col, list_col, id_col, *option_cols}
    model_cols = [
        (i, n)
        for i, n in enumerate(names)
        if n and n not in used and _dataset.canonical(n) not in NOT_MODELS and collect.wants(n)
    ]
    at = {n: i for i, n in reversed(list(enumerate(names)))}
    readable = {n: [0, 0] for _, n in model_cols}  # model -> [cells read as an option, cells]
    pending: list[tuple[str, str, Question, RecordedAnswer]] = []
    last = 1
    for row in reader:
        line, last = last + 1, reader.line_num
        if not any(c.strip() for c in row):
            continue
        collect.rows += 1
        cells = row + [""] * (len(names) - len(row))
        question = cells[at[question_col]]
        options: list[str] | None = None
        if list_col is not None:
            options = _dataset.cell_list(cells[at[list_col]])
            if options is None:
                raise QuiztuiError(
                    f"{shown}: line {line}: field '{list_col}': not a list of options"
                    f" ({show(cells[at[list_col]], 40)})"
                )
        elif option_cols:
            options = [cells[at[c]] for c in option_cols if cells[at[c]].strip()]
        ident = cells[at[id_col]] if id_col is not None else None
        joined = collect.joiner.join(ident, question, options)
        if not joined:
            collect.unjoined.append(f"{path.name}:{line} {show(norm(question), 40)}")
            continue
        collect.joined += 1
        for i, model in model_cols:
            cell = cells[i] if i < len(cells) else ""
            for q in joined:
                index, why = read_choice(cell, options if options is not None else q.options)
                if cell.strip():
                    readable[model][1] += 1
                    readable[model][0] += index is not None
                option, why = to_quiz_option(q, options, index, why)
                pending.append(
                    (model, shown, q, RecordedAnswer(option, cell, f"{shown}:{line}", why))
                )
    for model, (ok, seen) in readable.items():
        tally = collect.readable.setdefault(model, [0, 0])
        tally[0] += ok
        tally[1] += seen
    collect.pending += pending


def _option_columns(names: Sequence[str]) -> list[str]:
    """One column per option (``A``, ``B``, … or ``option1``, …), in option order; only a run
    from the first position, so a model column named ``b`` is not taken for one."""
    positions: dict[int, str] = {}
    for n in names:
        if (p := _dataset.option_position(n)) is not None and p not in positions:
            positions[p] = n
    out: list[str] = []
    while len(out) in positions:
        out.append(positions[len(out)])
    return out if len(out) >= 2 else []


# -- lm-evaluation-harness samples ----------------------------------------------------------------


def harness_model(path: Path) -> str:
    """The harness writes ``OUTPUT/<sanitised model name>/samples_<task>_<date>.jsonl``."""
    if path.name.startswith("samples_") and path.parent.name not in ("", "."):
        return path.parent.name
    return path.stem


def _read_harness(path: Path, collect: _Collect) -> None:
    shown = str(path)
    model = harness_model(path)
    text = read_text(path, shown)
    if not collect.wants(model):
        return
    seen: set[str] = set()
    for line, obj in _json_lines(text, shown):
        where = f"{shown}:{line}"
        doc = obj.get("doc")
        if not isinstance(doc, dict):
            raise QuiztuiError(f"{where}: field 'doc': not an object (an lm-eval samples line?)")
        if not isinstance(obj.get("filtered_resps"), list) and not isinstance(
            obj.get("resps"), list
        ):
            raise QuiztuiError(f"{where}: no field 'filtered_resps' or 'resps' (lm-eval samples)")
        doc_id = obj.get("doc_id")
        key = json.dumps(doc_id) if doc_id is not None else f"line {line}"
        if key in seen:  # the same document under another filter: its first answer is kept
            continue
        seen.add(key)
        collect.rows += 1
        question = doc.get(_dataset.find(list(doc), HARNESS_TEXT) or "")
        options = _harness_options(doc, obj)
        ident = None if doc_id is None else str(doc_id)
        joined = collect.joiner.join(ident, question if isinstance(question, str) else "", options)
        if not joined:
            shown_text = show(norm(question), 40) if isinstance(question, str) else "(no text)"
            collect.unjoined.append(f"{path.name}:{line} {shown_text}")
            continue
        collect.joined += 1
        index, given, why = _harness_choice(obj, options, where)
        for q in joined:
            option, reason = to_quiz_option(q, options, index, why)
            if options is None and option is not None and option >= q.n:
                option, reason = None, f"choice {option} of {q.n} options"
            collect.add(model, shown, q, RecordedAnswer(option, given, where, reason))


def _json_lines(text: str, shown: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise QuiztuiError(f"{shown}: line {line}: not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise QuiztuiError(f"{shown}: line {line}: not a JSON object")
        yield line, obj


def _harness_options(doc: dict[str, Any], obj: dict[str, Any]) -> list[str] | None:
    """The document's options: its choices list (or ARC's ``{"text", "label"}``), else the
    continuations of the requests (``arguments.gen_args_i.arg_1``, the target delimiter
    stripped)."""
    list_key = _dataset.find(list(doc), _dataset.LIST_NAMES)
    if list_key is not None:
        found, _ = _dataset._options(doc[list_key])
        if found is not None:
            return [str(o) for o in found]
    args = obj.get("arguments")
    if isinstance(args, dict):
        out = []
        for i in range(len(args)):
            item = args.get(f"gen_args_{i}")
            if not isinstance(item, dict) or not isinstance(item.get("arg_1"), str):
                return None
            out.append(item["arg_1"].strip())
        return out or None
    return None


def _number(value: Any) -> float | None:
    """A log-likelihood as the harness writes it: a string (sanitize_list) or a number."""
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    if isinstance(value, bool) or value is None:
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _harness_choice(
    obj: dict[str, Any], options: Sequence[str] | None, where: str
) -> tuple[int | None, str, str]:
    """(choice, what was given, why none): the argmax of the per-choice log-likelihoods."""
    resps = obj.get("filtered_resps")
    if not isinstance(resps, list):
        raw = obj.get("resps")
        if not isinstance(raw, list):
            raise QuiztuiError(f"{where}: no field 'filtered_resps' or 'resps' (lm-eval samples)")
        resps = [r[0] if isinstance(r, list) and r else r for r in raw]
    lls = [_number(r) for r in resps]
    n = len(options) if options is not None else len(lls)
    if options is not None and len(lls) == 2 * n:  # acc_mutual_info: then unconditional ones
        lls = lls[:n]
    given = "log-likelihoods " + ", ".join("?" if x is None else f"{x:.3g}" for x in lls)
    if not lls or len(lls) != n:
        return None, given, f"{len(lls)} log-likelihoods for {n} options"
    if any(x is None for x in lls):
        return None, given, "a log-likelihood is missing or not a number"
    values = [x for x in lls if x is not None]
    best = max(range(len(values)), key=lambda i: (values[i], -i))  # the first maximum
    return best, given, ""


__all__ = [
    "RecordedAnswer",
    "RecordedAnswers",
    "RecordedJudge",
    "answer_files",
    "harness_model",
    "load_answers",
    "norm",
    "read_choice",
]
