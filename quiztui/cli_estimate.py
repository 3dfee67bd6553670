"""``quiztui vet QUIZ --estimate`` and ``--budget USD``: what a run will cost, and a stop at a limit.

The estimate is printed before any headless run too (stderr). Exit codes: ``--estimate`` exits 0
without judging or creating a run; a headless run that stopped at its budget writes its report
and exits :data:`STOPPED_EXIT` (3): what was judged is stored, the rest is "not run" and
``--resume RUN_ID`` continues it (with a new ``--budget`` if wanted).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from quiztui.core.estimate import usd
from quiztui.errors import ConfigError

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.estimate import Estimate
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.events import RunStarted, RunSummary

STOPPED_EXIT = 3


def positive_usd(text: str) -> float:
    """argparse type of ``--budget``: a positive amount of US dollars ("0.50" or "$0.50")."""
    try:
        value = float(text.strip().lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an amount in USD: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"the budget must be a positive amount, got {text!r}")
    return value


def add_arguments(vet: argparse.ArgumentParser) -> None:
    vet.add_argument(
        "--budget",
        type=positive_usd,
        metavar="USD",
        help="stop the run within one batch of this cost (needs a [cost] price); the rest is"
        " not run and --resume continues it",
    )
    vet.add_argument(
        "--estimate",
        action="store_true",
        help="print requests, tokens, cost and time of the run, then exit without judging",
    )


def run_options(config: Config, store: Any, provider: Any, prompt: Any, settings: Any) -> dict:  # type: ignore[type-arg]
    """The price, the judge profile's figures and the budget for a ``VetRun``.

    A budget without a price for the judge model is a config error (nothing to count against).
    """
    from quiztui.pipeline.estimate import measured_from_profile

    price = config.cost.price_for(provider.model)
    budget = config.vet.budget
    if budget is not None and price is None:
        raise ConfigError(
            f"a budget (${budget:g}) needs a price for model {provider.model!r}: set"
            f' [cost.models."{provider.model}"] input_per_mtok and output_per_mtok'
            " (or the [cost] defaults) in the config"
        )
    profile = judge_profile(store, provider, prompt, settings)
    measured = measured_from_profile(profile) if profile is not None else None
    return {"price": price, "measured": measured, "budget": budget}


def judge_profile(store: Any, provider: Any, prompt: Any, settings: Any) -> Any:
    """The newest profile measured for exactly this judge set-up, or None."""
    return store.profiles.match(
        provider=provider.name,
        model=provider.model,
        prompt_hash=prompt.hash,
        batch_size=settings.batch_size if settings.mode == "assertion" else 1,
        mode=settings.mode,
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
    from quiztui.cli import vet_settings
    from quiztui.locations import config_dir
    from quiztui.pipeline.estimate import estimate_run
    from quiztui.pipeline.prompts import load_prompt, prompt_for_mode
    from quiztui.pipeline.vet import VetRun
    from quiztui.providers.factory import build_provider

    provider = build_provider(config, quiz)
    try:
        settings = vet_settings(config)
        prompt = load_prompt(prompt_for_mode(settings.mode), config_dir() / "prompts")
        options = run_options(config, store, provider, prompt, settings)
        run = VetRun(quiz, provider, store, prompt, settings, resume_run_id=args.resume, **options)
        est = estimate_run(run, batch_api=bool(getattr(args, "batch_api", False)))
    finally:
        aclose = getattr(provider, "aclose", None)
        if aclose is not None:
            asyncio.run(aclose())
    if args.format == "json":
        data = est.as_dict() | {"budget": config.vet.budget, "judge": provider.label}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(f"estimate for {quiz.title} with {provider.label}\n")
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
    "judge_profile",
    "positive_usd",
    "print_started",
    "report_stopped",
    "run_options",
]
