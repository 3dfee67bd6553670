"""Grading benchmarks with human scores (0–5) from ``../shared/data/grading``.

- ``msrpar``: SemEval-2012 STS MSRpar, train (750) and test (750) sentence pairs;
- ``answers-students``: SemEval-2015 STS answers-students, student answer vs reference answer
  (750 scored pairs). It has no training split, so a seeded half split stands in for one.

The TSV files have no header: ``score<TAB>sentence1<TAB>sentence2``; rows with an empty score are
unannotated distractor pairs and are skipped. The pair's first sentence is the reference, the
second the candidate; there is no question.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from quiztui import resources
from quiztui.core.grading import GradeItem
from quiztui.errors import QuizFormatError, QuizProblem, QuiztuiError
from quiztui.formats._source import read_text

# The grading data folder, relative to the folder that holds an editable checkout (a development
# default; an installed package needs --data or [grade] data_dir).
SHARED_GRADING = Path("shared") / "data" / "grading"
_STS = "sts_semeval2012_msrpar"


@dataclass(frozen=True, slots=True)
class BenchmarkSpec:
    name: str
    description: str
    train: str | None  # path under the grading folder; None: split the test file
    test: str


DATASETS: dict[str, BenchmarkSpec] = {
    "msrpar": BenchmarkSpec(
        "msrpar",
        "SemEval-2012 STS MSRpar (news paraphrase pairs), train 750 / test 750",
        f"{_STS}/MSRpar.train.tsv",
        f"{_STS}/MSRpar.test.tsv",
    ),
    "answers-students": BenchmarkSpec(
        "answers-students",
        "SemEval-2015 STS answers-students (student vs reference answer), 750 scored;"
        " seeded half split for train/test",
        None,
        f"{_STS}/extra_2015_2016/2015.answers-students.test.tsv",
    ),
}


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str
    description: str
    train: tuple[GradeItem, ...]
    test: tuple[GradeItem, ...]


def read_sts(path: Path, prefix: str) -> list[GradeItem]:
    shown = str(path)
    items: list[GradeItem] = []
    problems: list[QuizProblem] = []
    for lineno, line in enumerate(read_text(path, shown).splitlines(), start=1):
        parts = line.split("\t")
        if len(parts) < 3:
            if line.strip():
                problems.append(
                    QuizProblem(shown, "expected score<TAB>sentence1<TAB>sentence2", line=lineno)
                )
            continue
        if not parts[0].strip():
            continue  # unannotated pair
        try:
            score = float(parts[0])
        except ValueError:
            problems.append(
                QuizProblem(
                    shown, f"score {parts[0][:20]!r} is not a number", line=lineno, field="score"
                )
            )
            continue
        items.append(
            GradeItem(
                f"{prefix}{lineno}",
                "",
                parts[1].strip(),
                parts[2].strip(),
                human=score,
                source_line=lineno,
            )
        )
    if problems:
        raise QuizFormatError(shown, problems)
    return items


def default_data_dir() -> Path | None:
    """``../shared/data/grading`` beside an editable checkout; None for an installed package."""
    root = resources.checkout_root()
    return None if root is None else root.parent / SHARED_GRADING


def load_benchmark(
    name: str, data_dir: Path | None = None, *, limit: int | None = None, seed: int = 0
) -> Benchmark:
    """The dataset's train and test items; ``limit`` keeps a seeded sample of each split."""
    spec = DATASETS.get(name)
    if spec is None:
        raise QuiztuiError(f"unknown benchmark {name!r} (known: {', '.join(DATASETS)})")
    folder = data_dir or default_data_dir()
    if folder is None:
        raise QuiztuiError(
            f"benchmark {name!r}: no data folder (pass --data DIR or set [grade] data_dir)"
        )
    test_path = folder / spec.test
    if not test_path.is_file():
        raise QuiztuiError(
            f"{test_path}: benchmark data not found (pass --data DIR: the grading data folder)"
        )
    test = read_sts(test_path, "test:")
    if spec.train is not None:
        train = read_sts(folder / spec.train, "train:")
    else:
        order = list(range(len(test)))
        random.Random(f"split:{seed}").shuffle(order)
        half = len(order) // 2
        train = [test[i] for i in sorted(order[:half])]
        test = [test[i] for i in sorted(order[half:])]
    if limit is not None:
        train = _sample(train, limit, seed)
        test = _sample(test, limit, seed)
    return Benchmark(spec.name, spec.description, tuple(train), tuple(test))


def _sample(items: list[GradeItem], n: int, seed: int) -> list[GradeItem]:
    if n >= len(items):
        return items
    picked = sorted(random.Random(f"limit:{seed}").sample(range(len(items)), n))
    return [items[i] for i in picked]
