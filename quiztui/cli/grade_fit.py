"""``grade --benchmark FILE|NAME --fit kfold [--save-calibration NAME]``, ``grade FILE
--calibration NAME|PATH`` and ``grade --calibrations`` (grade's options, as ``estimate.py`` is
vet's): graders fitted on a user's own marks, judged on held-out folds, the fitted calibration
saved by name, listed, and applied to unmarked answers."""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from quiztui.assemble.grade import calibration_embedder
from quiztui.cli.running import run_to_end
from quiztui.config import Config
from quiztui.core import json_text
from quiztui.errors import QuiztuiError
from quiztui.report.writers import write_report


def _marked(config: Config, args: argparse.Namespace) -> Any:
    """The marked answers: the user's file, or a built-in benchmark's train and test pooled."""
    from quiztui.formats.benchmarks import DATASETS, load_benchmark
    from quiztui.formats.marked import MarkedFile, Scale, load_marked, parse_scale

    if args.benchmark in DATASETS:
        from quiztui.cli.grade import benchmark_dir

        if args.columns or args.scale != "0-5":
            raise QuiztuiError("--columns and --scale are for a benchmark FILE, not a built-in")
        bench = load_benchmark(args.benchmark, benchmark_dir(config, args), limit=args.limit)
        items = (*bench.train, *bench.test)
        digest = hashlib.sha256(
            "\n".join(f"{i.human}\t{i.reference}\t{i.candidate}" for i in items).encode()
        ).hexdigest()
        return MarkedFile(bench.name, items, Scale(), {}, digest)
    if args.fit == "split":
        raise QuiztuiError(
            f"--benchmark {args.benchmark}: a file has no train/test split; use --fit kfold"
        )
    path = Path(args.benchmark)
    if not path.exists() and not path.suffix:
        raise QuiztuiError(
            f"--benchmark {args.benchmark}: not a built-in ({', '.join(DATASETS)}) nor a file"
        )
    columns = None
    if args.columns:
        from quiztui.formats.answers import parse_columns

        try:
            columns = parse_columns(args.columns)
        except ValueError as exc:
            raise QuiztuiError(f"--columns: {exc}") from None
    from quiztui.core.quiz import load_report

    skipped: list[str] = []
    strict = bool(args.strict or config.formats.strict)
    marked = load_marked(path, parse_scale(args.scale), columns, strict=strict, skipped=skipped)
    for line in load_report(len(marked.items), skipped):
        print(f"quiztui: {line}", file=sys.stderr)
    return marked


def cmd_kfold(config: Config, args: argparse.Namespace, grader: str) -> int:
    from quiztui.store import Store

    if args.format == "csv" and not args.tui:
        raise QuiztuiError("grade --fit kfold: --format csv is not available (text, md or json)")
    from quiztui.pipeline.grade_fit import NAME_RULE, valid_calibration_name

    if args.save_calibration is not None and not valid_calibration_name(args.save_calibration):
        raise QuiztuiError(
            f"--save-calibration {args.save_calibration!r}: a calibration name is {NAME_RULE}"
            " characters, and not 'none'"
        )
    marked = _marked(config, args)
    graders = [grader, *(g for g in args.also if g != grader)]
    with Store(config.db_path()) as store:
        if args.tui:
            return _tui(config, store, marked, graders, args)
        return run_to_end(_kfold(config, store, marked, graders, args))


def _save_name(marked: Any, args: argparse.Namespace) -> str:
    from quiztui.pipeline.grade_fit import default_calibration_name

    return args.save_calibration or default_calibration_name(marked)


def _replacing(name: str) -> Any:
    """The saved calibration a k-fold run is about to replace (None: the name is new)."""
    from quiztui.assemble.grade import calibrations_dir
    from quiztui.pipeline.grade_fit import saved_calibrations

    return next((c for c in saved_calibrations(calibrations_dir()) if c.name == name), None)


