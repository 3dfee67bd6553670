"""A deterministic judge oracle, shared by the simulated provider and the fake server.

Given a rendered batch prompt and a truth table (assertion text → true/false), it writes a reply in
the documented format. Errors follow TPR/TNR but are drawn from a hash of (seed, assertion text),
so the same assertion always gets the same verdict, whatever batch it lands in: a resumed run gives
the same results as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from quiztui.core.assertions import decompose, parse_rendered_batch
from quiztui.core.question_mode import LETTERS, parse_rendered_question
from quiztui.core.quiz import Question, Quiz
from quiztui.simulate import generate as generate_oracle
from quiztui.simulate import grade as grade_oracle
from quiztui.simulate import review as review_oracle
from quiztui.simulate import robustness as robust_oracle


def _unit(seed: int, text: str) -> float:
    digest = hashlib.blake2b(f"{seed}\x00{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def judge_verdict(text: str, truth: bool, tpr: float, tnr: float, seed: int = 0) -> bool:
    """What a judge with the given TPR/TNR says about an assertion whose truth is ``truth``."""
    u = _unit(seed, text)
    if truth:
        return u < tpr
    return not (u < tnr)


def judge_confidence(text: str, truth: bool, said: bool, seed: int = 0) -> float:
    """How sure the simulated judge is of what it ``said`` about an assertion (its token P).

    Drawn from a hash of (seed, text) independent of the verdict's draw, and informative: a
    verdict that matches the truth gets U(0.75, 0.99), a wrong one U(0.5, 0.8), so P(true) from
    logprobs ranks like a real judge's would, only cleaner.
    """
    u = _unit(seed, "confidence\x00" + text)
    return 0.75 + 0.24 * u if said == truth else 0.5 + 0.3 * u


def oracle_reply(
    prompt: str,
    truth: Mapping[str, bool],
    *,
    tpr: float = 1.0,
    tnr: float = 1.0,
    seed: int = 0,
    skip_ids: frozenset[str] = frozenset(),
    disagreement: float = 0.0,
    refusal_rate: float = 0.0,
) -> str:
    """Reply to a judge prompt: ``A<n>: TRUE|FALSE - reason`` per line, skipping ``skip_ids``.

    Assertions absent from ``truth`` are answered FALSE with reason "unknown assertion". A
    per-question prompt gets ``ANSWER: <letter>`` (see :func:`oracle_choice`). Grading and
    document prompts are answered by :mod:`grade_oracle` and :mod:`generate_oracle`; robustness
    prompts by :mod:`robust_oracle`, whose answers differ from the truth at about
    ``disagreement`` and are refusals at ``refusal_rate``.
    """
    text = robust_oracle.reply(
        prompt, truth, seed=seed, disagreement=disagreement, refusal_rate=refusal_rate
    )
    if text is not None:
        return text
    for special in (grade_oracle.reply, generate_oracle.reply, review_oracle.reply):
        text = special(prompt, seed)
        if text is not None:
            return text
    options = parse_rendered_question(prompt) if not parse_rendered_batch(prompt) else None
    if options is not None:
        choice = oracle_choice(options, truth, tpr=tpr, seed=seed)
        right = truth.get(options[choice], False)
        why = "the only option that fits the facts" if right else "seems the best fit"
        return f"ANSWER: {LETTERS[choice]} - {why}\n"
    lines = []
    for ident, text in parse_rendered_batch(prompt).items():
        if ident in skip_ids:
            continue
        known = truth.get(text)
        if known is None:
            lines.append(f"{ident}: FALSE - unknown assertion")
            continue
        said = judge_verdict(text, known, tpr, tnr, seed)
        why = "matches the facts" if said else "does not match the facts"
        lines.append(f"{ident}: {'TRUE' if said else 'FALSE'} - {why}")
    return "\n".join(lines) + "\n"


def oracle_choice(
    options: Sequence[str], truth: Mapping[str, bool], *, tpr: float = 1.0, seed: int = 0
) -> int:
    """The option a simulated per-question judge names: a true option with probability ``tpr``.

    Otherwise (and when no option is known to be true) one of the others, picked by a hash of the
    question; so the chosen option is "said true" with TPR = tpr and each distractor with
    1 − TNR = (1 − tpr) / (n − 1).
    """
    key = "\x1f".join(options)
    true = [i for i, o in enumerate(options) if truth.get(o)]
    others = [i for i in range(len(options)) if i not in true] or list(range(len(options)))
    if true and _unit(seed, "choice\x00" + key) < tpr:
        return true[int(_unit(seed, "which-true\x00" + key) * len(true))]
    return others[int(_unit(seed, "which-other\x00" + key) * len(others))]


def truth_table(quiz: Quiz) -> dict[str, bool]:
    """Assertion text → truth, from the quiz's truth file when present, else from its key."""
    table = {}
    for a in decompose(quiz):
        true_index = quiz.truth.get(a.question_id)
        table[a.text] = a.keyed if true_index is None else a.option_index == true_index
    return table


def true_options(quiz: Quiz, question: Question) -> frozenset[str]:
    """The texts of ``question``'s true options: by the quiz's truth file when it names one for
    this question, else by the key (the same rule as :func:`truth_table`)."""
    true_index = quiz.truth.get(question.id, question.key)
    return frozenset(o for i, o in enumerate(question.options) if i == true_index)
