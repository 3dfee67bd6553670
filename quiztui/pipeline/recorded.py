"""Vet and panel runs from recorded answers (issue 26 item 1): no model is asked.

:class:`RecordedVetRun` is a per-question :class:`~quiztui.pipeline.vet.VetRun` whose judge is a
:class:`~quiztui.providers.recorded.RecordedProvider`: the run is created, stored, scored and
summarised exactly as any vet run (so the TUI, ``runs``, the Runs screen and every report read
it), but its scheduler (:class:`RecordedJudging`) takes every recorded answer at once instead
of asking question by question: each answer becomes one verdict per option (the chosen option
TRUE, the others FALSE), all stored in one write as one "batch" named after the file; a
question with no usable answer is unjudged with the answer's reason. 0 requests, 0 tokens.

:class:`RecordedPanelRun` is a :class:`~quiztui.pipeline.panel.PanelRun` whose members are such
runs, one per recorded model; the panel fit, κ and posteriors are the panel's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from quiztui.core.assertions import Assertion, decompose, shuffled
from quiztui.core.estimate import ModelPrice
from quiztui.pipeline.estimate import default_seed
from quiztui.pipeline.events import RunFinished, RunStarted, VerdictReceived, VetEvent
from quiztui.pipeline.judging import AssertionState, Judging
from quiztui.pipeline.lifecycle import Emit
from quiztui.pipeline.panel import PanelMemberEvent, PanelRun
from quiztui.pipeline.vet import VetRun
from quiztui.providers.recorded import RecordedProvider

if TYPE_CHECKING:
    from quiztui.pipeline.events import RunSummary
    from quiztui.providers.base import Provider

RECORDED = "recorded answers: nothing sent"


class RecordedJudging(Judging):
    """Judging that takes the recorded answers instead of asking (module doc)."""

    def started(self, seed: int, resumed: bool, restored: int, pending: list[int]) -> RunStarted:
        """The run's start, with nothing to estimate: no request will be sent (the estimate of
        an empty plan: 0 requests, $0), one batch (the file)."""
        return replace(super().started(seed, resumed, restored, []), batches=1)

    async def drive(self, emit: Emit[VetEvent]) -> None:
        del emit  # the same queue as self.emit
        provider = self.run.provider
        assert isinstance(provider, RecordedProvider)
        rows: list[tuple[int, bool, str, float | None]] = []
        dead: list[int] = []
        # a live view's events (a headless run has none: VetSettings.live)
        live = self.settings.live and getattr(self.run, "live_verdicts", True)
        while self.todo:
            qid = self.order[self.todo.popleft()].question_id
            seqs = self.seqs_by_question[qid]
            option, said = provider.answer(self.questions[qid])
            for seq in seqs:
                st = self.states[seq]
                st.attempts += 1
                if option is None:
                    st.unjudged = said
                    continue
                a = self.order[seq]
                verdict = a.option_index == option
                self.judged += st.verdict is None
                st.verdict, st.reason = verdict, said
                rows.append((seq, verdict, said, None))
                if live:
                    self.emit(VerdictReceived(seq, a.question_id, a.option_index, verdict, said))
            if option is None:
                dead += seqs
        self.counters.batches = 1
        store, run_id = self.run.store, self.run.run_id
        batch_id = store.start_batch(run_id, 1, provider.label)
        store.finish_batch(
            batch_id,
            status="ok",
            raw_reply=f"{len(rows)} verdicts from {provider.label}",
            error=None,
            tokens_in=0,
            tokens_out=0,
            verdicts=rows,
            run_id=run_id,
            cache_judge=None,
            cache_items=[],
        )
        for event in self._give_up(dead):
            self.emit(event)
        self.emit(self.usage_event())


@dataclass
class RecordedVetRun(VetRun):
    """A vet run over recorded answers (module doc). Its settings are per-question mode."""

    def __post_init__(self) -> None:
        if not isinstance(self.provider, RecordedProvider):
            raise TypeError("a recorded run needs a RecordedProvider")
        self.settings = replace(self.settings, mode="question", use_cache=False, max_reasks=0)
        if self.price is None:  # nothing is sent: the run costs nothing, and says so
            self.price = ModelPrice(0.0, 0.0, source=RECORDED)
        super().__post_init__()

    # Emit a VerdictReceived per assertion as a live run does (a panel member, whose stream no
    # face draws verdict by verdict, leaves them out: its questions' scores and summary carry them)
    live_verdicts: bool = True
    # The quiz's assertions, decomposed once for every member of a panel (None: decompose here)
    assertions: Sequence[Assertion] | None = None

    def _prepare(self) -> tuple[list[Assertion], dict[int, AssertionState], int, bool]:
        if self.assertions is None:
            return super()._prepare()
        seed = self.settings.seed if self.settings.seed is not None else default_seed(self.quiz)
        order = shuffled(list(self.assertions), seed)
        self.run_id = self._create(order, seed)
        self._lease = self.store.leases.holder(self.run_id)  # written with the run
        if self.kind != "vet":
            self.store.set_kind(self.run_id, self.kind)
        return order, {}, seed, False

    def _judging(
        self, order: list[Assertion], states: dict[int, AssertionState], emit: Emit[VetEvent]
    ) -> Judging:
        return RecordedJudging(self, order, states, emit)


@dataclass
class RecordedPanelRun(PanelRun):
    """A panel whose members are recorded runs, one per model (module doc)."""

    _assertions: list[Assertion] | None = field(default=None, init=False, repr=False)

    async def _member(
        self,
        index: int,
        provider: Provider,
        summaries: dict[int, RunSummary],
        emit: Emit[PanelMemberEvent],
    ) -> None:
        if self._assertions is None:
            self._assertions = decompose(self.quiz)
        run = RecordedVetRun(
            self.quiz,
            provider,
            self.store,
            self.prompt,
            self.settings,
            kind="panel",
            assertions=self._assertions,
            live_verdicts=False,
        )
        async for event in run.events():
            if isinstance(event, RunFinished):
                summaries[index] = event.summary
            emit(PanelMemberEvent(index, event))


__all__ = ["RECORDED", "RecordedJudging", "RecordedPanelRun", "RecordedVetRun"]
