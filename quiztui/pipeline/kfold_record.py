"""A k-fold fit's row in the run store (``store/grade_fits.py``), kept as its run goes.

``KFoldRun.events`` makes one :class:`FitRecord` when it has a store: the row is created when
the run starts ("running"), each grade run's events are watched (the judge, which answers were
graded and scored), and the run ends one of three ways:

- the fold table was made: ``finish`` stores it with "finished" — or "failed" when a grader
  stopped part-way (an authentication failure leaves its remaining answers unscored), so a fit
  on answers never graded is never shown as a finished one;
- an error escaped (a provider failure, a file the fit cannot use): "failed", with the error;
- the run was cancelled (``x`` in the TUI, Ctrl-C, the consumer closing the stream): "cancelled".

The counts use the house wording for a partial run (``core/figures.run_state_text``): "not
run" is the answers a grader never graded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from quiztui.core.grade_fit import KFoldResult
from quiztui.core.grading import LLM_GRADERS
from quiztui.pipeline.grade import GradeFinished, GradeStarted, ItemGraded
from quiztui.pipeline.lifecycle import CANCELLED, FAILED, FINISHED
from quiztui.store import Store
from quiztui.store.grade_fits import GradeFitStore

# An early end by the user (or the consumer going away) rather than by an error.
_CANCELS: tuple[type[BaseException], ...] = (
    asyncio.CancelledError,
    KeyboardInterrupt,
    GeneratorExit,
)


class FitRecord:
    """One k-fold fit's row: created here, watched through the run, ended once."""

    def __init__(
        self,
        store: Store,
        *,
        source: str,
        digest: str,
        marked: int,
        graders: Sequence[str],
        folds: int,
        seed: int,
        scale: tuple[float, float],
        provider_model: str | None,
    ) -> None:
        self.fits = GradeFitStore(store.conn)
        self.n = marked
        self.graders = list(graders)
        self.fit_id = self.fits.create_fit(
            source=source,
            digest=digest,
            marked=marked,
            graders=self.graders,
            folds=folds,
            seed=seed,
            scale=scale,
        )
        self.model = " + ".join(
            dict.fromkeys(
                provider_model if g in LLM_GRADERS and provider_model else g for g in graders
            )
        )
        self.labels: list[str] = []
        self.simulated = False
        self.grade_runs: list[int] = []
        self.grader: str | None = None
        self.received: dict[str, set[int]] = {g: set() for g in self.graders}
        self.scored: dict[str, set[int]] = {g: set() for g in self.graders}
        self.stopped: dict[str, str] = {}  # grader -> why it stopped part-way
        self.ended = False

    @property
    def judge_label(self) -> str:
        """The judges as the CLI's report names them: each grade run's label, once."""
        return " + ".join(dict.fromkeys(self.labels))

    def see(self, event: object) -> None:
        """Watch one of the grade runs' events."""
        if isinstance(event, GradeStarted):
            self.grader = event.grader
            self.labels.append(event.judge_label)
            self.simulated = self.simulated or event.simulated
            if event.run_id is not None:
                self.grade_runs.append(event.run_id)
        elif isinstance(event, ItemGraded) and self.grader in self.received:
            self.received[self.grader].add(event.seq)
            if event.outcome.raw is not None:
                self.scored[self.grader].add(event.seq)
        elif isinstance(event, GradeFinished) and event.summary.stopped and self.grader:
            self.stopped[self.grader] = event.summary.stopped

    def _counts(self) -> tuple[int, int]:
        """(answers without every grader's score, answers some grader never graded)."""
        everyone = set(range(self.n))
        for g in self.graders:
            everyone &= self.scored[g]
        not_run = 0
        for g in self.graders:
            missing = self.n - len(self.received[g])
            if g in self.stopped:  # what it left unscored after it stopped was never asked
                missing += len(self.received[g] - self.scored[g])
            not_run = max(not_run, missing)
        return self.n - len(everyone), not_run

    def _end(
        self,
        status: str,
        *,
        error: str | None = None,
        result: KFoldResult | None = None,
        calibration_path: Path | None = None,
    ) -> None:
        if self.ended:
            return
        self.ended = True
        unscored, not_run = self._counts()
        self.fits.finish_fit(
            self.fit_id,
            status,
            judge_label=self.judge_label,
            model=self.model,
            simulated=self.simulated,
            grade_runs=self.grade_runs,
            unscored=unscored,
            not_run=not_run,
            calibration_path=None if calibration_path is None else str(calibration_path),
            error=error,
            result=result,
        )

    def finish(self, result: KFoldResult, calibration_path: Path | None) -> int:
        """Store the fold table; the fit's id. A grader that stopped makes the fit "failed"."""
        stopped = "; ".join(f"{g}: {why}" for g, why in self.stopped.items())
        self._end(
            FAILED if stopped else FINISHED,
            error=stopped or None,
            result=result,
            calibration_path=calibration_path,
        )
        return self.fit_id

    @contextmanager
    def ending(self) -> Iterator[None]:
        """Store an early end (cancelled, or failed with the error) and let it go on."""
        try:
            yield
        except _CANCELS:
            self._end(CANCELLED)
            raise
        except BaseException as exc:
            self._end(FAILED, error=str(exc) or type(exc).__name__)
            raise
        else:
            if not self.ended:  # the stream ended without a fold table
                self._end(FAILED, error="the run ended without a fold table")


__all__ = ["FitRecord"]
