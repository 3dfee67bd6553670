"""A user's marked answers: (question, reference, candidate answer, human score) on their scale.

``quiztui grade --benchmark FILE`` reads any CSV, TSV or JSON Lines answer file
(:mod:`quiztui.formats.answers`, with ``--columns`` for other column names) in which every row
carries a human score, on the scale given by ``--scale LO-HI`` (default 0-5). Scores are mapped
linearly onto 0–5, the scale the benchmark's brackets (0–2, 2–4, 4–5) and figures use. Every
problem is one line naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

from quiztui.core.benchmark import SCALE_MAX
from quiztui.core.grading import GradeItem
from quiztui.errors import QuizFormatError, QuizProblem, QuiztuiError
from quiztui.formats.answers import load_answers

_SCALE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:-|–|\.\.|:)\s*(-?\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True, slots=True)
class Scale:
    """The human scores' range; ``to5`` maps a score onto 0–5, ``from5`` back."""

    lo: float = 0.0
    hi: float = SCALE_MAX

    @property
    def span(self) -> float:
        return self.hi - self.lo

    def to5(self, score: float) -> float:
        return (score - self.lo) / self.span * SCALE_MAX

    def from5(self, score: float) -> float:
        return self.lo + score / SCALE_MAX * self.span

    def __str__(self) -> str:
        return f"{self.lo:g}-{self.hi:g}"


def parse_scale(text: str) -> Scale:
    """``0-5``, ``1-10``, ``0..100`` → Scale; a QuiztuiError says what is wrong."""
    m = _SCALE.match(text)
    if m is None:
        raise QuiztuiError(f"--scale {text!r}: expected LO-HI, e.g. 0-5 or 1-10")
    lo, hi = float(m.group(1)), float(m.group(2))
    if not hi > lo:
        raise QuiztuiError(f"--scale {text!r}: the top must be above the bottom")
    return Scale(lo, hi)


@dataclass(frozen=True, slots=True)
class MarkedFile:
    """The marked answers, with human scores on 0–5; ``folds`` by item id when a fold column is
    mapped; ``digest``: sha256 of the file's bytes (a fitted calibration is named by it)."""

    path: str
    items: tuple[GradeItem, ...]
    scale: Scale
    folds: dict[str, str]
    digest: str

    @property
    def name(self) -> str:
        return Path(self.path).name


def load_marked(
    path: str | Path,
    scale: Scale | None = None,
    columns: dict[str, str] | None = None,
    *,
    strict: bool = True,
    skipped: list[str] | None = None,
) -> MarkedFile:
    """The marked answers of ``path``. With ``strict=False`` a row with a problem (a bad cell, a
    missing or out-of-scale score) is left out and its one-line problem appended to ``skipped``,
    as ``grade FILE`` and ``vet`` do; a problem of the whole file, or fewer than 4 good rows,
    still raises."""
    shown = str(path)
    scale = scale or Scale()
    folds: dict[str, str] = {}
    if skipped is None:
        skipped = []
    already = len(skipped)
    items = load_answers(path, strict=strict, skipped=skipped, columns=columns, extras=folds)
    problems: list[QuizProblem] = []
    out: list[GradeItem] = []
    score_field = (columns or {}).get("human", "score")
    for item in items:
        where = {"line" if _is_lines(shown) else "item": item.source_line}
        if item.human is None:
            problems.append(
                QuizProblem(
                    shown, "missing: every answer needs a human score", field=score_field, **where
                )
            )
            continue
        if not (scale.lo <= item.human <= scale.hi) or not math.isfinite(item.human):
            problems.append(
                QuizProblem(
                    shown,
                    f"{item.human:g} is outside the scale {scale} (give --scale LO-HI)",
                    field=score_field,
                    **where,
                )
            )
            continue
        out.append(replace(item, human=scale.to5(item.human)))
    if problems and (strict or not out):
        raise QuizFormatError(shown, problems)
    skipped.extend(str(p) for p in problems)
    folds = {k: v for k, v in folds.items() if k in {item.id for item in out}}
    if len(out) < 4 and not strict and (problems or len(skipped) > already):
        # too few good rows to fit on: the rows' own problems say why (as --strict would)
        return load_marked(path, scale, columns, strict=True)
    if len(out) < 4:
        raise QuizFormatError(
            shown, [QuizProblem(shown, f"{len(out)} marked answers: at least 4 are needed")]
        )
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return MarkedFile(shown, tuple(out), scale, folds, digest)


def _is_lines(shown: str) -> bool:
    """CSV, TSV and JSON Lines locate by line; a JSON array by item."""
    return not shown.lower().endswith(".json")
