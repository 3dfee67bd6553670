"""The real exam with human error labels and the recorded answers of real LLMs (issue 26).

Reads a folder shaped like ``../shared/data/mmlu_redux_helm_dev`` (its SOURCE.txt describes it):
``labels/mmlu_<subject>.csv`` (question; choices as a Python-list string; answer, the 0-based
index of the published key; error_type, the annotators' label) and ``answers/<subject>.csv``
(question, choices, one column per model holding its answer letter relative to that row's
choices). Labels are ';'- or ','-delimited, UTF-8 or Mac Roman; answers join on the
whitespace-normalised question text and choices. Used by ``bench/real_judges.py`` and the tests
that measure on it; the data never enter the repository.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from quiztui.core.judges import Observations
from quiztui.testing.dev_data import csv_rows

ENV = "QUIZTUI_REAL_EXAM"


def default_path() -> Path | None:
    """``$QUIZTUI_REAL_EXAM``, else the dev half beside the checkout
    (:func:`quiztui.testing.dev_data.dev_data_dir`); None when absent."""
    from quiztui.testing.dev_data import dev_data_dir

    env = os.environ.get(ENV)
    if env:
        p = Path(env)
        return p if p.is_dir() else None
    return dev_data_dir()


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass(frozen=True)
class RealExam:
    subjects: npt.NDArray[np.str_]  # per question
    keys: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    labels: npt.NDArray[np.str_]  # ok, wrong_groundtruth, ... (lower case, underscores)
    picks: npt.NDArray[np.int64]  # questions × models: the option picked (−1: unusable answer)
    models: tuple[str, ...]
    questions: tuple[str, ...]
    options: tuple[tuple[str, ...], ...]

    def observations(self, judges: list[int] | None = None, rows: npt.ArrayLike | None = None):
        """Each recorded answer as a per-question judge gives it: the pick true, the rest false."""
        idx = np.arange(len(self.keys)) if rows is None else np.asarray(rows)
        js = list(range(len(self.models))) if judges is None else judges
        width = int(self.counts.max())
        v = np.full((len(idx), width, len(js)), np.nan)
        for b, j in enumerate(js):
            p = self.picks[idx, j]
            answered = np.flatnonzero(p >= 0)
            for a in answered:
                v[a, : self.counts[idx[a]], b] = 0.0
                v[a, p[a], b] = 1.0
        return Observations.of(v, self.keys[idx], self.counts[idx], ["pick"] * len(js))

    def scored(self) -> npt.NDArray[np.bool_]:
        """The rows the figures are measured on: ok and wrong_groundtruth."""
        return np.isin(self.labels, ["ok", "wrong_groundtruth"])

    def wrong(self) -> npt.NDArray[np.bool_]:
        return self.labels == "wrong_groundtruth"


def load(path: Path) -> RealExam:
    subjects, keys, counts, labels, picks, questions, options = [], [], [], [], [], [], []
    models: tuple[str, ...] = ()
    for label_file in sorted((path / "labels").glob("*.csv")):
        subject = label_file.stem.removeprefix("mmlu_")
        answer_file = path / "answers" / f"{subject}.csv"
        if not answer_file.exists():
            continue
        answers = csv_rows(answer_file)
        if not answers:
            continue
        these = tuple(c for c in answers[0] if c not in ("question", "choices"))
        if models and these != models:
            raise ValueError(f"{answer_file}: its model columns differ from the other files'")
        models = these
        index = {}
        for row in answers:
            ch = tuple(_norm(c) for c in ast.literal_eval(row["choices"]))
            index[(_norm(row["question"]), ch)] = (ch, row)
        for row in csv_rows(label_file):
            ch = tuple(_norm(c) for c in ast.literal_eval(row["choices"]))
            hit = index.get((_norm(row["question"]), ch))
            if hit is None:
                continue
            answer_choices, answer_row = hit
            chosen = []
            for m in models:
                cell = (answer_row.get(m) or "").strip()
                ok = len(cell) == 1 and "A" <= cell <= "Z" and ord(cell) - 65 < len(ch)
                chosen.append(ch.index(answer_choices[ord(cell) - 65]) if ok else -1)
            subjects.append(subject)
            keys.append(int(row["answer"]))
            counts.append(len(ch))
            labels.append(row["error_type"].strip().lower().replace(" ", "_"))
            picks.append(chosen)
            questions.append(row["question"])
            options.append(ch)
    return RealExam(
        np.array(subjects),
        np.array(keys, dtype=np.int64),
        np.array(counts, dtype=np.int64),
        np.array(labels),
        np.array(picks, dtype=np.int64).reshape(len(keys), len(models)),
        models,
        tuple(questions),
        tuple(options),
    )
