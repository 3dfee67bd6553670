"""One figure, one name (issue 21 item 4): the wording every face uses for the same facts.

The TUI header and metrics screen, the Markdown/HTML/JSON reports, ``quiztui runs`` and the Runs
screen all show the judge's rates and a run's completeness through these functions, so a fact
reads the same wherever it appears:

* :func:`judge_rates_text` — the TPR/TNR a run scores with, each with its 95 % interval when it
  was measured, and where they come from: ``TPR 0.85 [0.83, 0.87] · TNR 0.92 [0.91, 0.93] ·
  profile #3 measured 2026-11-20``, ``… · panel fit``, or ``TPR 0.90 · TNR 0.90 · uncalibrated
  defaults (not measured)``;
* :func:`run_state_text` — a run's status, and for a partial one (cancelled, stopped at its
  budget, failed, interrupted, or with assertions never sent) ``incomplete (cancelled) · not run:
  12 · k/confidence partial``;
* :func:`prior_text` — which prior the posterior used: ``fixed 0.95`` or the auto estimate with
  its interval (``auto 0.87 [0.80, 0.92] · 120 q``);
* ``P_TRUE_HELP`` / ``CONFIDENCE_HELP`` — the two probabilities users confuse, explained once;
* :func:`simulated_rates_text` — the simulated judge's own error, by design ("wrong on 5% of true
  …"), never as a TPR that could be read against the rates a run scores with;
* :func:`simulated_note` — what the SIMULATED state means and the one step to a real judge.
"""

from __future__ import annotations

import time

from quiztui.core.bayes import DEFAULT_TNR, DEFAULT_TPR

UNCALIBRATED = "uncalibrated"  # JudgeAccuracy.label of a judge with no profile
UNCALIBRATED_SOURCE = "uncalibrated defaults (not measured)"
PANEL_FIT = "panel fit"
PARTIAL_STATUSES = frozenset({"cancelled", "stopped", "failed", "interrupted"})
LIVE_STATUSES = frozenset({"idle", "running", "batch-pending"})  # not over yet: not partial
INCOMPLETE = "incomplete"
PARTIAL_SCORES = "k/confidence partial"

P_TRUE_HELP = (
    "P(true): one verdict's probability — the judge's own P(this option is true) from its token"
    " logprobs, per option"
)
CONFIDENCE_HELP = (
    "confidence: the question's posterior — P(the key is the correct option | every verdict on"
    " the question), from the judge's TPR/TNR and the prior"
)


def measured_on(created_at: float) -> str:
    """A profile's measurement date as sources name it (UTC, so it reads alike everywhere)."""
    return time.strftime("%Y-%m-%d", time.gmtime(created_at))


def profile_source(profile_id: int | None, created_at: float, *, panel: bool = False) -> str:
    """``profile #3 measured 2026-11-20`` (the label a profile's accuracy carries), or for a
    profile saved from a panel fit (no gold: ``panel --save-profiles``) ``profile #3 panel fit
    2026-11-20``."""
    ident = f"profile #{profile_id}" if profile_id is not None else "profile"
    how = PANEL_FIT if panel else "measured"
    return f"{ident} {how} {measured_on(created_at)}" if created_at > 0 else ident


def judge_source(calibration: str) -> str:
    """Where the rates come from, from a run's ``calibration`` label.

    Labels stored before this wording (``profile #3: TPR 0.85 [0.83, 0.87] · …``) carried
    their own copy of the rates; only the source part is kept, so the rates appear once.
    """
    label = " ".join(calibration.split())
    if label in ("", UNCALIBRATED):
        return UNCALIBRATED_SOURCE
    if label.startswith("profile") and ":" in label:
        return label.split(":", 1)[0]
    return label


def _rate(name: str, value: float, interval: tuple[float, float] | None) -> str:
    text = f"{name} {value:.2f}"
    return text if interval is None else f"{text} [{interval[0]:.2f}, {interval[1]:.2f}]"


