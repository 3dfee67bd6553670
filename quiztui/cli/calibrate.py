"""``quiztui calibrate`` (measure a judge on a gold set) and ``quiztui profiles`` (list them)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from quiztui.assemble.calibrate import calibration_events
from quiztui.cli._args import Parents, help_for
from quiztui.cli.flags import INT64_MAX, INT64_MIN, Number
from quiztui.cli.running import run_to_end
from quiztui.config import Config
from quiztui.core import json_text
from quiztui.core.calibration import JudgeProfile
from quiztui.report.text import cheapest_note, text_table


def register(sub: Any, parents: Parents) -> None:
    common, judge = parents.common, parents.judge
    cal = sub.add_parser(
        "calibrate",
        parents=[common, judge],
        help=help_for("calibrate"),
    )
    cal.set_defaults(handler=cmd_calibrate)
    cal.add_argument(
        "gold",
        nargs="?",
        type=Path,
        help="gold set: a quiz with trusted keys, or a labelled statement set (.jsonl); default:"
        " Open Trivia DB from ../shared/data/opentdb, else the bundled sample",
    )
    cal.add_argument(
        "--n",
        action=Number,
        ge=1,
        le=INT64_MAX,
        help="sample this many gold questions (default: 250)",
    )
    cal.add_argument(
        "--sample-seed",
        action=Number,
        ge=INT64_MIN,
        le=INT64_MAX,
        default=0,
        help="seed of the --n sample",
    )
    cal.add_argument(
        "--mode",
        choices=("assertion", "question"),
        default="assertion",
        help="assertion: batches of true/false assertions; question: one request per question",
    )
    cal.add_argument(
        "--modes",
        action="store_true",
        help="compare five set-ups side by side: batch sizes 1, 10, 20, 50 and per-question mode",
    )
    cal.add_argument(
        "--gold-from-review",
        action=Number,
        ge=1,
        le=INT64_MAX,
        metavar="RUN",
        help="gold set: the questions of vet run RUN decided in the review desk (accept: the key"
        " is right; fix: the chosen option is), judged by the judge that made the run",
    )
    cal.add_argument(
        "--interval",
        choices=("wilson", "beta"),
        default="wilson",
        help="95%% intervals of TPR/TNR: Wilson, or the equal-tailed Beta(1 + hits, 1 + misses)",
    )
    cal.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format on stdout"
    )

    prof = sub.add_parser("profiles", parents=[common], help=help_for("profiles"))
    prof.set_defaults(handler=cmd_profiles)
    prof.add_argument("--db", type=Path, help="SQLite run store")
    prof.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format on stdout"
    )


def _ci(lo_hi: tuple[float, float]) -> str:
    return f"[{lo_hi[0]:.3f}, {lo_hi[1]:.3f}]"


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def profile_row(p: JudgeProfile) -> dict[str, str]:
    c = p.confusion
    return {
        "id": "" if p.id is None else str(p.id),
        "judge": f"{p.provider} {p.model}" + (" (SIMULATED)" if p.simulated else ""),
        "mode": p.mode if p.mode == "question" else f"batch {p.batch_size}",
        "TPR [95% CI]": f"{_num(p.tpr)} {_ci(p.tpr_ci)}",
        "TNR [95% CI]": f"{_num(p.tnr)} {_ci(p.tnr_ci)}",
        "accuracy": _num(c.accuracy),
        "TP/FN/TN/FP": f"{c.tp}/{c.fn}/{c.tn}/{c.fp}",
        "unjudged": f"{c.unjudged_rate:.1%}",
        "tok/question": _num(p.tokens_per_question, ".0f"),
        "wall s": f"{p.wall_time:.1f}",
        "latency s": _num(p.latency, ".2f"),
        "cost $": _num(p.cost, ".4f"),
    }


def profile_dict(p: JudgeProfile) -> dict[str, Any]:
    c = p.confusion
    return {
        "id": p.id,
        "provider": p.provider,
        "model": p.model,
        "prompt_hash": p.prompt_hash,
        "batch_size": p.batch_size,
        "mode": p.mode,
        "simulated": p.simulated,
        "gold": p.gold,
        "questions": p.questions,
        "tp": c.tp,
        "fn": c.fn,
        "tn": c.tn,
        "fp": c.fp,
        "unjudged": c.unjudged,
        "tpr": c.tpr,
        "tpr_ci": list(p.tpr_ci),
        "tnr": c.tnr,
        "tnr_ci": list(p.tnr_ci),
        "interval_method": p.interval_method,
        "accuracy": c.accuracy,
        "unjudged_rate": c.unjudged_rate,
        "requests": p.requests,
        "tokens_in": p.tokens_in,
        "tokens_out": p.tokens_out,
        "tokens_per_question": p.tokens_per_question,
        "cost": p.cost,
        "latency": p.latency,
        "wall_time": p.wall_time,
        "run_id": p.run_id,
        "created_at": p.created_at,
    }


async def _calibrate(
    config: Config, store: Any, request: Any, gold: Any = None
) -> list[JudgeProfile]:
    from quiztui.pipeline.calibrate import ProfileMeasured, SetupStarted
    from quiztui.pipeline.events import UsageUpdated
    from quiztui.report.progress import Progress

    profiles: list[JudgeProfile] = []
    progress = Progress(sys.stderr)
    async for event in calibration_events(config, store, request, gold):
        if isinstance(event, SetupStarted):
            setup = (
                "per-question mode"
                if event.mode == "question"
                else f"batch size {event.batch_size}"
            )
            print(
                f"quiztui: calibrating {event.judge_label} on {event.gold}, {setup}"
                + (f" ({event.index + 1}/{event.count})" if event.count > 1 else ""),
                file=sys.stderr,
            )
            progress = Progress(sys.stderr)
        elif isinstance(event, UsageUpdated):
            progress.usage(event, final=event.judged + event.unjudged == event.total)
        elif isinstance(event, ProfileMeasured):
            profiles.append(event.profile)
    return profiles


def cmd_calibrate(config: Config, args: argparse.Namespace) -> int:
    from quiztui.pipeline.calibrate import CalibrationRequest
    from quiztui.store import Store

    if args.gold_from_review is not None:
        return _calibrate_from_review(config, args)
    request = CalibrationRequest(
        gold_path=args.gold,
        n=args.n if args.n is not None else (250 if args.gold is None else None),
        sample_seed=args.sample_seed,
        mode=args.mode,
        batch_size=config.vet.batch_size,
        compare_modes=args.modes,
        interval_method=args.interval,
    )
    with Store(config.db_path()) as store:
        profiles = run_to_end(_calibrate(config, store, request))
    _print_profiles(profiles, args.format)
    return 0


def _calibrate_from_review(config: Config, args: argparse.Namespace) -> int:
    """``--gold-from-review RUN``: the run's judge, in the run's set-up, on its decided questions."""
    from quiztui.assemble.calibrate import prompt_changed, review_calibration, run_setup
    from quiztui.errors import QuiztuiError
    from quiztui.pipeline.calibrate import CalibrationRequest
    from quiztui.store import Store

    if args.gold is not None:
        raise QuiztuiError("calibrate: give a gold file or --gold-from-review RUN, not both")
    run_id = int(args.gold_from_review)
    with Store(config.db_path()) as store:
        config, gold = review_calibration(config, store, run_id)
        mode, batch_size = run_setup(store, run_id)
        if prompt_changed(store, run_id, mode):
            print(
                f"quiztui: warning: the judge prompt has changed since run {run_id}; the profile"
                " is measured with the prompt as it is now",
                file=sys.stderr,
            )
        request = CalibrationRequest(
            mode=args.mode if args.modes else mode,
            batch_size=batch_size,
            compare_modes=args.modes,
            interval_method=args.interval,
        )
        profiles = run_to_end(_calibrate(config, store, request, gold))
    _print_profiles(profiles, args.format)
    return 0


def _print_profiles(profiles: list[JudgeProfile], fmt: str) -> None:
    if fmt == "json":
        print(json_text.dumps([profile_dict(p) for p in profiles], indent=2))
    else:
        print(f"gold set: {profiles[0].gold}")
        print(text_table([profile_row(p) for p in profiles]), end="")
        if len(profiles) > 1:
            print(cheapest_note(profiles))


def cmd_profiles(config: Config, args: argparse.Namespace) -> int:
    from quiztui.store import Store

    with Store(config.db_path()) as store:
        profiles = store.profiles.list()
    if args.format == "json":
        print(json_text.dumps([profile_dict(p) for p in profiles], indent=2))
        return 0
    if not profiles:
        print("no judge profiles yet: run `quiztui calibrate` to measure your judge")
        return 0
    rows = []
    for p in profiles:
        row = profile_row(p)
        row["gold"] = p.gold
        row["date"] = time.strftime("%Y-%m-%d %H:%M", time.localtime(p.created_at))
        rows.append(row)
    print(text_table(rows), end="")
    return 0
