"""``quiztui vet QUIZ --estimate`` and ``--budget USD``: what a run will cost, and a stop at a limit.

The estimate is printed before any headless run too (stderr). Exit codes: ``--estimate`` exits 0
without judging or creating a run; a headless run that stopped at its budget writes its report
and exits :data:`STOPPED_EXIT` (3): what was judged is stored, the rest is "not run" and
``--resume RUN_ID`` continues it (with a new ``--budget`` if wanted).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from quiztui.cli.flags import Number
from quiztui.core import json_text
from quiztui.core.estimate import usd

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.estimate import Estimate
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.events import RunStarted, RunSummary

STOPPED_EXIT = 3


def usd_text(text: str) -> str:
    """``--budget`` without its dollar sign ("$0.50" → "0.50"); validated as ``vet.budget``."""
    return text.strip().lstrip("$")


def add_arguments(vet: argparse.ArgumentParser) -> None:
    vet.add_argument(
        "--budget",
        action=Number,
        key="vet.budget",
        clean=usd_text,
        metavar="USD",
        help="stop the run within one batch of this cost (needs a [cost] price); the rest is"
        " not run and --resume continues it",
    )
    vet.add_argument(
        "--estimate",
        action="store_true",
        help="print requests, tokens, cost and time of the run, then exit without judging",
    )


def estimate_table(est: Estimate, budget: float | None = None) -> str:
    """Label/value lines, aligned (read in terminals and CI logs)."""
    rows = est.rows()
    if budget is not None:
        covered = (
            "unknown share"
            if est.cost is None
            else ("covers the estimate" if est.cost <= budget else f"{budget / est.cost:.0%}")
        )
        rows.insert(7, ("budget", f"{usd(budget)} ({covered})"))
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k.ljust(width)}  {v}\n" for k, v in rows)


def cmd_estimate(config: Config, args: argparse.Namespace, store: Any, quiz: Quiz) -> int:
    """Print the estimate of ``quiztui vet`` with these options; create no run, send nothing."""
    from quiztui.assemble.estimate import estimate_vet

    label, est = estimate_vet(
        config, store, quiz, args.resume, bool(getattr(args, "batch_api", False))
    )
    if args.format == "json":
        data = est.as_dict() | {"budget": config.vet.budget, "judge": label}
        sys.stdout.write(json_text.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(f"estimate for {quiz.title} with {label}\n")
        sys.stdout.write(estimate_table(est, config.vet.budget))
    return 0


def print_started(event: RunStarted, stream: TextIO) -> None:
    """The estimate (and budget) on stderr when a headless run starts."""
    if event.estimate is None:
        return
    est = event.estimate
    line = f"quiztui: {est.short()}"
    if event.budget is not None:
        line += f" · budget {usd(event.budget)}"
    stream.write(line + "\n")
    stream.write(f"quiztui: estimate basis: {est.basis}\n")
    stream.flush()


def report_stopped(summary: RunSummary, stream: TextIO) -> int:
    """Say why the run stopped and how to go on; the exit code of a stopped run."""
    cost = usd(summary.cost) if summary.cost is not None else "unknown"
    stream.write(f"quiztui: stopped: {summary.error} · spent {cost}\n")
    return STOPPED_EXIT


__all__ = [
    "STOPPED_EXIT",
    "add_arguments",
    "cmd_estimate",
    "estimate_table",
    "print_started",
    "report_stopped",
    "usd_text",
]