def _tui(config: Config, store: Any, marked: Any, graders: list[str], args: Any) -> int:
    """The Benchmark screen over the same k-fold event stream: the fold table, the best model's
    bracket confusion and its held-out predictions against the marks."""
    from collections.abc import AsyncIterator

    from quiztui.tui.grade_app import GradeApp
    from quiztui.tui.screens.benchmark import BenchmarkScreen

    def start() -> AsyncIterator[Any]:
        return _events(config, store, marked, graders, args)

    home = BenchmarkScreen(
        start,
        dataset=marked.name,
        grader=" + ".join(graders),
        calibration="kfold",
        train=len(marked.items) * len(graders),
        test=0,
        flush_interval=config.ui.flush_interval,
    )
    GradeApp(home, theme_name=config.ui.theme).run()
    return 0


def _events(
    config: Config, store: Any, marked: Any, graders: list[str], args: argparse.Namespace
) -> Any:
    """The k-fold run's events, as both faces of ``grade --fit kfold`` consume them."""
    from quiztui.assemble.grade import kfold_events

    return kfold_events(
        config,
        store,
        marked,
        graders,
        folds=int(args.folds),
        seed=int(args.seed),
        save_name=_save_name(marked, args),
    )


async def _kfold(
    config: Config, store: Any, marked: Any, graders: list[str], args: argparse.Namespace
) -> int:
    from quiztui.pipeline.grade import GradeFinished, GradeStarted, ItemGraded
    from quiztui.pipeline.grade_fit import KFoldScored
    from quiztui.report import grade_fit as report
    from quiztui.report.progress import Progress

    n = len(marked.items)
    labels: list[str] = []
    scored = None
    progress = Progress(sys.stderr, unit="answers", missed="unscored")
    done = unscored = 0
    name = _save_name(marked, args)
    previous = _replacing(name)
    async for event in _events(config, store, marked, graders, args):
        if isinstance(event, GradeStarted):
            labels.append(event.judge_label)
            done = unscored = 0
            print(
                f"benchmark {marked.name}: {n} marked answers · {event.grader} ·"
                f" {event.judge_label}",
                file=sys.stderr,
            )
        elif isinstance(event, ItemGraded):
            done += 1
            unscored += not event.outcome.scored
            progress.update(done - unscored, unscored, n, 0, 0, 0, 0)
        elif isinstance(event, GradeFinished):
            progress.finished(event.summary)
        elif isinstance(event, KFoldScored):
            scored = event
    assert scored is not None
    judge = " + ".join(dict.fromkeys(labels))
    saved = scored.calibration_path
    if args.format == "json":
        text = report.kfold_json(scored.result, scored.scale, judge, saved)
    elif args.format == "md":
        text = report.kfold_markdown(scored.result, scored.scale, judge, saved)
    else:
        text = report.kfold_text(scored.result, scored.scale, judge, saved)
    write_report(text, args.output)
    if saved is not None:
        if previous is not None:
            print(
                f"replaced calibration {name} (was fitted {previous.fitted_date})", file=sys.stderr
            )
        print(
            f"calibration saved: {name} in {saved} (grade unmarked answers with: quiztui grade"
            f" FILE --calibration {name})",
            file=sys.stderr,
        )
    if scored.run_id is not None:
        from quiztui.pipeline.history import load_kfold

        state = load_kfold(store, scored.run_id, replay=False).state  # "" when finished
        print(
            f"stored as run kfold:{scored.run_id}{f', {state}' if state else ''}"
            f" (quiztui runs show kfold:{scored.run_id})",
            file=sys.stderr,
        )
    if scored.stopped:
        from quiztui.cli.grade import NOTHING_SCORED

        # A grader the judge stopped part-way: its rows rest on the answers it did score, and a
        # calibration fitted without it is not what was asked for, so none was saved.
        for grader, why in scored.stopped:
            print(
                f"quiztui: error: grader {grader} stopped part-way ({why}); its unscored answers"
                " are left out of its rows, and no calibration was saved",
                file=sys.stderr,
            )
        return NOTHING_SCORED
    return 0


