"""Lint rules across questions: near-duplicate stems, stems that answer other questions, and
quiz-level statistics.

Near-duplicate questions (L110) are found through an index, never all pairs
(``near_duplicate_questions``): stems the same once compared are grouped by a hash; one stem of
each group is indexed under its ``_INDEX_WORDS`` rarest content words and under its content
words with one left out, and two stems are candidates when they share a key (a key shared by
more than ``_MAX_POSTING`` stems is too common and blocks nothing). A near-duplicate shares its
rare words, and a typo changes one word: stems differing in one misspelled word share the
leave-one-out key, and with three rare words indexed most with two misspelled words share one.
Pairs whose every shared key is too common are missed (``bench/lint_scale.py`` counts them). Candidates need the content-word Jaccard
``prefilter_jaccard`` and are confirmed with ``near``. L111 flags a stem that gives another
question's key away.

The quiz-level statistics are tests against chance, each with at least ``min_questions``
questions and flagged below ``alpha``:

- L108, key is the longest option: over multiple-choice questions with one strictly longest
  option, the number whose key is that option is Poisson-binomial with p_i = 1/n_i under the null
  (the key is in no relation to length); questions whose longest length is tied are left out, as
  their key cannot be strictly longest. It is tested with the exact binomial test at the mean
  p̄ = mean(1/n_i):
  by Hoeffding (1956, theorem 4) P(S >= c) of a Poisson-binomial sum is at most that of the
  binomial with the same mean whenever c >= mean + 1, so this one-sided p-value is conservative
  wherever it can matter (below that, p is large either way).
- L109, key positions: a goodness-of-fit test against uniform, separately for each option count
  with enough questions (positions of 4-option and 5-option questions are different categories,
  so they cannot share one table); with several option counts tested, each uses alpha / (number
  tested) (Bonferroni). The statistic is Pearson's chi-square; its p-value comes from the
  chi-square distribution when every expected count is at least 5, and otherwise exactly, by
  summing the multinomial probability of every outcome with a statistic at least as large (the
  chi-square approximation is poor for small quizzes). Five 4-option questions all keyed B give
  p = 0.004.
- L115, True/False balance: a two-sided exact binomial test of the True keys against 0.5.

The p-values come from ``pvalues`` (plain Python, equal to scipy.stats' ``binomtest`` and
``chisquare``), so linting at the end of a run imports no scipy.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from quiztui.core.lint_items import (
    FUNCTION_WORDS,
    contains,
    is_boolean,
    key_in_range,
    near_keys,
    normalise,
    show,
)
from quiztui.core.lint_model import LintFinding, LintSettings, item_finding, quiz_finding
from quiztui.core.pvalues import binomial_pvalue, chi2_sf
from quiztui.core.quiz import Question
from quiztui.core.textnorm import comparable

# Words that say nothing about a question's topic (L111).
_STOPWORDS = FUNCTION_WORDS | frozenset(
    "when where why how following called known name named first most many much also one about"
    " after before during these".split()
)


# --- across questions -------------------------------------------------------------------------


def _content_words(text: str) -> frozenset[str]:
    words = text.split()
    content = frozenset(w for w in words if w not in FUNCTION_WORDS)
    return content or frozenset(words)


_INDEX_WORDS = 3  # each stem is indexed under this many of its rarest content words
_MAX_POSTING = 32  # a word indexing more stems than this is too common to block on


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared) if shared else 0.0


def index_pairs(word_sets: Sequence[frozenset[str]]) -> set[tuple[int, int]]:
    """Pairs (i < j) of texts that may be near-duplicates (see the module docstring).

    Two blocking keys: one of a text's ``_INDEX_WORDS`` rarest words, or its content words but
    one (so two texts differing in one misspelled word share a key). Keys shared by more than
    ``_MAX_POSTING`` texts block nothing.
    """
    import numpy as np

    df = Counter(w for words in word_sets for w in words)
    hashes: list[int] = []
    owners: list[int] = []
    for i, words in enumerate(word_sets):
        ordered = sorted(words, key=lambda w: (df[w], w))
        for w in ordered[:_INDEX_WORDS]:
            if df[w] > 1:
                hashes.append(hash(("w", w)))
                owners.append(i)
        if len(ordered) >= 2:
            whole = tuple(sorted(ordered))
            for k in range(len(whole)):
                hashes.append(hash(whole[:k] + whole[k + 1 :]))
                owners.append(i)
    keys = np.array(hashes, dtype=np.int64)
    who = np.array(owners, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    keys, who = keys[order], who[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    out: set[tuple[int, int]] = set()
    for start, size in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist(), strict=True):
        if size > _MAX_POSTING:
            continue
        members = sorted(set(who[start : start + size].tolist()))
        for x, i in enumerate(members):
            out.update((i, j) for j in members[x + 1 :])
    return out


def near_duplicate_questions(
    questions: Sequence[Any], s: LintSettings
) -> list[tuple[int, int, float]]:
    """(i, j, ratio) for questions (i < j) whose stems are ``near`` at ``question_similarity``.

    Stems the same once compared pair with the first of their group (ratio 1.0); the first of
    each group goes into the index (module docstring), whose candidates are confirmed.
    """
    keys = [comparable(q.text) for q in questions]
    first: dict[str, int] = {}
    out: list[tuple[int, int, float]] = []
    for j, key in enumerate(keys):
        if not key:
            continue
        i = first.setdefault(key, j)
        if i != j:
            out.append((i, j, 1.0))
    reps = sorted(first.values())
    word_sets = [_content_words(normalise(questions[i].text)) for i in reps]
    for x, y in sorted(index_pairs(word_sets)):
        if _jaccard(word_sets[x], word_sets[y]) < s.prefilter_jaccard - 1e-9:
            continue
        i, j = reps[x], reps[y]
        a, b = questions[i].text, questions[j].text
        ratio = near_keys(keys[i], keys[j], s.question_similarity, a, b)
        if ratio is not None:
            out.append((i, j, ratio))
    return sorted(out)


def duplicate_findings(
    questions: Sequence[Any], pairs: Sequence[tuple[int, int, float]]
) -> list[LintFinding]:
    """L110 on the later question of each pair, naming the most alike earlier one."""
    earlier: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for i, j, ratio in pairs:
        earlier[j].append((ratio, i))
    out = []
    for j in sorted(earlier):
        matches = sorted(earlier[j], key=lambda m: (-m[0], m[1]))
        ratio, i = matches[0]
        also = [questions[k].id for _, k in matches[1:4]]
        more = f" (also {', '.join(also)})" if also else ""
        out.append(
            item_finding(
                "L110",
                questions[j],
                f"the stem near-duplicates {questions[i].id}'s (ratio {ratio:.2f}):"
                f" {show(questions[i].text, 60)}{more}",
            )
        )
    return out


def answered_elsewhere(
    questions: Sequence[Question], s: LintSettings, duplicates: set[tuple[int, int]]
) -> list[LintFinding]:
    """L111: question B's stem gives away question A's key.

    Precisely: A is multiple choice with a key of at least ``giveaway_min_chars`` characters that
    is not in A's own stem; B's stem contains A's key as whole words, none of A's distractors, and
    at least ``cue_topic_words`` of A's topic words, and at least ``cue_topic_share`` of them. A
    topic word is a word of A's stem of four or
    more letters, not a stopword, not a word of the key, and rare in the quiz (in at most
    max(3, 2 % of) the stems, so "game" or "released" in a video-game bank is no topic). The
    finding is on A, naming B. Near-duplicate pairs (L110) are left out.
    """
    stems = [normalise(q.text) for q in questions]
    stem_words = [frozenset(stem.split()) for stem in stems]
    postings: dict[str, set[int]] = defaultdict(set)
    for b, words in enumerate(stem_words):
        for word in words:
            postings[word].add(b)
    rare = max(3, int(0.02 * len(stems)))
    out = []
    for a, q in enumerate(questions):
        if is_boolean(q) or not key_in_range(q):
            continue
        key = normalise(q.options[q.key])
        if len(key) < s.giveaway_min_chars or contains(stems[a], key):
            continue
        key_words = set(key.split())
        lists = sorted((postings.get(w, set()) for w in key_words), key=len)
        if not lists[0]:
            continue
        topic = {
            w
            for w in stem_words[a]
            if len(w) >= 4 and w not in _STOPWORDS and len(postings[w]) <= rare
        } - key_words
        need = max(s.cue_topic_words, 1, math.ceil(s.cue_topic_share * len(topic) - 1e-9))
        if len(topic) < need:
            continue
        # B has the key's words and a topic word: start from whichever stems are fewer.
        topic_lists = [postings[w] for w in topic]
        if sum(map(len, topic_lists)) < len(lists[0]):
            lists.insert(0, set().union(*topic_lists))
        candidates = set.intersection(*lists) - {a}
        norm: list[str] | None = None
        hits: list[tuple[int, list[str]]] = []
        for b in sorted(candidates):
            shared = topic & stem_words[b]
            if len(shared) < need:
                continue  # the cheap test first: most candidates share no topic word
            if (min(a, b), max(a, b)) in duplicates or not contains(stems[b], key):
                continue
            if norm is None:
                norm = [normalise(o) for o in q.options]
            distractors = [o for i, o in enumerate(norm) if i != q.key and len(o) >= 2]
            if any(contains(stems[b], o) for o in distractors):
                continue
            hits.append((b, sorted(shared)))
        if hits:
            b, cue = hits[0]
            also = [questions[k].id for k, _ in hits[1:4]]
            more = f" (also {', '.join(also)})" if also else ""
            out.append(
                item_finding(
                    "L111",
                    q,
                    f"{questions[b].id}'s stem contains the key {show(q.options[q.key])} with"
                    f" this question's words {', '.join(cue[:4])}{more}",
                )
            )
    return out


# --- quiz-level statistics --------------------------------------------------------------------


def _p(value: float) -> str:
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else str(i + 1)


def longest_key_bias(questions: Sequence[Question], s: LintSettings) -> list[LintFinding]:
    hits = 0
    chances: list[float] = []
    for q in questions:
        lengths = [len(normalise(o)) for o in q.options]
        top = max(lengths)
        if lengths.count(top) != 1:
            continue  # tied: no option is strictly the longest
        chances.append(1.0 / len(lengths))
        hits += lengths[q.key] == top
    if len(chances) < s.min_questions:
        return []
    mean = sum(chances) / len(chances)
    pvalue = binomial_pvalue(hits, len(chances), mean, alternative="greater")
    if pvalue >= s.alpha:
        return []
    return [
        quiz_finding(
            "L108",
            f"the key is the strictly longest option in {hits} of {len(chances)} multiple-choice"
            f" questions (chance: {sum(chances):.1f}; binomial p = {_p(pvalue)})",
        )
    ]


_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def key_position_bias(questions: Sequence[Question], s: LintSettings) -> list[LintFinding]:
    groups: dict[int, list[int]] = defaultdict(list)
    for q in questions:
        groups[len(q.options)].append(q.key)
    tested = {n: keys for n, keys in groups.items() if len(keys) >= s.min_questions}
    if not tested:
        return []
    out = []
    alpha = s.alpha / len(tested)
    for n, keys in sorted(tested.items()):
        counts = [keys.count(i) for i in range(n)]
        statistic, pvalue = uniformity_test(counts)
        if pvalue < alpha:
            observed = ", ".join(f"{_letter(i)} {c}" for i, c in enumerate(counts))
            what = _COUNT_WORDS.get(n, str(n))
            out.append(
                quiz_finding(
                    "L109",
                    f"key positions of {len(keys)} {what}-option questions are not uniform:"
                    f" {observed} (chi-square {statistic:.1f}, p = {_p(pvalue)})",
                )
            )
    return out


_EXACT_LIMIT = 50_000  # outcomes enumerated at most by the exact test


def uniformity_test(counts: Sequence[int]) -> tuple[float, float]:
    """Pearson's chi-square of ``counts`` against uniform, and its p-value.

    Exact (the multinomial probability of all outcomes with a statistic at least as large) when
    an expected count is below 5 and the outcomes are few enough to enumerate; else the
    chi-square approximation with k − 1 degrees of freedom.
    """
    total, k = sum(counts), len(counts)
    expected = total / k
    statistic = sum((c - expected) ** 2 for c in counts) / expected if total else 0.0
    if total == 0 or k < 2:
        return statistic, 1.0
    if expected < 5 and math.comb(total + k - 1, k - 1) <= _EXACT_LIMIT:
        # The statistic orders outcomes as the sum of squared counts does.
        observed = sum(c * c for c in counts)
        log_norm = math.lgamma(total + 1) - total * math.log(k)
        pvalue = 0.0
        for outcome in _compositions(total, k):
            if sum(c * c for c in outcome) >= observed:
                pvalue += math.exp(log_norm - sum(math.lgamma(c + 1) for c in outcome))
        return statistic, min(pvalue, 1.0)
    return statistic, chi2_sf(statistic, k - 1)


def _compositions(total: int, parts: int) -> Iterable[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def true_false_imbalance(questions: Sequence[Question], s: LintSettings) -> list[LintFinding]:
    if len(questions) < s.min_questions:
        return []
    trues = sum(normalise(q.options[q.key]) == "true" for q in questions)
    pvalue = binomial_pvalue(trues, len(questions), 0.5)
    if pvalue >= s.alpha:
        return []
    return [
        quiz_finding(
            "L115",
            f"True is the key of {trues} of {len(questions)} true/false questions"
            f" (binomial p = {_p(pvalue)})",
        )
    ]
