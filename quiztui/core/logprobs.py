"""Token log-probabilities → P(true) per assertion, and a graded score for a question's key.

A judge that returns token logprobs (OpenAI-compatible ``logprobs``/``top_logprobs``) says more
than TRUE or FALSE: at the token where it wrote its verdict word, the probabilities of the
alternatives it weighed give P(true). :class:`LogprobIndex` collects a reply's tokens with their
character offsets (token texts concatenate to the reply text) and answers
:meth:`LogprobIndex.p_true_at` for the offset where the parser found a verdict word.

Matching a token to a verdict word: the token's text is normalised (whitespace, punctuation and
markdown stripped at both ends, lowercased) and compared with the parser's TRUE/FALSE words. When
a tokenizer splits the word ("TR" + "UE"), only the first token carries the decision, so when the
sampled token is a *proper prefix* of a verdict word, alternatives are matched by prefix too ("TR"
and "T" count for TRUE, "FAL" and "F" for FALSE). TRUE words start with t/y/c/a/1 and FALSE words
with f/n/i/0, so no prefix belongs to both sides.

When only one side appears among the listed alternatives, the other side's probability is not
zero but unknown; it is at most the smallest listed probability (the list holds the most likely
tokens) and at most the mass not listed, and that bound stands in for it. So a judge that is 0.9
sure with no alternatives listed gives P(true) = 0.9, not 1.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from quiztui.core.verdicts import FALSE_WORDS, TRUE_WORDS


def as_logprob(value: object) -> float:
    """A log-probability as a server sent it: a float, or NaN for what is no number."""
    if type(value) is float:
        return value
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


class ServerAlternatives:
    """A token's alternatives as a server sent them (OpenAI's ``top_logprobs``: a list of
    ``{"token", "logprob"}`` objects), read into (token, logprob) pairs when first used.

    A streamed reply carries about 190 tokens with their alternatives, and the pipeline reads
    the alternatives of one token per verdict; reading them all as they arrived was about a
    fifth of the client's CPU per reply (``docs/speed.md``). Reads as the tuple of pairs it
    stands for: iterated, indexed, compared (with such a tuple too) and hashed. An item that is
    no object with a string ``token`` is left out, and a ``logprob`` that is no number is NaN.
    """

    __slots__ = ("_raw", "_pairs")

    def __init__(self, raw: list[object]) -> None:
        self._raw: list[object] | None = raw
        self._pairs: tuple[tuple[str, float], ...] | None = None

    def pairs(self) -> tuple[tuple[str, float], ...]:
        pairs = self._pairs
        if pairs is None:
            pairs = self._pairs = tuple(
                (alt["token"], as_logprob(alt.get("logprob")))
                for alt in self._raw or ()
                if isinstance(alt, dict) and isinstance(alt.get("token"), str)
            )
            self._raw = None
        return pairs

    def __iter__(self) -> Iterator[tuple[str, float]]:
        return iter(self.pairs())

    def __len__(self) -> int:
        return len(self.pairs())

    def __getitem__(self, index: int) -> tuple[str, float]:
        return self.pairs()[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ServerAlternatives):
            other = other.pairs()
        return self.pairs() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.pairs())

    def __repr__(self) -> str:
        return repr(self.pairs())


class TokenLogprob(NamedTuple):
    """One generated token, its log-probability and the most likely alternatives at its place.

    A named tuple: a streamed reply makes one per token (about 190 for a batch of 20), and a
    tuple is made several times faster than a frozen dataclass (``docs/speed.md``)."""

    token: str
    logprob: float
    # (token, logprob) of the alternatives, most likely first; the sampled token usually among
    # them. A streamed reply's are read when first used (:class:`ServerAlternatives`).
    top: tuple[tuple[str, float], ...] | ServerAlternatives = ()


_PIECE = re.compile(r" ?\w+| ?[^\w\s]+|\s+")
_STRIP = " \t\r\n\u00a0*_`~\"'“”‘’.,:;!?()[]{}<>|-–—=→>#"


def normalise(token: str) -> str:
    """Token text as a verdict word: ends stripped of space, punctuation and markdown; lowercase."""
    return token.strip(_STRIP).lower()


def _side(word: str, prefix: bool) -> bool | None:
    """True/False when ``word`` is a TRUE/FALSE verdict word (or, with ``prefix``, starts one)."""
    if not word:
        return None
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    if prefix:
        if any(w.startswith(word) for w in TRUE_WORDS):
            return True
        if any(w.startswith(word) for w in FALSE_WORDS):
            return False
    return None


def p_true_of(token: TokenLogprob, verdict: bool | None = None) -> float | None:
    """P(true) at one token, or None when the token is no verdict word (or contradicts ``verdict``).

    ``verdict`` is what the parser read there; a token of the other side means the offsets no longer
    line up with the text, and a number from the wrong token would be worse than none.
    """
    chosen = normalise(token.token)
    prefix = _side(chosen, False) is None
    side = _side(chosen, prefix)
    if side is None or (verdict is not None and side != verdict):
        return None
    alternatives: dict[str, float] = {token.token: token.logprob}
    for text, logprob in token.top:
        alternatives.setdefault(text, logprob)
    mass = {True: 0.0, False: 0.0}
    seen = {True: False, False: False}
    listed = 0.0
    smallest = 1.0
    for text, logprob in alternatives.items():
        p = math.exp(logprob) if math.isfinite(logprob) else 0.0
        listed += p
        smallest = min(smallest, p)
        s = _side(normalise(text), prefix)
        if s is not None:
            mass[s] += p
            seen[s] = True
    bound = max(0.0, min(smallest, 1.0 - listed))
    for s in (True, False):
        if not seen[s]:
            mass[s] = bound
    total = mass[True] + mass[False]
    if total <= 0.0:
        return None
    return mass[True] / total


class LogprobIndex:
    """A reply's tokens by character offset; feed them as they stream, ask at verdict offsets."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._tokens: list[TokenLogprob] = []
        self._length = 0

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def text_length(self) -> int:
        """Characters covered so far (the length of the tokens' concatenated text)."""
        return self._length

    def extend(self, tokens: Iterable[TokenLogprob]) -> None:
        for token in tokens:
            if not token.token:
                continue  # covers no character: nothing can be found at its offset
            self._starts.append(self._length)
            self._tokens.append(token)
            self._length += len(token.token)

    def token_at(self, offset: int) -> TokenLogprob | None:
        """The token whose text covers character ``offset`` of the reply."""
        if offset < 0 or offset >= self._length:
            return None
        return self._tokens[bisect.bisect_right(self._starts, offset) - 1]

    def p_true_at(self, offset: int, verdict: bool | None = None) -> float | None:
        """P(true) at the token covering ``offset`` (where a verdict word starts); None: unknown."""
        token = self.token_at(offset)
        return None if token is None else p_true_of(token, verdict)


def graded_key_score(p_true: Sequence[float | None], key: int, prior: float) -> float | None:
    """P(the key is the single correct option), reading ``p_true`` as calibrated probabilities.

    Under the single-correct-answer model (as in :mod:`quiztui.core.bayes`), option c being the
    correct one has weight prior_c · p_c / (1 − p_c); prior X sits on the key and 1 − X is spread
    evenly over the others. p is clipped to [1e-6, 1 − 1e-6]; an unknown p counts as neutral
    (odds 1). None when no option has a P(true).
    """
    n = len(p_true)
    if n == 0 or all(p is None for p in p_true) or not 0 <= key < n:
        return None
    if n == 1:
        return 1.0
    other = (1.0 - prior) / (n - 1)
    weights = []
    for c, p in enumerate(p_true):
        odds = 1.0
        if p is not None:
            q = min(max(p, 1e-6), 1.0 - 1e-6)
            odds = q / (1.0 - q)
        weights.append((prior if c == key else other) * odds)
    total = sum(weights)
    return weights[key] / total if total > 0 else None


__all__ = [
    "LogprobIndex",
    "ServerAlternatives",
    "TokenLogprob",
    "as_logprob",
    "graded_key_score",
    "normalise",
    "p_true_of",
]
