"""Finding a generated ``Context`` in the document it claims to quote.

Both texts are normalised the same way before comparing, and every normalised character keeps
the offset of the original character it came from, so a match is reported in the original text:

- runs of whitespace (spaces, tabs, line and page breaks, no-break spaces) become one space,
  and leading/trailing whitespace is dropped;
- compatibility characters are folded with NFKC (ligatures such as "ﬁ" become "fi");
- curly quotes become straight quotes, and en/em dashes, minus signs and non-breaking hyphens
  become "-"; soft hyphens and zero-width characters are dropped;
- a hyphen that ends a line between two letters ("exam-\\nple") is dropped with the break, but a
  Context that kept the hyphen ("exam-ple") is accepted as verbatim too.

Case and punctuation are kept: verbatim means verbatim. A Context found this way is ``exact``.
Otherwise the best fuzzy match is searched: rare words of the Context vote for where it would
start in the document, windows about the Context's length around the best-voted places are
scored with ``difflib.SequenceMatcher.ratio`` (after a ``quick_ratio`` prefilter), and the best
window is refined at word boundaries. At or above ``min_ratio`` it is ``fuzzy`` (located),
below it ``flagged``. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

Status = Literal["exact", "fuzzy", "flagged"]

DEFAULT_MIN_RATIO = 0.9

_TRANSLATE = {
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"), '"'),
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
    **dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), ""),
}
_BREAKS = "\n\r\f\v\u2028\u2029\x1c\x1d\x1e\x85"
_WORD = re.compile(r"\w+")
_MAX_ANCHORS = 8  # rarest Context words whose occurrences vote for a start
_MAX_OCCURRENCES = 400  # an anchor more frequent than this carries no information
_CANDIDATES = 24  # voted starts considered
_SCORED = 3  # starts scored with ratio: best-voted, and best by quick_ratio


@dataclass(frozen=True, slots=True)
class Location:
    """Where a Context was found. ``offset``/``end`` index the original document text.

    ``page`` is 1-based (None for a text file), ``line`` 1-based within the page (PDF) or the
    file. A Context with nothing like it in the document has ratio 0 and no position.
    """

    status: Status
    ratio: float
    offset: int | None = None
    end: int | None = None
    page: int | None = None
    line: int | None = None
    matched: str = ""  # the document text found (for fuzzy and flagged matches)

    @property
    def exact(self) -> bool:
        return self.status == "exact"

    @property
    def located(self) -> bool:
        return self.status != "flagged"


@dataclass(frozen=True, slots=True)
class Normalised:
    text: str
    origin: tuple[int, ...]  # origin[i]: offset in the original text of normalised char i


def normalise(text: str, *, join_hyphens: bool = True) -> Normalised:
    """The normalised text (see the module doc) and, per character, its original offset."""
    out: list[str] = []
    origin: list[int] = []
    pending_space = -1  # original offset of a whitespace run not yet written
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        mapped = ch if ch.isascii() else _fold(ch)
        if not mapped or mapped.isspace():
            if mapped and pending_space < 0:
                pending_space = i
            i += 1
            continue
        if ch == "-" and pending_space < 0 and out and out[-1].isalpha():
            # Line-end hyphenation: "-", whitespace containing a line break, then a letter.
            j = i + 1
            while j < n and text[j].isspace() and text[j] not in _BREAKS:
                j += 1
            if j < n and text[j] in _BREAKS:
                while j < n and text[j].isspace():
                    j += 1
                if j < n and text[j].isalpha():
                    if not join_hyphens:
                        out.append("-")
                        origin.append(i)
                    i = j
                    continue
        if pending_space >= 0:
            if out:
                out.append(" ")
                origin.append(pending_space)
            pending_space = -1
        for m in mapped:
            out.append(m)
            origin.append(i)
        i += 1
    return Normalised("".join(out), tuple(origin))


def _fold(ch: str) -> str:
    """One non-ASCII character, folded: quotes and dashes straightened, NFKC, invisibles gone."""
    folded = unicodedata.normalize("NFKC", ch.translate(_TRANSLATE)).translate(_TRANSLATE)
    return " " if folded.isspace() else folded


def line_starts(text: str) -> tuple[int, ...]:
    """Offsets at which each line of ``text`` starts (the first is 0)."""
    return (0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text)))


def text_position(
    offset: int, lines: Sequence[int], page_starts: Sequence[int] = ()
) -> tuple[int | None, int]:
    """(page, line), both 1-based, of an offset, given where lines (and pages) start.

    Without pages the line counts from the start of the text; with pages, from the page's start.
    """
    line = bisect_right(lines, offset)
    if not page_starts:
        return None, line
    page = max(1, bisect_right(page_starts, offset))
    first_line = bisect_right(lines, page_starts[page - 1])
    return page, line - first_line + 1


class Locator:
    """Locates many Contexts in one document; the document is normalised and indexed once.

    ``page_starts`` are the offsets at which pages start (PDF); empty for a text file.
    """

    def __init__(
        self,
        text: str,
        page_starts: Sequence[int] = (),
        *,
        min_ratio: float = DEFAULT_MIN_RATIO,
    ) -> None:
        self.text = text
        self.page_starts = tuple(page_starts)
        self.min_ratio = min_ratio
        self._lines = line_starts(text)
        self._doc = normalise(text)
        self._doc_hyphens = normalise(text, join_hyphens=False)
        words = list(_WORD.finditer(self._doc.text))
        self._word_starts = [m.start() for m in words]
        self._word_ends = [m.end() for m in words]
        self._where: dict[str, list[int]] = {}
        for index, m in enumerate(words):
            self._where.setdefault(m.group().casefold(), []).append(index)

    # -- positions ---------------------------------------------------------------------------

    def position(self, offset: int) -> tuple[int | None, int]:
        """(page, line) of an original offset: line within the page for a PDF, else in the file."""
        return text_position(offset, self._lines, self.page_starts)

    def _location(self, status: Status, ratio: float, doc: Normalised, a: int, b: int) -> Location:
        start = doc.origin[a]
        end = doc.origin[b - 1] + 1
        page, line = self.position(start)
        matched = "" if status == "exact" else self.text[start:end]
        return Location(status, round(ratio, 4), start, end, page, line, matched)

    # -- locating ----------------------------------------------------------------------------

    def locate(self, context: str) -> Location:
        wanted = normalise(context).text
        if not wanted:
            return Location("flagged", 0.0)
        for doc in (self._doc, self._doc_hyphens):
            at = doc.text.find(wanted)
            if at >= 0:
                return self._location("exact", 1.0, doc, at, at + len(wanted))
        found = self._fuzzy(wanted)
        if found is None:
            return Location("flagged", 0.0)
        ratio, a, b = found
        status: Status = "fuzzy" if ratio >= self.min_ratio else "flagged"
        return self._location(status, ratio, self._doc, a, b)

    def _fuzzy(self, wanted: str) -> tuple[float, int, int] | None:
        """(ratio, start, end) of the best window in the normalised document, if it has words."""
        if not self._word_starts:
            return None
        score = _Scorer(self._doc.text, wanted)
        starts = self._voted_starts(wanted) or self._scanned_starts(wanted, score)
        length = len(wanted)
        # The best-voted starts, and the best of the rest by quick_ratio, are scored in full.
        quick = sorted(
            ((score(self._word_starts[s], self._word_starts[s] + length, True), s) for s in starts),
            reverse=True,
        )
        chosen = dict.fromkeys([*starts[:_SCORED], *(s for _, s in quick[:_SCORED])])
        best: tuple[float, int, int] = (-1.0, 0, 0)
        for s in chosen:
            a = self._word_starts[s]
            ratio = score(a, min(len(self._doc.text), a + length))
            if ratio > best[0]:
                best = (ratio, a, min(len(self._doc.text), a + length))
        return self._refine(best, score)

    def _voted_starts(self, wanted: str) -> list[int]:
        """Word indexes where the Context would start, voted for by its rarest words."""
        context_words = [w.casefold() for w in _WORD.findall(wanted)]
        known = [
            (len(self._where[w]), k, w)
            for k, w in enumerate(context_words)
            if w in self._where and len(self._where[w]) <= _MAX_OCCURRENCES
        ]
        known.sort()
        votes: Counter[int] = Counter()
        for _, k, w in known[:_MAX_ANCHORS]:
            for p in self._where[w]:
                votes[max(0, p - k)] += 1
        return [s for s, _ in votes.most_common(_CANDIDATES)]

    def _scanned_starts(self, wanted: str, score: _Scorer) -> list[int]:
        """No word in common: every few words, the windows with the best quick_ratio."""
        step = max(1, len(_WORD.findall(wanted)) // 3)
        length = len(wanted)
        scored = [
            (score(self._word_starts[s], self._word_starts[s] + length, quick=True), s)
            for s in range(0, len(self._word_starts), step)
        ]
        scored.sort(reverse=True)
        return [s for _, s in scored[:_CANDIDATES]]

    def _refine(self, best: tuple[float, int, int], score: _Scorer) -> tuple[float, int, int]:
        """Move the best window's start, then its end, to the neighbouring word boundaries."""
        ratio, a, b = best
        starts, ends = self._word_starts, self._word_ends
        i = bisect_right(starts, a) - 1
        for j in range(max(0, i - 3), min(len(starts), i + 4)):
            cand_b = max(b, starts[j] + 1)
            r = score(starts[j], cand_b)
            if r > ratio:
                ratio, a, b = r, starts[j], cand_b
        # The end goes to a word end (the best near the window's end), never inside a word.
        e = max(0, bisect_right(ends, b) - 1)
        ratio = -1.0
        for j in range(max(0, e - 3), min(len(ends), e + 5)):
            if ends[j] <= a:
                continue
            r = score(a, ends[j])
            if r > ratio:
                ratio, b = r, ends[j]
        # A Context may end in punctuation after its last word.
        end = b
        while end < len(self._doc.text) and end - b < 2 and _is_punctuation(self._doc.text[end]):
            end += 1
            r = score(a, end)
            if r > ratio:
                ratio, b = r, end
        return ratio, a, b


def _is_punctuation(ch: str) -> bool:
    return not ch.isalnum() and not ch.isspace()


class _Scorer:
    """Scores windows of the normalised document against one Context."""

    def __init__(self, doc: str, wanted: str) -> None:
        self.doc = doc
        self.matcher = SequenceMatcher(None, autojunk=False)
        self.matcher.set_seq2(wanted)  # the Context is seq2: difflib caches its index

    def __call__(self, a: int, b: int, quick: bool = False) -> float:
        self.matcher.set_seq1(self.doc[a:b])
        return self.matcher.quick_ratio() if quick else self.matcher.ratio()


def locate(
    context: str,
    document: str,
    page_starts: Sequence[int] = (),
    *,
    min_ratio: float = DEFAULT_MIN_RATIO,
) -> Location:
    """Locate one Context (for many Contexts in one document, build a :class:`Locator` once)."""
    return Locator(document, page_starts, min_ratio=min_ratio).locate(context)
