"""``quiztui panel``: vet a quiz with several judges; Dawid–Skene estimates each judge without
gold labels."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from quiztui.assemble.panel import member_config
from quiztui.cli._args import Parents, answers_arguments, help_for, quiz_arguments
from quiztui.cli._quiz import load_input
from quiztui.cli.flags import Number
from quiztui.cli.running import run_to_end
from quiztui.config import Config
from quiztui.core import json_text
from quiztui.report.text import text_table


def register(sub: Any, parents: Parents) -> None:
    common, judge = parents.common, parents.judge
    panel = sub.add_parser(
        "panel",
        parents=[common, judge],
        help=help_for("panel"),
    )
    panel.set_defaults(handler=cmd_panel)
    quiz_arguments(panel)
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
        action=Number,
        ge=2,
        le=100,
        default=0,
        help="instead of --member: this many repeated samples of the configured judge",
    )
    panel.add_argument(
        "--temperature",
        action=Number,
        key="judge.temperature",
        help="sampling temperature of the members (default: the config's, 0.7 for --samples)",
    )
    panel.add_argument(
        "--fit",
        choices=("difficulty", "structured", "dawid-skene"),
        default="difficulty",
        help="the panel fit: difficulty (the default: judges that fail together on hard"
        " questions and gather on one distractor; the share of wrong keys held at its default),"
        " structured (independent judges, one correct option per question; --save-profiles)"
        " or dawid-skene (one independent bit per assertion, for quizzes without a single key)",
    )
    panel.add_argument(
        "--save-profiles",
        action="store_true",
        help="keep each judge's fitted rates as its judge profile (with --fit structured, when usable):"
        " a later vet with that judge alone uses them, labelled 'panel fit'",
    )
    answers_arguments(panel, panel=True)
    panel.add_argument(
        "--format",
        choices=("text", "json", "md"),
        default="text",
        help="report format (on stdout, or in -o's file)",
    )
    panel.add_argument("-o", "--output", type=Path, help="write the panel report to this file")


def panel_configs(config: Config, args: argparse.Namespace) -> list[Config]:
    from quiztui.errors import ConfigError

    if args.member and args.samples:
        raise ConfigError("use either --member (different judges) or --samples, not both")
    if args.samples:
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


# the lines of a panel report that say its fit is not to be used: red on a terminal
PANEL_ALERTS = ("NOT USABLE", "The posteriors below use the uncalibrated rates")


def panel_text(summary: Any, fmt: str, finished: Any = None) -> str:
    """The panel report: judges, agreement, disagreements (text, Markdown or JSON); with
    ``finished`` (``--save-profiles``) the JSON also lists what was saved."""
    from quiztui.core.wrong_keys import wrong_keys_text
    from quiztui.report.writers import md_cell

    if fmt == "json":
        body = panel_dict(summary)
        if finished is not None and (finished.profiles or finished.not_saved):
            body["saved_profiles"] = [
                {"id": p.id, "model": p.model, "tpr": p.tpr, "tnr": p.tnr}
                for p in finished.profiles
            ]
            body["not_saved"] = list(finished.not_saved)
        return json_text.dumps(body, indent=2, ensure_ascii=False) + "\n"
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    judges = [
        {
            "#": str(i + 1),
            "judge": e.label,
            "rates": panel_rates(e, summary.model),
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
    if summary.model == "difficulty":
        out.append(
            f"Panel fit: judges that fail together on hard questions: expected wrong keys"
            f" {summary.expected_wrong:.1f} of {len(summary.questions)};"
            f" share of wrong keys {1 - summary.key_right:.1%}, {summary.wrong_share_source};"
            f" {summary.em_iterations} EM iterations"
            + ("" if summary.em_converged else " (NOT converged)")
        )
    elif summary.model == "structured":
        out.append(
            f"Panel fit: structured (one correct option per question): P(key right)"
            f" {summary.key_right:.3f}, {summary.em_iterations} EM iterations,"
            f" log-likelihood {summary.log_likelihood:.1f}"
            + ("" if summary.em_converged else " (NOT converged)")
        )
    else:
        out.append(
            f"Dawid–Skene: prevalence of true assertions {summary.prevalence:.3f},"
            f" {summary.em_iterations} EM iterations"
            + ("" if summary.em_converged else " (NOT converged)")
        )
    for problem in summary.problems:
        out.append(f"{PANEL_ALERTS[0]} as a judge profile: {problem}")
    if summary.problems:
        out.append(f"{PANEL_ALERTS[1]}, not this fit's.")
    out.append(f"Wrong keys: {wrong_keys_text(panel_wrong_keys(summary))}")
    out.append(
        f"Fleiss' κ {_kappa(summary.fleiss)}; Cohen's κ: "
        + ", ".join(f"{a + 1}–{b + 1} {_kappa(k)}" for a, b, k in summary.cohen)
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


def panel_wrong_keys(summary: Any) -> Any:
    """The expected number of wrong keys from the panel's per-question confidence
    (core/wrong_keys), with its 95 % interval."""
    from quiztui.core.wrong_keys import wrong_keys_of

    return wrong_keys_of([q.confidence for q in summary.questions])


def _kappa(value: float) -> str:
    """κ, or why there is none: with no variation in the verdicts chance agreement is 1."""
    return "undefined (the verdicts do not vary)" if math.isnan(value) else f"{value:.3f}"


def panel_rates(estimate: Any, model: str) -> str:
    """A judge's fitted rates in the words every face uses (core/figures.judge_rates_text)."""
    from quiztui.core.figures import PANEL_FIT, judge_rates_text

    return judge_rates_text(
        estimate.tpr, estimate.tnr, estimate.tpr_ci, estimate.tnr_ci, f"{PANEL_FIT} ({model})"
    )


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
        "model": summary.model,
        "log_likelihood": summary.log_likelihood,
        "key_right": summary.key_right,
        "wrong_share_source": summary.wrong_share_source,
        "expected_wrong": summary.expected_wrong,
        "usable": summary.usable,
        "prior": summary.prior,
        "expected_wrong_keys": panel_wrong_keys(summary).to_dict(),
        "problems": list(summary.problems),
        "fleiss_kappa": summary.fleiss,
        "cohen_kappa": [{"a": a, "b": b, "kappa": k} for a, b, k in summary.cohen],
        "judges": [
            {
                "label": e.label,
                "run_id": e.run_id,
                "tpr": e.tpr,
                "tnr": e.tnr,
                "tpr_ci": None if e.tpr_ci is None else list(e.tpr_ci),
                "tnr_ci": None if e.tnr_ci is None else list(e.tnr_ci),
                "rates": panel_rates(e, summary.model),
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
                "interval": None if q.interval is None else list(q.interval),
                "suggested_option": q.suggested_option,
                "suggested_p": q.suggested_p,
                "verdicts": [list(v) for v in q.verdicts],
                "p_true": list(q.p_true),
                "disagreement": q.disagreement,
            }
            for q in summary.questions
        ],
    }


