"""Vet runs: the judge, its prompt and measured accuracy, and a factory of event streams."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from quiztui.assemble.common import probe_judge, prompt_for
from quiztui.core.bayes import JudgeAccuracy
from quiztui.core.records import record
from quiztui.errors import QuiztuiError

if TYPE_CHECKING:
    from quiztui.config import Config
    from quiztui.core.bank import Bank
    from quiztui.core.prior import PriorEstimate
    from quiztui.core.quiz import Quiz
    from quiztui.pipeline.events import VetEvent
    from quiztui.pipeline.prompts import PromptTemplate
    from quiztui.pipeline.vet import VetSettings
    from quiztui.providers.base import Provider
    from quiztui.store import Store

StartRun = Callable[..., "AsyncIterator[VetEvent]"]


def vet_settings(config: Config) -> VetSettings:
    from quiztui.pipeline.vet import VetSettings

    return VetSettings(
        batch_size=config.vet.batch_size,
        concurrency=config.judge.concurrency,
        seed=config.vet.seed,
        max_reasks=config.vet.max_reasks,
        prior=fixed_prior(config),
        prior_auto=config.vet.prior in ("auto", "auto+rates"),
        fit_rates=config.vet.prior == "auto+rates",
        temperature=config.judge.temperature,
        max_tokens=config.judge.max_tokens,
        use_cache=config.vet.cache,
        mode=config.vet.mode,
        logprobs=config.judge.logprobs != "off",
    )


def fixed_prior(config: Config) -> float:
    """The number ``vet.prior`` sets, or with ``prior = "auto"`` the default it leans on."""
    prior = config.vet.prior
    return config.vet.prior_default if isinstance(prior, str) else prior


def judge_accuracy(
    store: Store, provider: Provider, prompt: PromptTemplate, settings: VetSettings
) -> JudgeAccuracy:
    """The newest profile measured for exactly this judge set-up, else the uncalibrated defaults."""
    from quiztui.assemble.estimate import judge_profile

    profile = judge_profile(store, provider, prompt, settings)
    return profile.accuracy() if profile is not None else JudgeAccuracy()


@record
class VetRuns:
    """What a face needs to run a quiz: the judge, its accuracy, and ``start_run``.

    ``start_run()`` gives a fresh event stream over the quiz (the first one resumes
    ``resume_run_id`` when given); ``start_run(only)`` re-judges an edited question alone;
    ``start_run(quiz=edited)`` judges the whole quiz as it is now (keys fixed, questions edited
    in the TUI), not as it was opened.
    """

    provider: Provider
    prompt: PromptTemplate
    settings: VetSettings
    accuracy: JudgeAccuracy
    start_run: StartRun
    # prior = "auto": the last whole-quiz run's estimate (None: a fixed prior, or no run yet)
    prior_estimate: Callable[[], PriorEstimate | None] = lambda: None


def vet_runs(
    config: Config,
    quiz: Quiz,
    store: Store,
    resume: int | None,
    batch_api: bool = False,
    *,
    live: bool = True,
) -> VetRuns:
    """``live=False``: no live view's events, questions scored at the run's end only (a headless
    run: ``VetSettings.live``)."""
    from quiztui.assemble import batch as batch_assembly
    from quiztui.assemble.estimate import run_options
    from quiztui.pipeline.prompts import prompt_for_mode
    from quiztui.pipeline.vet import VetRun
    from quiztui.providers.factory import build_provider

    batch = batch_assembly.batch_mode(store, resume, batch_api)  # a provider batch API
    provider = batch_assembly.build_provider(config) if batch else build_provider(config, quiz)
    settings = replace(vet_settings(config), live=live)
    if batch:
        settings = batch_assembly.batch_settings(settings, quiz, store, resume)
    prompt = prompt_for(prompt_for_mode(settings.mode))
    accuracy = judge_accuracy(store, provider, prompt, settings)
    run_options(config, store, provider, prompt, settings)  # a budget needs a price: fail early
    if not batch:
        probe_judge(provider)  # a dead server or an unknown model: one line, before any request
    pending_resume = [resume]
    opened = quiz  # the quiz as loaded: the simulated judge's truth comes from it
    made: list[VetRun] = []  # the whole-quiz runs: an edit is scored with the last one's prior

    def start_run(only: Quiz | None = None, *, quiz: Quiz | None = None) -> AsyncIterator[VetEvent]:
        """A run over the quiz (``quiz``: as edited since it was opened), or over ``only`` (an
        edited question, re-judged alone)."""
        # Looked up at every start: a calibration made in the TUI applies to the next run.
        current = judge_accuracy(store, provider, prompt, settings)
        options = run_options(config, store, provider, prompt, settings)
        whole = opened if quiz is None else quiz
        if whole is not opened:
            teach_simulated_judge(provider, whole, opened)
            if whole.content_hash() != opened.content_hash():
                pending_resume[0] = None  # a stopped run of other keys is not this quiz's
        if only is not None:
            teach_simulated_judge(provider, only, opened)
            options["budget"] = None  # one edited question: priced, never stopped
            one = settings
            estimate = made[-1].prior_estimate if made else None
            if estimate is not None and settings.fit_rates:  # auto+rates: the run's prior
                one = replace(settings, prior=estimate.value, prior_auto=False, fit_rates=False)
                current = made[-1].accuracy  # and the rates it fitted
            elif estimate is not None:  # one question cannot move the run's share of wrong keys
                one = replace(settings, wrong_share=min(max(1.0 - estimate.value, 1e-4), 0.5))
            return VetRun(only, provider, store, prompt, one, current, **options).events()
        run = VetRun(
            whole,
            provider,
            store,
            prompt,
            settings,
            current,
            resume_run_id=pending_resume[0],
            **options,
        )
        pending_resume[0] = None
        made[-1:] = [run]
        return run.events()

    def prior_estimate() -> PriorEstimate | None:
        return made[-1].prior_estimate if made else None

    return VetRuns(provider, prompt, settings, accuracy, start_run, prior_estimate)


def teach_simulated_judge(provider: Provider, edited: Quiz, start: Quiz) -> None:
    """The simulated judge keeps the truth it was given when the run started (``start``: the
    quiz as loaded, with its truth file where present): an edit never rewrites it.

    An edited question's new assertions get their truth from the original question's: an option
    the original had and was true stays true (matched by option text), every other option is
    false. So editing a correct key to a wrong option makes the simulated judge disagree, as a
    real judge would.
    """
    from quiztui.core.assertions import assertion_text
    from quiztui.providers.simulated import SimulatedProvider
    from quiztui.simulate.vet import true_options

    if not isinstance(provider, SimulatedProvider):
        return
    original = {q.id: q for q in start.questions}
    for q in edited.questions:
        before = original.get(q.id)
        true_texts = true_options(start, before) if before is not None else frozenset()
        for option in q.options:
            provider.truth.setdefault(assertion_text(q.text, option), option in true_texts)


def open_quiz(
    config: Config,
    quiz_path: Path | None,
    resume: int | None,
    *,
    strict: bool = False,
    columns: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Store, Quiz]:
    """The run store and the quiz (a resumed run's own quiz file when none is given).

    Bad items are skipped (``Quiz.load_report``) unless ``strict`` or ``[formats] strict``."""
    from quiztui.formats import load_quiz
    from quiztui.store import Store

    store = Store(config.db_path())
    if resume is not None and quiz_path is None:
        record = store.get_run(resume)
        if not record.quiz_path:
            store.close()
            raise QuiztuiError(f"run {resume} has no quiz path; pass the quiz file")
        quiz_path = Path(record.quiz_path)
    if quiz_path is None:
        store.close()
        raise QuiztuiError("no quiz given: quiztui vet QUIZ")
    try:
        return store, load_quiz(quiz_path, strict=strict or config.formats.strict, columns=columns)
    except QuiztuiError:
        store.close()
        raise


def try_bank(path: Path | None, columns: Mapping[str, Sequence[str]] | None = None) -> Bank | None:
    """The quiz file as a bank, for writing edits back (None when it cannot be read as one);
    ``columns``: the ``--columns`` / ``[import]`` the quiz was read with."""
    from quiztui.formats.bank_io import load_bank

    if path is None:
        return None
    try:
        # the items the quiz has, skipped ones kept aside
        return load_bank(path, strict=False, columns=columns)
    except QuiztuiError:
        return None
