"""The shared development data outside the repository (``mmlu_redux_helm_dev``: MMLU-Redux
questions with the annotators' labels and the recorded answers of 10 LLMs; its SOURCE.txt).

Found through ``QUIZTUI_DEV_DATA`` (a folder holding ``mmlu_redux_helm_dev``), else
``../shared/data`` beside the working directory (the checkout) or one of its parents; None when
absent, so tests
skip cleanly. Nothing here copies the data into the repository: :func:`write_dev_quiz` writes a
quiz into a folder the caller gives (a temporary one).
"""

from __future__ import annotations

import ast
import csv
import io
import os
from pathlib import Path

DEV_SET = "mmlu_redux_helm_dev"


def dev_data_dir() -> Path | None:
    """The ``mmlu_redux_helm_dev`` folder, or None when it is not on this machine."""
    roots = []
    if env := os.environ.get("QUIZTUI_DEV_DATA"):
        roots.append(Path(env))
    # ../shared/data beside the checkout the tests and benches run from (or beside a parent)
    here = Path.cwd().resolve()
    roots.extend(up / "shared" / "data" for up in (here, *here.parents))
    for root in roots:
        folder = root / DEV_SET
        if (folder / "labels").is_dir() and (folder / "answers").is_dir():
            return folder
    return None


def csv_rows(path: Path) -> list[dict[str, str]]:
    """The rows of one of the data's CSV files: UTF-8 or Mac Roman (mmlu_moral_scenarios.csv is
    Mac Roman: SOURCE.txt), ';'- or ','-delimited (whichever the header holds more of)."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("mac_roman")
    header = text.split("\n", 1)[0]
    sep = ";" if header.count(";") > header.count(",") else ","
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter=sep))


def label_rows(folder: Path) -> list[dict[str, str]]:
    """Every labelled question (question, choices, answer, error_type, subject), in file order."""
    rows = []
    for path in sorted((folder / "labels").glob("mmlu_*.csv")):
        for row in csv_rows(path):
            rows.append(
                {
                    "question": row["question"],
                    "choices": row["choices"],
                    "answer": row["answer"].strip(),
                    "error_type": row["error_type"].strip().casefold().replace(" ", "_"),
                    "subject": path.stem.removeprefix("mmlu_"),
                }
            )
    return rows


def write_dev_quiz(folder: Path, out: Path) -> Path:
    """The 2,800 labelled questions as one quiz CSV (question, choices, answer, subject) at
    ``out``; the annotators' label stays out of the quiz (it is the truth, not the key)."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf)
    writer.writerow(["question", "choices", "answer", "subject"])
    for row in label_rows(folder):
        choices = [str(c) for c in ast.literal_eval(row["choices"])]
        writer.writerow([row["question"], repr(choices), row["answer"], row["subject"]])
    out.write_text(buf.getvalue(), encoding="utf-8")
    return out
