"""``quiztui calibrate`` (measure a judge on a gold set) and ``quiztui profiles`` (list them)."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from quiztui.config import Config
from quiztui.core.calibration import JudgeProfile


def add_parsers(sub: Any, common: argparse.ArgumentParser, judge: argparse.ArgumentParser) -> None:
    cal = sub.add_parser(
        "calibrate",
        parents=[common, judge],
        help="measure the judge on a gold set and store its profile (TPR/TNR with 95%% intervals)",
    )
    cal.add_argument(
        "gold",
        nargs="?",
        type=Path,
        help="gold set: a quiz with trusted keys, or a labelled statement set (.jsonl); default:"
        " Open Trivia DB from ../shared/data/opentdb, else the bundled sample",
    )
    cal.add_argument("--n", type=int, help="sample this many gold questions (default: 250)")
    cal.add_argument("--sample-seed", type=int, default=0, help="seed of the --n sample")
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
    cal.add_argument("--interval", choices=("wilson", "beta"), default="wilson")
    cal.add_argument("--format", choices=("text", "json"), default="text")

    prof = sub.add_parser("profiles", parents=[common], help="list stored judge profiles")
    prof.add_argument("--db", type=Path)
    prof.add_argument("--format", choices=("text", "json"), default="text")


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


def text_table(rows: list[dict[str, str]]) -> str:
    """Plain aligned columns (the headless output is read in terminals and CI logs)."""
    if not rows:
        return ""
    heads = list(rows[0])
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h in heads}
    lines = ["  ".join(h.ljust(widths[h]) for h in heads).rstrip()]
    lines.append("  ".join("-" * widths[h] for h in heads))
    lines += ["  ".join(r[h].ljust(widths[h]) for h in heads).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def _price(config: Config, model: str):  # type: ignore[no-untyped-def]
    """The judge model's [cost] price (its own entry, else the default); None when unknown."""
    from quiztui.pipeline.calibrate import Price

    price = config.cost.price_for(model)
    return None if price is None else Price(price.input_per_mtok, price.output_per_mtok)


async def calibration_events(config: Config, store: Any, request: Any) -> AsyncIterator[Any]:
    """One calibration (or a modes comparison): SetupStarted, the vet events, ProfileMeasured.

    Shared by ``quiztui calibrate`` and the TUI's Calibrate screen. Bad gold files raise
    QuizFormatError before anything is sent.
    """
    from quiztui.cli import vet_settings
    from quiztui.locations import config_dir
    from quiztui.pipeline.calibrate import (
        MODE_SETUPS,
        CalibrationRun,
        SetupStarted,
        default_gold_path,
        load_gold,
    )
    from quiztui.pipeline.prompts import load_prompt, prompt_for_mode
    from quiztui.providers.factory import build_provider

    gold = load_gold(request.gold_path or default_gold_path(), request.n, request.sample_seed)
    setups = MODE_SETUPS if request.compare_modes else ((request.mode, request.batch_size),)
    provider = build_provider(config, gold.quiz, truth=gold.truth_by_text())
    try:
        for index, (mode, batch_size) in enumerate(setups):
            prompt = load_prompt(prompt_for_mode(mode), config_dir() / "prompts")
            settings = replace(vet_settings(config), mode=mode, batch_size=batch_size)
            yield SetupStarted(index, len(setups), mode, batch_size, gold.name, provider.label)
            run = CalibrationRun(
                gold,
                provider,
                store,
                prompt,
                settings,
                _price(config, provider.model),
                request.interval_method,
            )
            async for event in run.events():
                yield event
    finally:
        await provider.aclose()


def calibration_starter(config: Config, store: Any) -> Any:
    """For the TUI: ``start(request)`` gives a fresh calibration event stream."""

    def start(request: Any) -> AsyncIterator[Any]:
        return calibration_events(config, store, request)

    return start


async def _calibrate(config: Config, store: Any, request: Any) -> list[JudgeProfile]:
    from quiztui.cli import Progress
    from quiztui.pipeline.calibrate import ProfileMeasured, SetupStarted
    from quiztui.pipeline.events import UsageUpdated

    profiles: list[JudgeProfile] = []
    progress = Progress(sys.stderr)
    async for event in calibration_events(config, store, request):
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
        profiles = asyncio.run(_calibrate(config, store, request))
    if args.format == "json":
        print(json.dumps([profile_dict(p) for p in profiles], indent=2))
    else:
        print(f"gold set: {profiles[0].gold}")
        print(text_table([profile_row(p) for p in profiles]), end="")
        if len(profiles) > 1:
            print(_cheapest_note(profiles))
    return 0


