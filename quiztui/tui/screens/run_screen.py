"""One lifecycle for the screens that show a live run: vet, calibrate, grade, benchmark,
robustness and review.

:class:`LiveRunScreen` owns the parts every such screen had its own copy of:

- the run worker: ``start_run_worker(events, handle)`` consumes a fresh event stream in an
  exclusive worker of the screen's ``RUN_GROUP``; a newer run supersedes (cancels) an older one,
  whose late events are dropped;
- cancelling it (``action_cancel_run``, the screens' ``x``), enabled only while running;
- the single ``Worker.StateChanged`` handler: a run's end becomes ``run_succeeded``,
  ``run_cancelled`` or ``run_failed``; a worker that raised leaves its full traceback in the
  ``quiztui.tui`` log and a one-line toast on screen, never a traceback; other workers of the
  screen end in ``worker_ended``;
- the buffered flush timer: events are only recorded while they arrive, and ``flush()`` moves
  them to the widgets every ``flush_interval`` seconds.

Subclasses say what their run records (``end_run``, ``run_status``, ``flush``) and keep their
own bindings, so every binding id and message stays theirs.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

from textual.css.query import NoMatches
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from quiztui.errors import QuiztuiError
from quiztui.tui.state import CANCELLED, FAILED, FINISHED, RUNNING
from quiztui.tui.streams import drain
from quiztui.tui.widgets.cells import one_line

log = logging.getLogger("quiztui.tui")

ENDED = (WorkerState.SUCCESS, WorkerState.CANCELLED, WorkerState.ERROR)


def error_message(error: BaseException | None) -> str:
    """What a toast says about a run that raised: a domain error's own message, else the
    exception's type and text."""
    if error is None:
        return "the run stopped for an unknown reason"
    if isinstance(error, QuiztuiError):
        return str(error)
    detail = str(error)
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


def log_worker_error(owner: object, worker: Worker[Any]) -> None:
    """Leave a failed worker's traceback in the log; the screen shows one line at most."""
    log.error("%s: worker %r failed", type(owner).__name__, worker.name, exc_info=worker.error)


class LiveRunScreen(Screen[None]):
    """A screen that runs one event stream at a time and shows it through a buffered flush."""

    RUN_GROUP: ClassVar[str] = "run"  # the run worker's group (exclusive within the screen)
    FLUSH_TIMER: ClassVar[str] = "flush"  # the flush timer's name
    # The toast title for a run that raised; None: the screen shows the error itself.
    FAILED_TITLE: ClassVar[str | None] = "Run failed"

    def __init__(self, *, flush_interval: float, id: str | None = None) -> None:
        super().__init__(id=id)
        self.flush_interval = flush_interval
        # A paid judge's run: what it will send, asked about before each start (None: free).
        self.cost_note: str | None = None
        self._cost_agreed = False
        self._run_token = 0  # bumped by every start; a superseded run's events are dropped
        self._run_worker: Worker[None] | None = None

    # -- what a subclass provides ------------------------------------------------------------------

    @property
    def run_status(self) -> str:
        """The current run's status (``tui.state``: idle, running, finished, …)."""
        raise NotImplementedError

    def end_run(self, status: str, error: str | None = None) -> None:
        """Record that the run ended with ``status`` (and ``error`` when it raised), then flush."""
        raise NotImplementedError

    def flush(self) -> None:
        """Move what the worker recorded to the widgets."""
        raise NotImplementedError

    def run_succeeded(self) -> None:
        """The stream ended; the events say how (a subclass may end as stopped or failed)."""
        self.end_run(FINISHED)

    def run_cancelled(self) -> None:
        self.end_run(CANCELLED)

    def run_failed(self, message: str) -> None:
        """The worker raised: the run ends as failed and a toast says why, in one line."""
        self.end_run(FAILED, message)
        if self.FAILED_TITLE is not None:
            self.notify_error(message, self.FAILED_TITLE)

    def worker_ended(self, worker: Worker[Any], state: WorkerState) -> None:
        """Another worker of this screen (not the current run) ended; errors are logged."""

    # -- the lifecycle -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.run_status == RUNNING

    def start_flush_timer(self) -> None:
        self.set_interval(self.flush_interval, self._flush_tick, name=self.FLUSH_TIMER)

    def _flush_tick(self) -> None:
        """The timer's flush. A screen kept for later (installed, not on the stack) still ticks
        while the app shuts down and removes its widgets: nothing is left to flush to then."""
        try:
            self.flush()
        except NoMatches:
            if self.is_attached and self.app.is_running and self in self.app.screen_stack:
                raise  # a missing widget on a live screen is a bug

    def start_run_worker(
        self, events: Callable[[], AsyncIterator[Any]], handle: Callable[[Any], None]
    ) -> Worker[None]:
        """Consume ``events()`` in the run worker, passing each event to ``handle``.

        ``events`` is called inside the worker, so a runner that fails to start fails the run
        like any other error.
        """
        self._run_token += 1
        token = self._run_token

        async def consume() -> None:
            await drain(events(), handle, lambda: token == self._run_token)

        self._run_worker = self.run_worker(
            consume,
            name=self.RUN_GROUP,
            group=self.RUN_GROUP,
            exclusive=True,
            exit_on_error=False,
        )
        return self._run_worker

    def ask_cost_first(self) -> bool:
        """True when a start must wait: a paid run asks first (``cost_note``), and the answer
        yes starts it again through the screen's ``action_start_run``."""
        if self.cost_note is None or self._cost_agreed:
            self._cost_agreed = False
            return False
        from quiztui.tui.screens.confirm import ConfirmQuitScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self._cost_agreed = True
                getattr(self, "action_start_run")()  # noqa: B009 - subclasses define it

        question = f"{self.cost_note} Start it?"
        self.app.push_screen(ConfirmQuitScreen(question, yes="Run", no="Not now"), answered)
        return True

    def cancel_run(self) -> None:
        """Cancel the current run; what it recorded so far stays."""
        if self._run_worker is not None and self.run_status == RUNNING:
            self._run_worker.cancel()

    def action_cancel_run(self) -> None:
        self.cancel_run()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return True if self.running else None  # None: shown disabled
        return True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place a worker's end (success, cancel, error) is handled."""
        worker, state = event.worker, event.state
        if state not in ENDED:
            return
        if state == WorkerState.ERROR:
            log_worker_error(self, worker)
        if worker is not self._run_worker:
            self.worker_ended(worker, state)
        elif state == WorkerState.SUCCESS:
            self.run_succeeded()
        elif state == WorkerState.CANCELLED:
            self.run_cancelled()
        else:
            self.run_failed(error_message(worker.error))

    def notify_error(self, message: str, title: str) -> None:
        """An error toast: one line of plain text (untrusted text is never markup)."""
        self.notify(one_line(message), title=title, severity="error", markup=False, timeout=10)


__all__ = ["ENDED", "LiveRunScreen", "error_message", "log_worker_error"]
