"""A grade summary's label line stays one line: lexical grading gives every F1 value its own
label ("F1 0.67"), which on 300 answers filled five rows of an 80×24 Grade screen."""

from __future__ import annotations

from quiztui.pipeline.grade import GradeSummary
from quiztui.report.grades import LABELS_SHOWN, summary_lines


def summary(labels: dict[str, int]) -> GradeSummary:
    return GradeSummary(
        grader="lexical",
        total=sum(labels.values()),
        scored=sum(labels.values()),
        unscored=0,
        mean_normalised=0.5,
        labels=labels,
        requests=0,
        retries=0,
        tokens_in=0,
        tokens_out=0,
        seconds=0.1,
    )


def test_the_most_common_labels_are_shown_and_the_rest_counted() -> None:
    labels = {f"F1 0.{n:02d}": 30 - n for n in range(20)}
    (line,) = [x for x in summary_lines(summary(labels)) if x.startswith("labels: ")]
    assert line == (
        "labels: "
        + ", ".join(f"F1 0.{n:02d} {30 - n}" for n in range(LABELS_SHOWN))
        + f", … {20 - LABELS_SHOWN} more"
    )


def test_a_few_labels_are_all_shown() -> None:
    lines = summary_lines(summary({"correct": 3, "incorrect": 1}))
    assert "labels: correct 3, incorrect 1" in lines
    assert "labels: —" in summary_lines(summary({}))