def _cheapest_note(profiles: list[JudgeProfile]) -> str:
    """Which set-up is cheapest among those whose accuracy is within 1 point of the best."""
    scored = [p for p in profiles if not math.isnan(p.confusion.accuracy)]
    if not scored:
        return "no set-up produced verdicts"
    best = max(p.confusion.accuracy for p in scored)
    good = [p for p in scored if p.confusion.accuracy >= best - 0.01]
    pick = min(good, key=lambda p: (p.tokens_per_question, p.wall_time))
    setup = "per-question mode" if pick.mode == "question" else f"batch size {pick.batch_size}"
    return (
        f"cheapest set-up within 1 point of the best accuracy ({best:.3f}): {setup}"
        f" — accuracy {pick.confusion.accuracy:.3f}, {pick.tokens_per_question:.0f} tokens/question"
    )


def cmd_profiles(config: Config, args: argparse.Namespace) -> int:
    from quiztui.store import Store

    with Store(config.db_path()) as store:
        profiles = store.profiles.list()
    if args.format == "json":
        print(json.dumps([profile_dict(p) for p in profiles], indent=2))
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


# panel --------------------------------------------------------------------------------------


def add_panel_parser(
    sub: Any, common: argparse.ArgumentParser, judge: argparse.ArgumentParser
) -> None:
    panel = sub.add_parser(
        "panel",
        parents=[common, judge],
        help="vet a quiz with several judges; Dawid–Skene estimates each judge without gold labels",
    )
    panel.add_argument("quiz", type=Path, help="quiz file")
    panel.add_argument(
        "--member",
        action="append",
        default=[],
        metavar="SPEC",
        help="a panel judge: MODEL, MODEL@BASE_URL, or simulated:tpr=0.9,tnr=0.85,seed=1"
        " (repeat for each judge)",
    )
    panel.add_argument(
        "--samples",
        type=int,
        default=0,
        help="instead of --member: this many repeated samples of the configured judge",
    )
    panel.add_argument(
        "--temperature",
        type=float,
        help="sampling temperature of the members (default: the config's, 0.7 for --samples)",
    )
    panel.add_argument("--format", choices=("text", "json", "md"), default="text")
    panel.add_argument("-o", "--output", type=Path, help="write the panel report to this file")


def member_config(config: Config, spec: str) -> Config:
    """A copy of ``config`` whose judge is the one ``spec`` names."""
    from quiztui.errors import ConfigError

    judge = config.judge.model_copy()
    sim = config.simulated.model_copy()
    if spec.startswith("simulated"):
        judge.provider = "simulated"
        _, _, params = spec.partition(":")
        for item in filter(None, params.split(",")):
            key, _, value = item.partition("=")
            if key.strip() not in ("tpr", "tnr", "seed"):
                raise ConfigError(f"--member {spec}: unknown simulated parameter '{key}'")
            try:
                setattr(sim, key.strip(), int(value) if key.strip() == "seed" else float(value))
            except ValueError as exc:
                raise ConfigError(f"--member {spec}: {key}: {exc}") from None
    else:
        model, _, base_url = spec.partition("@")
        if not model:
            raise ConfigError(f"--member {spec}: no model name")
        judge.provider = "openai-compat"
        judge.model = model
        if base_url:
            judge.base_url = base_url
    return config.model_copy(update={"judge": judge, "simulated": sim})


def panel_configs(config: Config, args: argparse.Namespace) -> list[Config]:
    from quiztui.errors import ConfigError

    if args.member and args.samples:
        raise ConfigError("use either --member (different judges) or --samples, not both")
    if args.samples:
        if args.samples < 2:
            raise ConfigError("--samples: a panel needs at least 2 samples")
        temperature = args.temperature if args.temperature is not None else 0.7
        out = []
        for i in range(args.samples):
            judge = config.judge.model_copy(update={"temperature": temperature})
            sim = config.simulated.model_copy(update={"seed": config.simulated.seed + i})
            out.append(config.model_copy(update={"judge": judge, "simulated": sim}))
        return out
    if len(args.member) < 2:
        raise ConfigError("a panel needs at least two judges: --member SPEC twice, or --samples N")
    out = [member_config(config, spec) for spec in args.member]
    if args.temperature is not None:
        out = [
            c.model_copy(
                update={"judge": c.judge.model_copy(update={"temperature": args.temperature})}
            )
            for c in out
        ]
    return out


