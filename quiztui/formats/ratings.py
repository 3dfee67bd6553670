"""Human ratings of quiz questions (seed 004's expert scores): CSV, JSON Lines or a JSON array.

One record per (question, rater): the question, the rater, and the five criteria 1–5
(``grammaticality``, ``appropriateness``, ``relevance``, ``novelty``, ``complexity``). Names are
case-insensitive; spaces, hyphens and underscores are the same. In JSON the criteria may also sit
in a ``scores`` (or ``ratings``) object.

- question: ``question_id``, ``qid``, ``id`` or ``question`` — the quiz's question id (``q3``),
  its 1-based number in the quiz (``3``), or its text;
- rater: ``rater``, ``rater_id``, ``annotator``, ``expert`` or ``human``;
- a criterion left blank (or null) is "not rated"; every record needs at least one.

Scores must be whole numbers 1–5 (``4`` and ``4.0`` are fine, ``4.5`` is not). Every problem names
the file, the line (CSV, JSONL) or item (JSON array) and the field; a rater rating the same question
twice, or a question the quiz does not have, is an error too.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quiztui.core.quiz import Quiz
from quiztui.core.review import CRITERIA
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats._source import json_problem, read_text, type_name

QUESTION = ("question_id", "qid", "id", "question")
RATER = ("rater", "rater_id", "annotator", "expert", "human")
NESTED = ("scores", "ratings")

# question id → rater → criterion → score (None: not rated)
RatingTable = dict[str, dict[str, dict[str, int | None]]]


@dataclass(frozen=True, slots=True)
class HumanRating:
    question: str  # as written in the file: an id, a number or the question's text
    rater: str
    scores: dict[str, int | None]
    line: int | None = None
    item: int | None = None


@dataclass(frozen=True, slots=True)
class HumanRatings:
    path: str
    rows: tuple[HumanRating, ...]

    @property
    def raters(self) -> list[str]:
        return sorted({r.rater for r in self.rows})


def _key(name: object) -> str:
    return re.sub(r"[\s\-_]+", "_", str(name).strip().casefold())


def load_ratings(path: str | Path) -> HumanRatings:
    """Read a ratings file; QuizFormatError lists every problem with its location and field."""
    shown = str(path)
    path = Path(path)
    text = read_text(path, shown)
    suffix = path.suffix.lower()
    out = _Collector(shown)
    if suffix in (".csv", ".tsv"):
        _from_csv(text, out, "\t" if suffix == ".tsv" else None)
    elif suffix in (".jsonl", ".json", ".ndjson"):
        _from_json(text, out)
    else:
        out.problem(f"unknown ratings file type {suffix!r} (expected .csv, .tsv, .jsonl or .json)")
    return out.result()


class _Collector:
    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.problems: list[QuizProblem] = []
        self.rows: list[HumanRating] = []

    def problem(self, message: str, **where: Any) -> None:
        self.problems.append(QuizProblem(self.shown, message, **where))

    def add(self, record: Mapping[str, Any], where: dict[str, int]) -> None:
        keys = {_key(k): k for k in record}
        before = len(self.problems)

        def pick(names: tuple[str, ...]) -> tuple[str | None, Any]:
            for name in names:
                if name in keys:
                    return keys[name], record[keys[name]]
            return None, None

        q_field, question = pick(QUESTION)
        r_field, rater = pick(RATER)
        for field, value, names in ((q_field, question, QUESTION), (r_field, rater, RATER)):
            if field is None:
                self.problem(f"missing (one of {', '.join(names)})", field=names[0], **where)
            elif isinstance(value, bool) or not isinstance(value, str | int):
                self.problem(f"must be text (got {type_name(value)})", field=field, **where)
            elif not str(value).strip():
                self.problem("is empty", field=field, **where)
        values: dict[str, tuple[str, Any]] = {}
        for nest in NESTED:
            inner = record.get(keys[nest]) if nest in keys else None
            if isinstance(inner, Mapping):
                values |= {_key(k): (f"{keys[nest]}.{k}", v) for k, v in inner.items()}
        for c in CRITERIA:
            if c in keys:
                values[c] = (keys[c], record[keys[c]])
        scores: dict[str, int | None] = {}
        for c in CRITERIA:
            field, value = values.get(c, (c, None))
            scores[c] = None
            if value is None or (isinstance(value, str) and not value.strip()):
                continue
            score = _score(value)
            if score is None:
                shown = value if isinstance(value, str) else json.dumps(value)
                self.problem(
                    f"must be a whole number from 1 to 5 (got {shown[:20]!r})", field=field, **where
                )
            else:
                scores[c] = score
        if len(self.problems) == before and all(v is None for v in scores.values()):
            self.problem(
                f"no ratings: give at least one of {', '.join(CRITERIA)}",
                field=CRITERIA[0],
                **where,
            )
        if len(self.problems) > before:
            return
        self.rows.append(
            HumanRating(
                str(question).strip(),
                str(rater).strip(),
                scores,
                line=where.get("line"),
                item=where.get("item"),
            )
        )

    def result(self) -> HumanRatings:
        if not self.problems and not self.rows:
            self.problem("no ratings found")
        if self.problems:
            raise QuizFormatError(self.shown, self.problems)
        return HumanRatings(self.shown, tuple(self.rows))


def _score(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    number: float
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(number) or not number.is_integer() or not 1 <= number <= 5:
        return None
    return int(number)


def _from_csv(text: str, out: _Collector, delimiter: str | None) -> None:
    if not text.strip():
        out.problem("file is empty")
        return
    first = text.split("\n", 1)[0]
    delim = delimiter or next((d for d in ",;\t" if d in first), ",")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    try:
        header = [h.strip() for h in next(reader)]
        named = {_key(h) for h in header}
        absent = [c for c in CRITERIA if c not in named]
        if len(absent) == len(CRITERIA):
            out.problem(f"no criterion columns (expected {', '.join(CRITERIA)})", line=1)
            return
        line = reader.line_num
        for row in reader:
            start = line + 1
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                out.problem(f"{len(row)} cells but the header has {len(header)}", line=start)
                continue
            out.add(dict(zip(header, row, strict=False)), {"line": start})
    except csv.Error as exc:
        out.problem(f"invalid CSV: {exc}", line=reader.line_num)


def _from_json(text: str, out: _Collector) -> None:
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            out.problems.append(json_problem(out.shown, exc))
            return
        for number, obj in enumerate(data, start=1):
            if not isinstance(obj, dict):
                out.problem(f"expected an object (got {type_name(obj)})", item=number)
                continue
            out.add(obj, {"item": number})
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            out.problem(f"invalid JSON: {exc.msg}", line=lineno, column=exc.colno)
            continue
        if not isinstance(obj, dict):
            out.problem(f"expected an object (got {type_name(obj)})", line=lineno)
            continue
        out.add(obj, {"line": lineno})


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def resolve(ratings: HumanRatings, quiz: Quiz) -> RatingTable:
    """Question id → rater → criterion → score, each record's question found in ``quiz`` by id,
    by 1-based number or by text; unknown questions and repeated (question, rater) pairs are
    errors naming the record's line or item."""
    by_id = {q.id: q.id for q in quiz.questions}
    by_text = {_norm(q.text): q.id for q in quiz.questions}
    table: RatingTable = {}
    problems: list[QuizProblem] = []
    for row in ratings.rows:
        where = {"line": row.line, "item": row.item}
        qid = by_id.get(row.question) or by_text.get(_norm(row.question))
        if (
            qid is None
            and row.question.isdecimal()
            and 1 <= int(row.question) <= len(quiz.questions)
        ):
            qid = quiz.questions[int(row.question) - 1].id
        if qid is None:
            problems.append(
                QuizProblem(
                    ratings.path,
                    f"no question {row.question[:40]!r} in {quiz.source_path or quiz.title}"
                    f" (give its id q1..q{len(quiz.questions)}, its number or its text)",
                    field="question_id",
                    **where,
                )
            )
            continue
        raters = table.setdefault(qid, {})
        if row.rater in raters:
            problems.append(
                QuizProblem(
                    ratings.path,
                    f"rater {row.rater[:30]!r} rates question {qid} twice",
                    field="rater",
                    **where,
                )
            )
            continue
        raters[row.rater] = dict(row.scores)
    if problems:
        raise QuizFormatError(ratings.path, problems)
    return table


__all__ = ["HumanRating", "HumanRatings", "RatingTable", "load_ratings", "resolve"]
