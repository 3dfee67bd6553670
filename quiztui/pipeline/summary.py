"""A vet run's summary as a JSON-ready dict (stored with the run, written in reports) and back."""

from __future__ import annotations

from typing import Any

from quiztui.pipeline.events import QuestionSummary, RunSummary


def summary_to_dict(summary: RunSummary) -> dict[str, Any]:
    """A JSON-ready dict (``dataclasses.asdict`` deep-copies and is slow for large quizzes)."""
    data = {f: getattr(summary, f) for f in summary.__dataclass_fields__ if f != "questions"}
    data["badge_counts"] = dict(summary.badge_counts)
    for name in ("tpr_ci", "tnr_ci"):
        value = getattr(summary, name)
        data[name] = None if value is None else list(value)
    data["questions"] = [
        {
            "question_id": q.question_id,
            "text": q.text,
            "options": list(q.options),
            "key": q.key,
            "k": q.k,
            "badge": q.badge.value,
            "confidence": q.confidence,
            "suggested_option": q.suggested_option,
            "suggested_p": q.suggested_p,
            "verdicts": list(q.verdicts),
            "reasons": list(q.reasons),
            "p_true": list(q.p_true),
            "graded": q.graded,
            "interval": None if q.interval is None else list(q.interval),
        }
        for q in summary.questions
    ]
    return data


def summary_from_dict(data: dict[str, Any]) -> RunSummary:
    """The inverse of :func:`summary_to_dict`, for a summary stored with a run (older stored
    summaries lack newer fields, which take their defaults)."""
    from quiztui.core.kscore import Badge

    def pair(value: Any) -> tuple[float, float] | None:
        return None if value is None else (float(value[0]), float(value[1]))

    questions = tuple(
        QuestionSummary(
            question_id=q["question_id"],
            text=q["text"],
            options=tuple(q["options"]),
            key=q["key"],
            k=q["k"],
            badge=Badge(q["badge"]),
            confidence=q["confidence"],
            suggested_option=q.get("suggested_option"),
            suggested_p=q.get("suggested_p"),
            verdicts=tuple(q["verdicts"]),
            reasons=tuple(q["reasons"]),
            p_true=tuple(q.get("p_true") or ()),
            graded=q.get("graded"),
            interval=pair(q.get("interval")),
        )
        for q in data.get("questions") or ()
    )
    fields = set(RunSummary.__dataclass_fields__) - {"questions", "tpr_ci", "tnr_ci"}
    values = {k: v for k, v in data.items() if k in fields}
    values["badge_counts"] = dict(values.get("badge_counts") or {})
    return RunSummary(
        questions=questions,
        tpr_ci=pair(data.get("tpr_ci")),
        tnr_ci=pair(data.get("tnr_ci")),
        **values,
    )


__all__ = ["summary_from_dict", "summary_to_dict"]