def panel_text(summary: Any, fmt: str) -> str:
    """The panel report: judges, agreement, disagreements (text, Markdown or JSON)."""
    from quiztui.report.writers import md_cell

    if fmt == "json":
        return json.dumps(panel_dict(summary), indent=2, ensure_ascii=False) + "\n"
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    judges = [
        {
            "#": str(i + 1),
            "judge": e.label,
            "TPR (DS)": f"{e.tpr:.3f}",
            "TNR (DS)": f"{e.tnr:.3f}",
            "judged": str(e.judged),
            "said true": str(e.said_true),
            "run": str(e.run_id),
        }
        for i, e in enumerate(summary.judges)
    ]
    out = []
    md = fmt == "md"
    cell = md_cell if md else (lambda s: " ".join(str(s).split()))
    if md:
        out.append(f"# quiztui panel: {md_cell(summary.quiz_title)}\n")
    out.append(
        f"Dawid–Skene: prevalence of true assertions {summary.prevalence:.3f},"
        f" {summary.em_iterations} EM iterations"
        + ("" if summary.em_converged else " (NOT converged)")
    )
    out.append(
        f"Fleiss' κ {summary.fleiss:.3f}; Cohen's κ: "
        + ", ".join(f"{a + 1}–{b + 1} {k:.3f}" for a, b, k in summary.cohen)
    )
    out.append("")
    out.append(_md_table(judges) if md else text_table(judges))
    dis = summary.disagreements
    out.append(f"{len(dis)} of {len(summary.questions)} questions with disagreeing verdicts")
    rows = []
    for q in sorted(dis, key=lambda q: q.confidence):
        verdicts = " | ".join(
            "".join("?" if v is None else ("T" if v else "F") for v in judge)
            for judge in q.verdicts
        )
        suggestion = (
            f"{letters[q.suggested_option]} ({q.suggested_p:.2f})"
            if q.suggested_option is not None
            else ""
        )
        rows.append(
            {
                "question": q.question_id,
                "text": cell(q.text)[:60],
                "key": letters[q.key],
                "verdicts A.. per judge": verdicts,
                "confidence": f"{q.confidence:.3f}",
                "panel suggests": suggestion,
            }
        )
    if rows:
        out.append("")
        out.append(_md_table(rows) if md else text_table(rows))
    return "\n".join(out).rstrip("\n") + "\n"


def _md_table(rows: list[dict[str, str]]) -> str:
    heads = list(rows[0])
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(r[h] for h in heads) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def panel_dict(summary: Any) -> dict[str, Any]:
    return {
        "quiz_title": summary.quiz_title,
        "prevalence": summary.prevalence,
        "em_iterations": summary.em_iterations,
        "em_converged": summary.em_converged,
        "fleiss_kappa": summary.fleiss,
        "cohen_kappa": [{"a": a, "b": b, "kappa": k} for a, b, k in summary.cohen],
        "judges": [
            {
                "label": e.label,
                "run_id": e.run_id,
                "tpr": e.tpr,
                "tnr": e.tnr,
                "judged": e.judged,
                "said_true": e.said_true,
            }
            for e in summary.judges
        ],
        "questions": [
            {
                "question_id": q.question_id,
                "text": q.text,
                "options": list(q.options),
                "key": q.key,
                "confidence": q.confidence,
                "suggested_option": q.suggested_option,
                "suggested_p": q.suggested_p,
                "verdicts": [list(v) for v in q.verdicts],
                "p_true": list(q.p_true),
                "disagreement": q.disagreement,
            }
            for q in summary.questions
        ],
    }


async def _run_panel(configs: list[Config], quiz: Any, store: Any) -> Any:
    from quiztui.cli import vet_settings
    from quiztui.locations import config_dir
    from quiztui.pipeline.events import RunFinished
    from quiztui.pipeline.panel import PanelFinished, PanelMemberEvent, PanelRun
    from quiztui.pipeline.prompts import load_prompt, prompt_for_mode
    from quiztui.providers.factory import build_provider

    providers = [build_provider(c, quiz) for c in configs]
    try:
        settings = replace(vet_settings(configs[0]), use_cache=False)
        prompt = load_prompt(prompt_for_mode(settings.mode), config_dir() / "prompts")
        for i, p in enumerate(providers):
            print(f"quiztui: panel judge {i + 1}: {p.label}", file=sys.stderr)
        run = PanelRun(quiz, providers, store, prompt, settings, prior=configs[0].vet.prior)
        async for event in run.events():
            if isinstance(event, PanelMemberEvent) and isinstance(event.event, RunFinished):
                s = event.event.summary
                print(
                    f"quiztui: judge {event.judge + 1} finished run {s.run_id}: {s.judged} judged,"
                    f" {s.unjudged} unjudged, {s.requests} requests",
                    file=sys.stderr,
                )
            elif isinstance(event, PanelFinished):
                return event.summary
        return None
    finally:
        for p in providers:
            await p.aclose()


def cmd_panel(config: Config, args: argparse.Namespace) -> int:
    from quiztui.formats import load_quiz
    from quiztui.store import Store

    configs = panel_configs(config, args)
    quiz = load_quiz(args.quiz)
    with Store(config.db_path()) as store:
        summary = asyncio.run(_run_panel(configs, quiz, store))
    report = panel_text(summary, args.format)
    if args.output:
        args.output.write_text(report, encoding="utf-8")
        print(f"quiztui: panel report written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(report)
    return 0