async def _run_panel(
    configs: list[Config], quiz: Any, store: Any, model: str, save_profiles: bool = False
) -> Any:
    from quiztui.assemble.panel import panel_run

    return await _drive_panel(panel_run(configs, quiz, store, model, save_profiles=save_profiles))


async def _drive_panel(starting: Any) -> Any:
    """Run a panel (``panel_run`` or ``recorded_panel_run``) to its end, each member's end on
    stderr; the PanelFinished event."""
    from quiztui.pipeline.events import RunFinished
    from quiztui.pipeline.panel import PanelFinished, PanelMemberEvent

    async with starting as run:
        for i, p in enumerate(run.providers):
            print(f"quiztui: panel judge {i + 1}: {p.label}", file=sys.stderr)
        async for event in run.events():
            if isinstance(event, PanelMemberEvent) and isinstance(event.event, RunFinished):
                s = event.event.summary
                print(
                    f"quiztui: judge {event.judge + 1} finished run {s.run_id}: {s.judged} judged,"
                    f" {s.unjudged} unjudged, {s.requests} requests",
                    file=sys.stderr,
                )
            elif isinstance(event, PanelFinished):
                return event
    return None


def cmd_panel(config: Config, args: argparse.Namespace) -> int:
    from quiztui.store import Store

    if args.answers:  # recorded answers: every model in the file a member, no model asked
        from quiztui.assemble.recorded import read_answers, recorded_panel_run
        from quiztui.errors import ConfigError

        if args.member or args.samples:
            raise ConfigError(
                "--answers: the members are the file's models; drop --member/--samples"
            )
        quiz = load_input(config, args)
        answers = read_answers(args.answers, quiz, args.answers_model)
        for line in answers.notes:
            print(f"quiztui: answers: {line}", file=sys.stderr)
        with Store(config.db_path()) as store:
            finished = run_to_end(
                _drive_panel(
                    recorded_panel_run(
                        config, quiz, store, answers, args.fit, save_profiles=args.save_profiles
                    )
                )
            )
        return _panel_report(finished, args)
    configs = panel_configs(config, args)
    quiz = load_input(config, args)
    with Store(config.db_path()) as store:
        finished = run_to_end(_run_panel(configs, quiz, store, args.fit, args.save_profiles))
    return _panel_report(finished, args)


def _panel_report(finished: Any, args: argparse.Namespace) -> int:
    from quiztui.report.writers import write_report

    write_report(
        panel_text(finished.summary, args.format, finished), args.output, alerts=PANEL_ALERTS
    )
    for line in saved_profile_lines(finished):
        print(f"quiztui: {line}", file=sys.stderr)
    return 0


def saved_profile_lines(finished: Any) -> list[str]:
    """What ``--save-profiles`` kept, in the one wording of a profile's rates, and what not."""
    from quiztui.core.figures import judge_rates_text

    lines = []
    for profile in finished.profiles:
        a = profile.accuracy()  # the rates a later vet with this judge scores with, as it says
        rates = judge_rates_text(a.tpr, a.tnr, a.tpr_ci, a.tnr_ci, a.label)
        lines.append(f"saved judge profile #{profile.id} for {profile.model}: {rates}")
    return lines + list(finished.not_saved)