def judge_rates_text(
    tpr: float,
    tnr: float,
    tpr_ci: tuple[float, float] | None,
    tnr_ci: tuple[float, float] | None,
    calibration: str,
) -> str:
    """The judge's rates as every face shows them (see the module docstring)."""
    return (
        f"{_rate('TPR', tpr, tpr_ci)} · {_rate('TNR', tnr, tnr_ci)} · {judge_source(calibration)}"
    )


UNCALIBRATED_RATES = judge_rates_text(DEFAULT_TPR, DEFAULT_TNR, None, None, UNCALIBRATED)


def is_partial(status: str, not_run: int) -> bool:
    """A run over without judging everything it set out to: ended early, or with work never
    sent. A run still going (or waiting on a provider batch) is not partial yet."""
    return status in PARTIAL_STATUSES or (status not in LIVE_STATUSES and not_run > 0)


def run_state_text(status: str, not_run: int) -> str:
    """``finished``, or for a partial run ``incomplete (cancelled) · not run: 12 · k/confidence
    partial``: its k and confidence count only the verdicts it received."""
    if not is_partial(status, not_run):
        return status
    why = f" ({status})" if status != INCOMPLETE else ""
    return f"{INCOMPLETE}{why} · not run: {not_run} · {PARTIAL_SCORES}"


COST_UNKNOWN = "unknown (no price in [cost])"


def cost_text(cost: float | None, simulated: bool = False) -> str:
    """What a run cost, the same in the TUI header, its Usage tab, the reports and ``quiztui
    runs``: ``$0`` for the simulated judge (free, whatever price is configured), dollars with
    enough decimals for a small amount (``$0.0042``), or ``unknown (no price in [cost])``."""
    from quiztui.core.estimate import usd

    if simulated:
        return "$0"
    return COST_UNKNOWN if cost is None else usd(cost)


TRUTH_FILE = "the truth file"
QUIZ_KEY = "the quiz key"


def simulated_rates_text(tpr: float, tnr: float) -> str:
    """The simulated judge's own error, set by construction: worded apart from the TPR/TNR a run
    scores with (``judge_rates_text``), so "0.95" beside "TPR 0.90 · uncalibrated" is not read
    as a contradiction: ``wrong on 5% of true and 5% of false assertions by design``."""
    return (
        f"wrong on {(1 - tpr) * 100:.3g}% of true and {(1 - tnr) * 100:.3g}% of false"
        " assertions by design"
    )


def simulated_note(truth_source: str, quiz: str = "QUIZ", *, chosen: bool = False) -> str:
    """What the SIMULATED state means, said plainly where it is shown (TUI, headless stderr):
    where its verdicts come from, what it cannot do, the one step to a real judge and the
    offline check. ``chosen``: the simulated judge was asked for (``--judge simulated`` or
    ``judge.provider``), not fallen back to for want of a configured one."""
    if truth_source == TRUTH_FILE:
        origin = (
            "answers from the quiz's truth file, not a model: it finds only the errors that"
            " file names"
        )
    else:
        origin = "answers from the quiz's own key, not a model: it cannot find this quiz's errors"
    why = "Simulated judge chosen" if chosen else "No judge configured"
    return (
        f"{why}: the SIMULATED judge {origin}. Real judge: set an API key"
        " (OPENAI_API_KEY and --model MODEL) or start a local server (Ollama is found by"
        f" itself). Offline check: quiztui lint {quiz}"
    )


def prior_text(value: float, auto_label: str | None) -> str:
    """``fixed 0.95``, or the auto estimate's label (value, interval, questions, shrinkage)."""
    return auto_label if auto_label else f"fixed {value:g}"


__all__ = [
    "CONFIDENCE_HELP",
    "COST_UNKNOWN",
    "INCOMPLETE",
    "LIVE_STATUSES",
    "PANEL_FIT",
    "PARTIAL_SCORES",
    "PARTIAL_STATUSES",
    "P_TRUE_HELP",
    "QUIZ_KEY",
    "TRUTH_FILE",
    "UNCALIBRATED_RATES",
    "UNCALIBRATED_SOURCE",
    "cost_text",
    "is_partial",
    "judge_rates_text",
    "judge_source",
    "measured_on",
    "simulated_note",
    "simulated_rates_text",
    "prior_text",
    "profile_source",
    "run_state_text",
]
