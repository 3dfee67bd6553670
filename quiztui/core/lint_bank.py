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
from array import array
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
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


def _word_ids(word_sets: Iterable[Iterable[str]]) -> tuple[Any, Any]:
    """The word sets as word ids, flat, and each set's size (the ids of set i follow set i-1's).

    A word's id is its rank in the sorted vocabulary, so ordering ids orders the words. The
    sets' words must be distinct; each set is read once (a generator is fine) and no set is kept.
    """
    import numpy as np

    vocab: dict[str, int] = {}
    flat = array("q")  # ids numbered as first seen
    sizes = array("q")
    for words in word_sets:
        before = len(flat)
        flat.extend(vocab.setdefault(w, len(vocab)) for w in words)
        sizes.append(len(flat) - before)
    rank = np.empty(len(vocab), dtype=np.int64)
    for r, w in enumerate(sorted(vocab)):
        rank[vocab[w]] = r
    return rank[np.frombuffer(flat, dtype=np.int64)], np.frombuffer(sizes, dtype=np.int64)


def _rows(sizes: Any, rows: Any) -> tuple[Any, Any]:
    """For the given rows of a flat ragged array: the flat positions of their items, in row
    order, and for each item the index of its row in ``rows``."""
    import numpy as np

    starts = np.cumsum(sizes) - sizes
    lengths = sizes[rows]
    label = np.repeat(np.arange(len(rows)), lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return starts[rows][label] + offsets, label


def _candidates(ids: Any, sizes: Any) -> tuple[Any, Any]:
    """Index pairs (i < j, sorted) that share a blocking key (``index_pairs``), as two arrays.

    Vectorised with numpy: a key is a 64-bit random number per word (a rare word's key) or the
    sum of the words' numbers but one (a leave-one-out key: a set's sum, less the word's number),
    so no tuple of words is ever built; two different keys sharing a number is a chance of about
    one in 10^7 at 100,000 texts, and would only add a candidate for ``near`` to reject.
    """
    import numpy as np

    n = len(sizes)
    owner = np.repeat(np.arange(n), sizes)
    numbers = (
        np.random.default_rng(17)
        .integers(0, np.iinfo(np.int64).max, size=(2, int(ids.max(initial=0)) + 1), dtype=np.int64)
        .view(np.uint64)
    )
    df = np.bincount(ids)[ids]
    # The _INDEX_WORDS rarest words of each set (fewest sets, then the word), if in another set.
    order = np.lexsort((ids, df, owner))
    starts = np.cumsum(sizes) - sizes
    rank = np.arange(len(ids)) - starts[owner[order]]
    rare = order[(rank < _INDEX_WORDS) & (df[order] > 1)]
    # Every set of two or more words without one of them.
    word_number = numbers[1][ids]
    total = np.concatenate((np.zeros(1, np.uint64), np.cumsum(word_number, dtype=np.uint64)))
    set_sum = total[starts + sizes] - total[starts]
    several = sizes[owner] >= 2
    keys = np.concatenate((numbers[0][ids[rare]], (set_sum[owner] - word_number)[several]))
    who = np.concatenate((owner[rare], owner[several]))
    order = np.argsort(keys, kind="stable")
    keys, who = keys[order], who[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    counts = np.diff(np.r_[first, len(keys)])
    codes = [np.empty(0, dtype=np.int64)]
    for size in range(2, _MAX_POSTING + 1):  # keys shared by more sets block nothing
        groups = first[counts == size]
        if not len(groups):
            continue
        members = np.sort(who[groups[:, None] + np.arange(size)], axis=1)
        left, right = np.triu_indices(size, 1)
        i, j = members[:, left].ravel(), members[:, right].ravel()
        codes.append((i * n + j)[i < j])
    pairs = np.sort(np.concatenate(codes))
    if len(pairs):
        pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]]  # np.unique, ten times faster here
    return pairs // n, pairs % n


