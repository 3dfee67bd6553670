"""Lint rules across questions: near-duplicate stems, stems that answer other questions, and
quiz-level statistics.

Near-duplicate questions (L110) are found among the ``candidate_pairs`` a prefix-filtered
content-word Jaccard lets through, then confirmed with ``near``; L111 flags a stem that gives
another question's key away.

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
    near,
    normalise,
    show,
)
from quiztui.core.lint_model import LintFinding, LintSettings, item_finding, quiz_finding
from quiztui.core.pvalues import binomial_pvalue, chi2_sf
from quiztui.core.quiz import Question

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


def candidate_pairs(texts: Sequence[str], jaccard: float) -> list[tuple[int, int]]:
    """Pairs (i < j) of normalised texts whose content-word sets have Jaccard >= ``jaccard``.

    All-pairs with prefix filtering (Bayardo, Ma and Srikant, "Scaling up all pairs similarity
    search", WWW 2007): texts are visited from the fewest words up, each word set ordered rarest
    word first; two sets with Jaccard >= t share a word within the first |x| - ceil(t·|x|) + 1
    words of the one visited later and the first |y| - ceil(2t/(1+t)·|y|) + 1 of the earlier one,
    so only those prefixes are indexed, and a set smaller than t·|x| is skipped. Common words never
    make candidates, which keeps a bank of thousands of stems far from N² comparisons. Exact for
    this Jaccard; as a prefilter for ``near`` it is generous, since near-duplicates share nearly
    all their content words.
    """
    sets = [_content_words(t) for t in texts]
    df = Counter(w for s in sets for w in s)
    order = sorted((i for i in range(len(sets)) if sets[i]), key=lambda i: (len(sets[i]), i))
    index_share = 2 * jaccard / (1 + jaccard)
    index: dict[str, list[int]] = defaultdict(list)
    out: list[tuple[int, int]] = []
    for x in order:
        words = sorted(sets[x], key=lambda w: (df[w], w))
        size = len(words)
        probe = size - math.ceil(jaccard * size - 1e-9) + 1
        seen: set[int] = set()
        for w in words[:probe]:
            for y in index.get(w, ()):
                if y not in seen and len(sets[y]) >= jaccard * size - 1e-9:
                    seen.add(y)
        for y in seen:
            shared = len(sets[x] & sets[y])
            if shared >= jaccard * (size + len(sets[y]) - shared) - 1e-9:
                out.append((min(x, y), max(x, y)))
        for w in words[: size - math.ceil(index_share * size - 1e-9) + 1]:
            index[w].append(x)
    return sorted(out)


def near_duplicate_questions(
    questions: Sequence[Any], s: LintSettings
) -> list[tuple[int, int, float]]:
    """(i, j, ratio) for questions (i < j) whose stems are ``near`` at ``question_similarity``."""
    norm = [normalise(q.text) for q in questions]
    out = []
    for i, j in candidate_pairs(norm, s.prefilter_jaccard):
        ratio = near(questions[i].text, questions[j].text, s.question_similarity)
        if ratio is not None:
            out.append((i, j, ratio))
    return out


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
    postings: dict[str, set[int]] = defaultdict(set)
    for b, stem in enumerate(stems):
        for word in stem.split():
            postings[word].add(b)
    rare = max(3, int(0.02 * len(stems)))
    out = []
    for a, q in enumerate(questions):
        if is_boolean(q) or not key_in_range(q):
            continue
        norm = [normalise(o) for o in q.options]
        key = norm[q.key]
        if len(key) < s.giveaway_min_chars or contains(stems[a], key):
            continue
        key_words = set(key.split())
        candidates = set.intersection(*(postings.get(w, set()) for w in key_words)) - {a}
        if not candidates:
            continue
        topic = {
            w
            for w in stems[a].split()
            if len(w) >= 4 and w not in _STOPWORDS and len(postings[w]) <= rare
        } - key_words
        distractors = [o for i, o in enumerate(norm) if i != q.key and len(o) >= 2]
        hits = []
        for b in sorted(candidates):
            if (min(a, b), max(a, b)) in duplicates or not contains(stems[b], key):
                continue
            if any(contains(stems[b], o) for o in distractors):
                continue
            shared = sorted(topic & set(stems[b].split()))
            if len(shared) >= max(s.cue_topic_words, 1) and len(shared) >= s.cue_topic_share * len(
                topic
            ):
                hits.append((b, shared))
        if hits:
            b, shared = hits[0]
            also = [questions[k].id for k, _ in hits[1:4]]
            more = f" (also {', '.join(also)})" if also else ""
            out.append(
                item_finding(
                    "L111",
                    q,
                    f"{questions[b].id}'s stem contains the key {show(q.options[q.key])} with"
                    f" this question's words {', '.join(shared[:4])}{more}",
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
