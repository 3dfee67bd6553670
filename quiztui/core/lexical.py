"""Lexical answer matching as in the SQuAD and Natural Questions evaluation scripts.

``normalize_answer`` lowercases, removes punctuation, the articles a/an/the and extra whitespace
(SQuAD v1.1 ``evaluate.py``); exact match and token F1 are taken as the maximum over the
reference's aliases, as both scripts do.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower, drop punctuation, drop articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, truth: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(truth)


def token_f1(prediction: str, truth: str) -> float:
    """Harmonic mean of token precision and recall after normalisation (SQuAD ``f1_score``)."""
    pred = normalize_answer(prediction).split()
    gold = normalize_answer(truth).split()
    if not pred or not gold:
        return float(pred == gold)  # both empty: 1; one empty: 0 (as in SQuAD v2)
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def best_match(prediction: str, truths: Sequence[str]) -> tuple[bool, float]:
    """(exact match, token F1), each the maximum over ``truths``."""
    if not truths:
        return False, 0.0
    return (
        any(exact_match(prediction, t) for t in truths),
        max(token_f1(prediction, t) for t in truths),
    )