def _shared_words(ids: Any, sizes: Any, left: Any, right: Any) -> Any:
    """How many words the sets ``left[k]`` and ``right[k]`` share, for every k."""
    import numpy as np

    out = np.zeros(len(left), dtype=np.int64)
    vocabulary = int(ids.max(initial=0)) + 1
    step = 100_000  # pairs at a time: a few megabytes of arrays
    for lo in range(0, len(left), step):
        rows = np.concatenate((left[lo : lo + step], right[lo : lo + step]))
        at, label = _rows(sizes, rows)
        label %= len(rows) // 2  # the pair of each word
        code = np.sort(label * vocabulary + ids[at])  # a word of both sets appears twice
        twice = code[1:][code[1:] == code[:-1]] // vocabulary
        out[lo : lo + step] = np.bincount(twice, minlength=len(rows) // 2)
    return out


def index_pairs(word_sets: Sequence[Collection[str]]) -> set[tuple[int, int]]:
    """Pairs (i < j) of texts that may be near-duplicates (see the module docstring).

    Two blocking keys: one of a text's ``_INDEX_WORDS`` rarest words, or its content words but
    one (so two texts differing in one misspelled word share a key). Keys shared by more than
    ``_MAX_POSTING`` texts block nothing.
    """
    ids, sizes = _word_ids(word_sets)
    left, right = _candidates(ids, sizes)
    return set(zip(left.tolist(), right.tolist(), strict=True))


def near_duplicate_questions(
    questions: Sequence[Any],
    s: LintSettings,
    *,
    compared: Sequence[str] | None = None,
    stems: Sequence[str] | None = None,
) -> list[tuple[int, int, float]]:
    """(i, j, ratio) for questions (i < j) whose stems are ``near`` at ``question_similarity``.

    Stems the same once compared pair with the first of their group (ratio 1.0); the first of
    each group goes into the index (module docstring), whose candidates need the content-word
    Jaccard ``prefilter_jaccard`` (computed for all candidates at once) and are confirmed with
    ``near_keys``. ``compared`` and ``stems``: the stems' ``comparable`` and ``normalise``
    forms, when the caller has them.
    """
    keys = compared if compared is not None else [comparable(q.text) for q in questions]
    first: dict[str, int] = {}
    out: list[tuple[int, int, float]] = []
    for j, key in enumerate(keys):
        if not key:
            continue
        i = first.setdefault(key, j)
        if i != j:
            out.append((i, j, 1.0))
    reps = sorted(first.values())
    del first
    ids, sizes = _word_ids(
        _content_words(stems[i] if stems is not None else normalise(questions[i].text))
        for i in reps
    )
    left, right = _candidates(ids, sizes)
    shared = _shared_words(ids, sizes, left, right)
    union = sizes[left] + sizes[right] - shared
    jaccard = shared / union.clip(min=1)
    keep = ~(jaccard < s.prefilter_jaccard - 1e-9)
    for x, y in zip(left[keep].tolist(), right[keep].tolist(), strict=True):
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
    questions: Sequence[Question],
    s: LintSettings,
    duplicates: set[tuple[int, int]],
    *,
    stems: Sequence[str] | None = None,
    keys: Sequence[str] | None = None,
) -> list[LintFinding]:
    """L111: question B's stem gives away question A's key.

    Precisely: A is multiple choice with a key of at least ``giveaway_min_chars`` characters that
    is not in A's own stem; B's stem contains A's key as whole words, none of A's distractors, and
    at least ``cue_topic_words`` of A's topic words, and at least ``cue_topic_share`` of them. A
    topic word is a word of A's stem of four or
    more letters, not a stopword, not a word of the key, and rare in the quiz (in at most
    max(3, 2 % of) the stems, so "game" or "released" in a video-game bank is no topic). The
    finding is on A, naming B. Near-duplicate pairs (L110) are left out. ``stems`` and
    ``keys``: the stems and the keys normalised, when the caller has them ("" for a key not
    looked for: a True/False question's, one out of range).
    """
    if stems is None:
        stems = [normalise(q.text) for q in questions]
    # Stems per word for the words that can be topic words only (the rare ones); the rest of a
    # stem's words are split again when needed, so no word set per stem is kept.
    df: Counter[str] = Counter()
    for stem in stems:
        df.update(set(stem.split()))
    rare = max(3, int(0.02 * len(stems)))
    postings: dict[str, set[int]] = {}
    for b, stem in enumerate(stems):
        for word in set(stem.split()):
            if df[word] <= rare and len(word) >= 4 and word not in _STOPWORDS:
                postings.setdefault(word, set()).add(b)
    out = []
    for a, q in enumerate(questions):
        if keys is not None:
            key = keys[a]  # "" for a True/False question or a key out of range
        elif is_boolean(q) or not key_in_range(q):
            continue
        else:
            key = normalise(q.options[q.key])
        stem = stems[a]
        if not key or len(key) < s.giveaway_min_chars or contains(stem, key):
            continue
        key_words = set(key.split())
        if not all(w in df for w in key_words):
            continue  # no stem has the key
        topic = {w for w in stem.split() if w in postings} - key_words
        need = max(s.cue_topic_words, 1, math.ceil(s.cue_topic_share * len(topic) - 1e-9))
        if len(topic) < need:
            continue
        # B has the key's words and ``need`` topic words: with two or more needed, B is in the
        # stems of some pair of topic words (set intersections, each as long as the rarer word's
        # stems), which are far fewer than the stems of any one word. A key word rare enough to
        # have its stems listed narrows every topic word's stems to those first.
        topic_lists = sorted((postings[w] for w in topic), key=len)
        key_lists = [postings[w] for w in key_words if w in postings]
        if key_lists:
            narrow = min(key_lists, key=len)
            topic_lists = sorted((t & narrow for t in topic_lists), key=len)
        if need == 1:
            candidates = set().union(*topic_lists)
        else:
            candidates = set()
            for x, rarer in enumerate(topic_lists):
                for other in topic_lists[x + 1 :]:
                    candidates |= rarer & other
        candidates.discard(a)
        norm: list[str] | None = None
        hits: list[tuple[int, list[str]]] = []
        for b in sorted(candidates):
            if not contains(stems[b], key):
                continue  # the cheap test first: most candidates do not have the key
            shared = topic & set(stems[b].split())
            if len(shared) < need or (min(a, b), max(a, b)) in duplicates:
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


def longest_key_bias(
    questions: Sequence[Question],
    s: LintSettings,
    option_lengths: Sequence[Sequence[int]] | None = None,
) -> list[LintFinding]:
    """L108 (module docstring); ``option_lengths``: each question's options' normalised lengths."""
    hits = 0
    chances: list[float] = []
    for n, q in enumerate(questions):
        if option_lengths is not None:
            lengths = list(option_lengths[n])
        else:
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
