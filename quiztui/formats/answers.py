"""Answer files to grade: CSV, JSON Lines or a JSON array of (question, reference, candidate).

Columns / keys (case-insensitive; the first name found wins):

- question: ``question``, ``query``, ``prompt`` (may be empty: sentence-pair data has none);
- reference: ``reference``, ``reference_answer``, ``ground_truth``, ``golden_answer``,
  ``answer``, ``correct``; a JSON list gives the reference and its aliases (NQ-style);
- candidate: ``candidate``, ``candidate_answer``, ``response``, ``generated_answer``,
  ``prediction``; ``answer`` when a ``reference`` (or another reference name) is there too, as in
  SemEval-style exports (``answer,correct,question,reference_answer,id``);
- human score (optional): ``human``, ``human_score``, ``score``, ``gold``, ``mark``, ``marks``,
  ``points``; ``correct`` (a 0/1 label) when it is not the reference;
- aliases (optional): ``aliases`` (JSON list, or ``|``-separated in CSV);
- id (optional): ``id``. Exports often name the *question's* id ``id`` and repeat it on every
  answer: an ``id`` column found by name whose values repeat is not an answer id, and rows are
  numbered instead (``g1``, ``g2``, …). A column mapped with ``--columns id=…`` must be unique: a
  repeat is a problem of that row (skipped, or the error with ``--strict``).

``columns`` (``quiztui grade --benchmark FILE --columns question=q,answer=ans,score=mark``) names
the column (or key) of each field instead: ``question``, ``reference``, ``answer`` (the candidate
answer; ``candidate`` too), ``score`` (``human`` too), ``id``, ``fold``; a named column that is not
there is a problem of that field. ``extras`` receives the ``fold`` value of each item, by id.

``quiztui generate`` output (``question``/``answer``/``candidate``) reads as it is. Every problem
names the file, the line (CSV, JSONL) or item (JSON array) and the field.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from quiztui.core.grading import GradeItem
from quiztui.errors import QuizFormatError, QuizProblem
from quiztui.formats._source import json_problem, read_text, type_name

QUESTION = ("question", "query", "prompt")
REFERENCE = ("reference", "reference_answer", "ground_truth", "golden_answer", "answer", "correct")
CANDIDATE = ("candidate", "candidate_answer", "response", "generated_answer", "prediction")
HUMAN = ("human", "human_score", "score", "gold", "mark", "marks", "points", "correct")


# --columns field names → the answer-file field they stand for.
COLUMN_FIELDS = {
    "question": "question",
    "reference": "reference",
    "answer": "candidate",
    "candidate": "candidate",
    "score": "human",
    "human": "human",
    "id": "id",
    "fold": "fold",
}


def parse_columns(spec: str) -> dict[str, str]:
    """``question=q,answer=ans,score=mark`` → {"question": "q", "candidate": "ans", "human":
    "mark"}; a ValueError names what is wrong."""
    out: dict[str, str] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        name, sep, column = part.partition("=")
        field = COLUMN_FIELDS.get(name.strip().casefold())
        if not sep or not column.strip():
            raise ValueError(f"{part.strip()!r} is not FIELD=COLUMN")
        if field is None:
            raise ValueError(f"unknown field {name.strip()!r} (known: {', '.join(COLUMN_FIELDS)})")
        if field in out:
            raise ValueError(f"field {name.strip()!r} is mapped twice")
        out[field] = column.strip()
    return out


def load_answers(
    path: str | Path,
    *,
    strict: bool = True,
    skipped: list[str] | None = None,
    columns: dict[str, str] | None = None,
    extras: dict[str, str] | None = None,
) -> list[GradeItem]:
    """The answers to grade. With ``strict=False`` a row with a problem is left out and its
    one-line problem (the strict error's words) appended to ``skipped``; a problem of the whole
    file, or no good row, still raises."""
    shown = str(path)
    path = Path(path)
    text = read_text(path, shown)
    suffix = path.suffix.lower()
    out = _Collector(shown, strict, skipped)
    out.columns = {k: v.casefold() for k, v in (columns or {}).items()}
    out.extras = extras if extras is not None else {}
    if suffix == ".csv" or suffix == ".tsv":
        return _from_csv(text, out, "\t" if suffix == ".tsv" else None)
    if suffix in (".jsonl", ".json", ".ndjson"):
        return _from_json(text, out)
    raise QuizFormatError(
        shown,
        [
            QuizProblem(
                shown, f"unknown answer file type {suffix!r} (expected .csv, .tsv, .jsonl or .json)"
            )
        ],
    )


class _Collector:
    def __init__(self, shown: str, strict: bool = True, skipped: list[str] | None = None) -> None:
        self.shown = shown
        self.problems: list[QuizProblem] = []
        self.items: list[GradeItem] = []
        self.strict = strict
        self.skipped = skipped if skipped is not None else []
        self.columns: dict[str, str] = {}  # field → its column, casefolded (--columns)
        self.extras: dict[str, str] = {}  # item id → its fold, when a fold column is mapped
        self.ids: dict[str, str] = {}  # item id → where it was first seen ("line 3")
        self.numbered: list[str] = []  # each kept item's row-number id (g1, g2, …)
        self.folds: list[str | None] = []  # each kept item's fold (a mapped fold column)

    def problem(self, message: str, **where: Any) -> None:
        self.problems.append(QuizProblem(self.shown, message, **where))

    def add(self, row: dict[str, Any], where: dict[str, int], number: int) -> None:
        """One record; ``where`` is {"line": n} or {"item": n}."""
        keys = {str(k).strip().casefold(): k for k in row}

        def pick(names: tuple[str, ...], field: str = "") -> tuple[str | None, Any]:
            mapped = self.columns.get(field)
            if mapped is not None:
                return (mapped, row[keys[mapped]]) if mapped in keys else (None, None)
            for name in names:
                if name in keys:
                    return name, row[keys[name]]
            return None, None

        before = len(self.problems)
        _, question = pick(QUESTION, "question")
        ref_name, reference = pick(REFERENCE, "reference")
        cand_name, candidate = pick(CANDIDATE, "candidate")
        if (
            cand_name is None
            and "candidate" not in self.columns
            and ref_name not in (None, "answer")
        ):
            # question, reference, answer, score: "answer" is the candidate's answer here.
            cand_name, candidate = pick(("answer",))
        human_name, human = pick(tuple(n for n in HUMAN if n != ref_name), "human")
        aliases: list[str] = []
        if question is None:
            question = ""
        elif not isinstance(question, str):
            self.problem(f"must be a string (got {type_name(question)})", field="question", **where)
        if ref_name is None:
            self.problem(self._missing("reference", REFERENCE), field="reference", **where)
        elif (
            isinstance(reference, list) and reference and all(isinstance(r, str) for r in reference)
        ):
            reference, aliases = reference[0], list(reference[1:])
        elif not isinstance(reference, str) or not reference.strip():
            self.problem("must be a non-empty string", field=ref_name, **where)
        if cand_name is None:
            self.problem(
                self._missing("candidate", CANDIDATE)
                if "candidate" in self.columns
                else f"missing (one of {', '.join(CANDIDATE)};"
                " `quiztui generate --candidates` writes one)",
                field="candidate",
                **where,
            )
        elif not isinstance(candidate, str):
            self.problem(f"must be a string (got {type_name(candidate)})", field=cand_name, **where)
        extra = row.get(keys["aliases"]) if "aliases" in keys else None
        if isinstance(extra, list) and all(isinstance(a, str) for a in extra):
            aliases += extra
        elif isinstance(extra, str) and extra.strip():
            aliases += [a.strip() for a in extra.split("|") if a.strip()]
        elif extra not in (None, ""):
            self.problem(
                "must be a list of strings or '|'-separated text", field="aliases", **where
            )
        score: float | None = None
        if human_name is not None and human not in (None, ""):
            try:
                score = float(human)
                if not math.isfinite(score):
                    raise ValueError
            except (TypeError, ValueError):
                self.problem(
                    f"must be a number (got {str(human)[:20]!r})", field=human_name, **where
                )
        if len(self.problems) > before:
            return
        id_column = self.columns.get("id", "id")
        ident = row.get(keys[id_column]) if id_column in keys else None
        item_id = str(ident) if ident not in (None, "") else f"g{number}"
        if "id" in self.columns and item_id in self.ids:
            self.problem(
                f"id {item_id!r} appears twice (first at {self.ids[item_id]})", field="id", **where
            )
            return
        fold = None
        if "fold" in self.columns:
            fold = row.get(keys[self.columns["fold"]]) if self.columns["fold"] in keys else None
            if fold in (None, "") or isinstance(fold, (dict, list)):
                self.problem("missing (the mapped fold column)", field="fold", **where)
                return
        self.numbered.append(f"g{number}")
        self.folds.append(None if fold is None else str(fold))
        self.ids.setdefault(item_id, " ".join(f"{k} {v}" for k, v in where.items()))
        self.items.append(
            GradeItem(
                id=item_id,
                question=str(question),
                reference=str(reference),
                candidate=str(candidate),
                human=score,
                aliases=tuple(aliases),
                source_line=where.get("line", where.get("item")),
            )
        )

    def _missing(self, field: str, names: tuple[str, ...]) -> str:
        if field in self.columns:
            return f"missing (the mapped column {self.columns[field]!r})"
        return f"missing (one of {', '.join(names)})"

    def result(self) -> list[GradeItem]:
        if self.problems:
            by_row: dict[tuple[int | None, int | None], list[QuizProblem]] = {}
            for p in self.problems:
                by_row.setdefault((p.line, p.item), []).append(p)
            if self.strict or not self.items or (None, None) in by_row:
                raise QuizFormatError(self.shown, self.problems)
            for found in by_row.values():
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                self.skipped.append(str(found[0]) + more)
        if not self.items:
            raise QuizFormatError(self.shown, [QuizProblem(self.shown, "no answers to grade")])
        if len(self.ids) < len(self.items):  # an unmapped ``id`` column that repeats
            self.items = [
                replace(item, id=number)
                for item, number in zip(self.items, self.numbered, strict=True)
            ]
        for item, fold in zip(self.items, self.folds, strict=True):
            if fold is not None:
                self.extras[item.id] = fold
        return self.items


def _from_csv(text: str, out: _Collector, delimiter: str | None) -> list[GradeItem]:
    if not text.strip():
        out.problem("file is empty")
        return out.result()
    first = text.split("\n", 1)[0]
    delim = delimiter or next((d for d in ",;\t" if d in first), ",")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    try:
        header = [h.strip() for h in next(reader)]
        known = {h.casefold() for h in header}
        for field, column in out.columns.items():
            if column not in known:
                shown_field = {"candidate": "answer", "human": "score"}.get(field, field)
                out.problem(f"column {column!r} is not in the header", line=1, field=shown_field)
        if out.problems:
            return out.result()
        line = reader.line_num
        for number, row in enumerate(reader, start=1):
            start = line + 1
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                out.problem(f"{len(row)} cells but the header has {len(header)}", line=start)
                continue
            out.add(dict(zip(header, row, strict=False)), {"line": start}, number)
    except csv.Error as exc:
        out.problem(f"invalid CSV: {exc}", line=reader.line_num)
    return out.result()


def _from_json(text: str, out: _Collector) -> list[GradeItem]:
    shown = out.shown
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise QuizFormatError(shown, [json_problem(shown, exc)]) from None
        for number, obj in enumerate(data, start=1):
            if not isinstance(obj, dict):
                out.problem(f"expected an object (got {type_name(obj)})", item=number)
                continue
            out.add(obj, {"item": number}, number)
        return out.result()
    number = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        number += 1
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            out.problem(f"invalid JSON: {exc.msg}", line=lineno, column=exc.colno)
            continue
        if not isinstance(obj, dict):
            out.problem(f"expected an object (got {type_name(obj)})", line=lineno)
            continue
        out.add(obj, {"line": lineno}, number)
    return out.result()
