"""``quiztui generate DOC --subject S``: question–answer pairs from a document (seed 001).

Progress and the summary go to stderr; the path of the file written goes to stdout. Exit codes:
0 every chunk (and every asked-for stage) succeeded; 1 the file was written but some chunks or
stage items failed (each named on stderr); 2 bad input or config, or no pair at all.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from quiztui.cli._args import Parents, help_for
from quiztui.cli.flags import Number
from quiztui.cli.running import run_to_end
from quiztui.config import Config
from quiztui.errors import QuiztuiError

DEFAULT_BATCH = 20
_LIST_LIMIT = 20  # fuzzy/flagged contexts listed in the summary


def register(sub: Any, parents: Parents) -> None:
    common, judge = parents.common, parents.judge
    p = sub.add_parser(
        "generate",
        parents=[common, judge],
        help=help_for("generate"),
        description="Generate question-answer pairs from a PDF or text/Markdown document with the "
        "judge model, check every Context against the document, and write a "
        "JSON file that `quiztui grade` reads (and `quiztui vet` too, with --distractors). "
        "--batch-size sets the pairs per rephrase/candidates/distractors request (default 20), "
        "--concurrency the requests in flight.",
        epilog="Exit codes: 0 all chunks and stages succeeded; 1 the file was written but some "
        "chunks or stage items failed (named on stderr); 2 bad input or config, or no pairs.",
    )
    p.set_defaults(handler=cmd_generate)
    p.add_argument("document", type=Path, help="a PDF, or a text/Markdown file")
    p.add_argument("--subject", required=True, help='the subject matter, e.g. "organic chemistry"')
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        help="output JSON file (default: DOC stem + .qa.json beside it)",
    )
    p.add_argument("--rephrase", action="store_true", help="also rephrase every pair")
    p.add_argument(
        "--candidates",
        action="store_true",
        help='also ask for sample candidate answers ("I don\'t know" allowed)',
    )
    p.add_argument(
        "--distractors",
        action="store_true",
        help="also ask for 3 wrong options per answer: multiple-choice items `vet` can read",
    )
    p.add_argument(
        "--chunk-chars",
        action=Number,
        ge=200,
        le=1_000_000,
        default=6000,
        metavar="N",
        help="characters of the document per request (default 6000)",
    )
    p.add_argument(
        "--min-ratio",
        action=Number,
        kind=float,
        gt=0.0,
        le=1.0,
        default=0.9,
        metavar="R",
        help="similarity at which a Context that is not verbatim still counts as located"
        " (default 0.9); below it the Context is flagged",
    )


def default_output(document: Path) -> Path:
    return document.with_name(f"{document.stem}.qa.json")


class _Progress:
    """Chunk progress on stderr: redrawn in place on a terminal, every 10 % otherwise."""

    def __init__(self, stream: TextIO, chunks: int) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.chunks = chunks
        self.done = self.failed = self.pairs = self.retries = 0
        self.last_decile = -1
        self.start = time.monotonic()

    def chunk(self, pairs: int = 0, failed: bool = False) -> None:
        self.done += 1
        self.pairs += pairs
        self.failed += failed
        frac = self.done / self.chunks if self.chunks else 1.0
        line = (
            f"chunks {self.done}/{self.chunks} ({frac:.0%}) · pairs {self.pairs}"
            f" · failed {self.failed} · retries {self.retries}"
            f" · {time.monotonic() - self.start:.1f}s"
        )
        if self.tty:
            end = "\n" if self.done == self.chunks else ""
            self.stream.write(f"\r{line}\x1b[K{end}")
        elif int(frac * 10) > self.last_decile:
            self.last_decile = int(frac * 10)
            self.stream.write(line + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        self.stream.write(("\r\x1b[K" if self.tty else "") + text + "\n")
        self.stream.flush()


class _Recorder:
    """The run in the store (``quiztui runs`` lists it): created when it starts, each located
    pair, and how it ended — finished, failed, or cancelled when the process was interrupted."""

    def __init__(self, store: Any, output: Path, model: str) -> None:
        self.store, self.output, self.model = store, output, model
        self.run_id: int | None = None

    def started(self, event: Any) -> None:
        self.run_id = self.store.generate.create_run(
            document=str(event.document),
            subject=event.subject,
            output=str(self.output),
            judge_label=event.judge_label,
            model=self.model,
            simulated=event.simulated,
        )

    def pair(self, pair: Any) -> None:
        if self.run_id is not None:
            self.store.generate.record_pair(
                self.run_id, pair.number, pair.question, pair.answer, pair.location.status
            )

    def ended(self, status: str, summary: Any = None) -> None:
        if self.run_id is None:
            return
        counts = None
        if summary is not None:
            counts = {
                "pairs": len(summary.pairs),
                "chunks": summary.chunks,
                "failed_chunks": len(summary.failed_chunks),
                "requests": summary.requests,
                "retries": summary.retries,
                "tokens_in": summary.tokens_in,
                "tokens_out": summary.tokens_out,
                "seconds": summary.elapsed,
            }
        self.store.generate.finish_run(self.run_id, status, counts)
        self.run_id = None


async def _run(run: Any, provider: Any, err: TextIO, recorder: _Recorder | None = None) -> Any:
    from quiztui.pipeline.generate import (
        ChunkFailed,
        ChunkGenerated,
        GenerateFailed,
        GenerateFinished,
        GenerateStarted,
        PairLocated,
        RequestRetried,
    )

    progress: _Progress | None = None
    summary = None
    status = "cancelled"  # what a run that stops without its last event was
    try:
        async for event in run.events():
            if recorder is not None:
                if isinstance(event, GenerateStarted):
                    recorder.started(event)
                elif isinstance(event, PairLocated):
                    recorder.pair(event.pair)
            if isinstance(event, GenerateStarted):
                pages = f"{event.pages} pages, " if event.pages else ""
                print(
                    f"quiztui: {event.document}: {pages}{event.chars} characters"
                    f" in {event.chunks} chunk{'s' if event.chunks != 1 else ''}",
                    file=err,
                )
                progress = _Progress(err, event.chunks)
            elif isinstance(event, ChunkGenerated) and progress is not None:
                progress.chunk(event.pairs)
            elif isinstance(event, ChunkFailed) and progress is not None:
                progress.note(f"quiztui: {_chunk_label(event)} failed: {event.reason}")
                progress.chunk(failed=True)
            elif isinstance(event, RequestRetried) and progress is not None:
                progress.retries += 1
            elif isinstance(event, GenerateFailed):
                status = "failed"
                raise QuiztuiError(f"generate: {event.reason}")
            elif isinstance(event, GenerateFinished):
                summary = event.summary
                status = "finished" if summary.pairs else "failed"
    except Exception:
        status = "failed" if status == "cancelled" else status
        raise
    finally:
        if recorder is not None:
            recorder.ended(status, summary)
        await provider.aclose()
    return summary


def _chunk_label(failed: Any) -> str:
    where = f"chars {failed.start}-{failed.end}"
    if failed.pages is not None:
        first, last = failed.pages
        where = (f"page {first}" if first == last else f"pages {first}-{last}") + f", {where}"
    return f"chunk {failed.chunk_no} ({where})"


def _quote(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 1] + "…", ensure_ascii=False)


def _where(location: Any) -> str:
    if location.offset is None:
        return "nothing similar in the document"
    page = f"page {location.page} " if location.page is not None else ""
    return f"{page}line {location.line}"


def _report(summary: Any, err: TextIO) -> None:
    def say(text: str) -> None:
        print(f"quiztui: {text}", file=err)

    extras = []
    if summary.none_skipped:
        extras.append(f'{summary.none_skipped} "None" skipped')
    if summary.duplicates:
        extras.append(f"{summary.duplicates} duplicate{'s' if summary.duplicates > 1 else ''}")
    if summary.incomplete:
        extras.append(f"{summary.incomplete} incomplete")
    extra = f" ({', '.join(extras)})" if extras else ""
    chunks = f"{summary.chunks} chunk{'s' if summary.chunks != 1 else ''}"
    say(f"{len(summary.pairs)} pairs from {chunks} of {summary.document}{extra}")
    say(
        f"contexts: {summary.count('exact')} exact, {summary.count('fuzzy')} fuzzy"
        f" (ratio >= {summary.min_ratio:g}), {summary.count('flagged')} flagged"
    )
    for status in ("fuzzy", "flagged"):
        listed = [p for p in summary.pairs if p.location.status == status]
        for pair in listed[:_LIST_LIMIT]:
            loc = pair.location
            nearest = (
                f"; nearest: {_quote(loc.matched)}" if status == "flagged" and loc.matched else ""
            )
            say(
                f"  {status} pair {pair.number}: ratio {loc.ratio:.3f}, {_where(loc)}:"
                f" {_quote(pair.context)}{nearest}"
            )
        if len(listed) > _LIST_LIMIT:
            say(f"  … and {len(listed) - _LIST_LIMIT} more {status}")
    for failed in summary.failed_chunks:
        say(f"failed {_chunk_label(failed)}: {failed.reason}")
    for stage in summary.stages:
        extra = ""
        if stage.stage == "candidates":
            extra = f' ({summary.dont_know} "I don\'t know")'
        say(f"{stage.stage}: {stage.done} done{extra}, {stage.failed} failed")
        for reason in stage.reasons:
            say(f"  {stage.stage} {reason}")
    say(
        f"requests {summary.requests} · retries {summary.retries}"
        f" · tokens {summary.tokens_in}/{summary.tokens_out} · {summary.elapsed:.1f}s"
    )


def cmd_generate(config: Config, args: argparse.Namespace) -> int:
    from quiztui.assemble.generate import generate_run
    from quiztui.formats.document import read_document
    from quiztui.pipeline.generate import pair_item

    subject = " ".join(args.subject.split())
    if not subject:
        raise QuiztuiError("generate: --subject must not be empty")
    # --chunk-chars, --min-ratio and --batch-size are bounded where they are parsed (cli/flags).
    output: Path = args.output or default_output(args.document)
    if output.resolve() == args.document.resolve():
        raise QuiztuiError(f"generate: the output {output} would overwrite the document")
    document = read_document(args.document)
    stages = [s for s in ("rephrase", "candidates", "distractors") if getattr(args, s)]
    run = generate_run(
        config,
        document,
        subject=subject,
        chunk_chars=args.chunk_chars,
        min_ratio=args.min_ratio,
        stages=stages,
        batch_size=args.batch_size or DEFAULT_BATCH,
    )
    provider = run.provider
    if provider.simulated:
        print(
            "quiztui: generating with the SIMULATED model (deterministic offline replies,"
            " not a real model; set a model with --model/--base-url)",
            file=sys.stderr,
        )
    from quiztui.store import Store

    try:
        with Store(config.db_path()) as store:
            recorder = _Recorder(store, output, config.judge.model)
            summary = run_to_end(_run(run, provider, sys.stderr, recorder))
    except KeyboardInterrupt:
        print("\nquiztui: generate interrupted; nothing written", file=sys.stderr)
        return 130
    if summary is None:  # pragma: no cover - the run always finishes or raises
        raise QuiztuiError("generate: the run ended without a summary")
    _report(summary, sys.stderr)
    if not summary.pairs:
        reason = "every chunk failed" if summary.failed_chunks else "the model found no questions"
        raise QuiztuiError(
            f"generate: {args.document}: no pairs generated ({reason}); nothing written"
        )
    items = [pair_item(pair, subject) for pair in summary.pairs]
    try:
        output.write_text(json.dumps(items, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise QuiztuiError(f"{output}: cannot write: {exc.strerror or exc}") from None
    print(f"quiztui: wrote {len(items)} pairs to {output}", file=sys.stderr)
    if not args.distractors:
        print(
            "quiztui: note: these are short-answer pairs: `quiztui grade` reads them; "
            "to check them with `quiztui vet`, generate with --distractors (multiple choice)",
            file=sys.stderr,
        )
    print(output)
    incomplete = summary.failed_chunks or any(s.failed for s in summary.stages)
    return 1 if incomplete else 0
