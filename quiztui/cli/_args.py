"""What every subcommand's parser shares: the command table, the parent parsers, the shortcut.

Kept light (argparse and pathlib only) so ``quiztui --version`` and ``quiztui --help`` import no
subcommand module: a subcommand's module is imported only when that subcommand runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from quiztui.cli.flags import Number
from quiztui.core.records import record

# name -> (module under quiztui.cli that registers it, one-line help). Order is the help's order.
COMMANDS: dict[str, tuple[str, str]] = {
    "vet": (
        "vet",
        "judge every option of every question: badges, confidence, a report (--no-tui: headless)",
    ),
    "config": ("config", "write a commented default configuration file, or show the one in force"),
    "locate": ("config", "print where quiztui keeps a file"),
    "runs": ("runs", "run history: list, show, compare"),
    "calibrate": (
        "calibrate",
        "measure the judge on a gold set and store its profile (TPR/TNR with 95%% intervals)",
    ),
    "profiles": ("calibrate", "list stored judge profiles"),
    "panel": (
        "panel",
        "vet a quiz with several judges; Dawid–Skene estimates each judge without gold labels",
    ),
    "grade": ("grade", "grade candidate answers against references, or benchmark a grader"),
    "rate": (
        "review",
        "rate each question 1-5 on grammaticality, appropriateness, relevance, novelty, complexity",
    ),
    "generate": ("generate", "question-answer pairs from a document"),
    "robustness": (
        "robustness",
        "paraphrase each question v ways, answer every form apart, measure agreement",
    ),
    "convert": (
        "convert",
        "convert a quiz between Quizaic, Open Trivia DB, CSV, GIFT, Aiken and Moodle XML",
    ),
    "lint": ("lint", "find item-writing flaws offline (no model): duplicates, giveaways, key bias"),
    "report": ("report", "export a stored vet run's report (md, json, csv, html, junit)"),
    "apply-fixes": (
        "apply_fixes",
        "write the review desk's fixed keys into a run's quiz file (a .bak beside it)",
    ),
}

# Old names that still work, hidden from the help: `quiztui review` was the quality ratings, a name
# the review desk (the TUI's y/o/t/d keys, `apply-fixes`) also answers to.
DEPRECATED: dict[str, str] = {"review": "rate"}

# `quiztui --help` lists the commands under these headings, in this order; every command once.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Start here", ("vet", "lint", "convert")),
    ("Judges", ("calibrate", "profiles", "panel")),
    ("Answers", ("grade",)),
    ("Question quality", ("rate", "robustness", "generate")),
    ("History and reports", ("runs", "report", "apply-fixes")),
    ("Set-up", ("config", "locate")),
)
SHORTCUT = ("quiztui QUIZ", "open QUIZ in the terminal app: judge it live, review by keyboard")
FIRST_STEPS = (
    "New here? Open the sample quiz with `quiztui sample_quizzes/planted_errors.json` (from a"
    " checkout; no model needed: the SIMULATED judge answers), then your own: `quiztui QUIZ`."
    " `quiztui COMMAND --help` says more about each command."
)


def grouped_commands(width: int = 80) -> str:
    """The commands under their headings, each with its one-line help, wrapped to ``width``."""
    import textwrap

    column = 2 + max(len(n) for n in (*COMMANDS, SHORTCUT[0])) + 2
    lines: list[str] = []
    for heading, names in GROUPS:
        lines.append(f"{heading}:")
        rows = [SHORTCUT] if heading == "Start here" else []
        rows += [(name, COMMANDS[name][1].replace("%%", "%")) for name in names]
        for name, text in rows:
            wrapped = textwrap.wrap(text, width - column) or [""]
            lines.append(f"  {name}".ljust(column) + wrapped[0])
            lines.extend(" " * column + more for more in wrapped[1:])
        lines.append("")
    lines.extend(textwrap.wrap(FIRST_STEPS, width))
    return "\n".join(lines)


STRICT_HELP = (
    "stop at the quiz file's first bad item (exit 2) instead of skipping it"
    " ([formats] strict = true)"
)
COLUMNS_HELP = (
    "which CSV column or JSON Lines field holds what, for names quiztui does not know:"
    " question=Stem,answer=Key,options=Opt1+Opt2+Opt3,category=Unit"
)


def quiz_arguments(p: argparse.ArgumentParser) -> None:
    """The quiz file and how to read it: ``quiz``, ``--strict``, ``--columns``."""
    p.add_argument("quiz", type=Path, help="quiz file (any input format; see quiztui vet --help)")
    p.add_argument("--strict", action="store_true", help=STRICT_HELP)
    p.add_argument("--columns", metavar="ROLE=NAME,...", help=COLUMNS_HELP)


ANSWERS_HELP = (
    "score the quiz from answers models already gave, asking no model: a CSV/TSV with a"
    " question column, its options (a choices list or A, B, … columns) and one column per model"
    " (a letter, 0-based index or option text), or lm-evaluation-harness samples_*.jsonl;"
    " files or folders"
)


def answers_arguments(p: argparse.ArgumentParser, *, panel: bool) -> None:
    """``--answers FILE…`` and ``--answers-model NAME`` (repeatable for a panel)."""
    p.add_argument(
        "--answers", nargs="+", action="extend", type=Path, metavar="FILE", help=ANSWERS_HELP
    )
    if panel:
        p.add_argument(
            "--answers-model",
            action="append",
            default=[],
            metavar="NAME",
            help="with --answers: only this model's answers (repeat for each; default: every"
            " model in the file)",
        )
    else:
        p.add_argument(
            "--answers-model",
            metavar="NAME",
            help="with --answers: the model (column, or harness folder) whose answers judge",
        )


def help_for(command: str) -> str:
    return COMMANDS[command][1]


@record(frozen=True)
class Parents:
    """Parent parsers: ``common`` (--config) for every subcommand, ``judge`` for the judged ones."""

    common: argparse.ArgumentParser
    judge: argparse.ArgumentParser


def parents() -> Parents:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, default=argparse.SUPPRESS, help="config file")

    judge = argparse.ArgumentParser(add_help=False)
    judge.add_argument(
        "--judge",
        choices=("auto", "simulated", "openai-compat", "anthropic", "gemini"),
        help="judge provider",
    )
    judge.add_argument("--model", help="judge model")
    judge.add_argument("--base-url", help="the judge API's base URL")
    judge.add_argument(
        "--batch-size", action=Number, key="vet.batch_size", help="assertions per request"
    )
    judge.add_argument(
        "--concurrency", action=Number, key="judge.concurrency", help="requests in flight"
    )
    judge.add_argument("--db", type=Path, help="SQLite run store")
    judge.add_argument(
        "--sim-latency",
        action=Number,
        key="simulated.latency",
        help="simulated judge: seconds per request",
    )
    return Parents(common, judge)


def first_positional(argv: Sequence[str]) -> int | None:
    """Index of the first argument that is neither an option nor an option's value."""
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--config":
            skip = True
        elif not arg.startswith("-"):
            return i
    return None