def list_calibrations(fmt: str) -> int:
    """``grade --calibrations``: the saved calibrations, by name."""
    from quiztui.assemble.grade import calibrations_dir
    from quiztui.pipeline.grade_fit import saved_calibrations
    from quiztui.report.text import text_table

    where = calibrations_dir()
    saved = saved_calibrations(where)
    if fmt == "json":
        body = [
            {
                "name": c.name,
                "path": str(c.path),
                "graders": list(c.graders),
                "model": c.model,
                "scale": [c.scale.lo, c.scale.hi],
                "marks": c.n_marks,
                "fitted_at": c.fitted_at,
                "held_out": c.held_out,
                "problem": c.problem,
            }
            for c in saved
        ]
        print(json_text.dumps(body, indent=2, ensure_ascii=False))
        return 0
    if not saved:
        print(
            f"no saved calibrations in {where}: fit one with quiztui grade --benchmark FILE"
            " --fit kfold"
        )
        return 0
    rows = [
        {
            "name": c.name,
            "grader": " + ".join(c.graders) or "—",
            "model": c.model or "—",
            "scale": str(c.scale) if c.problem is None else "—",
            "marks": str(c.n_marks) if c.problem is None else "—",
            "fitted": c.fitted_date,
            "held-out": c.held_out_text if c.problem is None else f"unreadable: {c.problem}",
        }
        for c in saved
    ]
    print(text_table(rows), end="")
    print(f"in {where}; apply one with: quiztui grade FILE --calibration NAME")
    return 0


def calibrated_report(
    calibration: Any, rows: list[tuple[Any, Any]], summary: Any, label: str, fmt: str
) -> str:
    """The grade report with each answer's calibrated score on the calibration's scale."""
    embedder = calibration_embedder(calibration)
    values = calibration.apply([i for i, _ in rows], [o.raw for _, o in rows], embedder)
    scale = calibration.scale
    head = f"calibrated ({scale})"
    if fmt == "json":
        from quiztui.report.grades import grades_json

        body = json.loads(grades_json(rows, summary, label))
        body["calibration"] = {
            "name": calibration.name,
            "file": calibration.path,
            "grader": calibration.grader,
            "model": calibration.model.name,
            "scale": [scale.lo, scale.hi],
        }
        for entry, value in zip(body["items"], values, strict=True):
            entry["calibrated"] = value
        return json_text.dumps(body, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        from quiztui.report.grades import grades_csv

        table = list(csv.reader(io.StringIO(grades_csv(rows))))
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow([*table[0], "calibrated"])
        for line, value in zip(table[1:], values, strict=True):
            w.writerow([*line, "" if value is None else f"{value:.4g}"])
        return out.getvalue()
    from quiztui.report.grades import summary_lines
    from quiztui.report.text import text_table

    lines = [
        {
            "id": item.id,
            "score": "—" if o.raw is None else f"{o.raw:.3g}",
            head: "—" if v is None else f"{v:.2f}",
            "candidate": _clip(item.candidate, 50),
        }
        for (item, o), v in zip(rows, values, strict=True)
    ]
    note = f"{calibration.label}: {calibration.path}"
    if fmt == "md":
        from quiztui.report.writers import md_cell

        heads = list(lines[0])
        return (
            "\n".join(
                [
                    f"# Grade report ({md_cell(label)})",
                    "",
                    md_cell(note),
                    "",
                    "| " + " | ".join(md_cell(h) for h in heads) + " |",
                    "|" + "---|" * len(heads),
                    *("| " + " | ".join(md_cell(r[h]) for h in heads) + " |" for r in lines),
                ]
            )
            + "\n"
        )
    out_text = note + "\n\n" + text_table(lines)
    if summary is not None:
        out_text += "\n" + "\n".join(summary_lines(summary)) + "\n"
    return out_text


def _clip(text: str, n: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"
