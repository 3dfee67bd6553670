"""Per-question judging (seed 000, "An Alternative Approach"): one request per question.

The judge sees the question and its lettered options and names the option it believes correct.
Its answer becomes one verdict per option — TRUE for the chosen option, FALSE for the others — so
per-question mode is scored, calibrated and stored exactly like assertion mode, and the two can be
compared on the same gold set with the same TPR/TNR.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence

from quiztui.core.assertions import Assertion, assertion_text, batch_ids, sanitise
from quiztui.core.replies import JSONRefused
from quiztui.core.verdicts import ParsedVerdict, StreamingVerdictParser, line_object

LETTERS = string.ascii_uppercase

_ANSWER = re.compile(
    r"^[\s>*#`\-•·+]*(?:the\s+)?(?:final\s+)?(?:answer|correct(?:\s+option)?|option|choice)\b[\s*_`\"']*"
    r"(?:is\b)?[\s:=\-–—>→]*[\s*_`\"'(\[]*(?P<letter>[A-Z])\b[\s*_`\"')\].,:;\-–—|]*(?P<reason>.*)$",
    re.IGNORECASE,
)
_BARE = re.compile(
    r"^[\s>*#`\-•·+]*[\s*_`\"'(\[]*(?P<letter>[A-Z])[*_`\"']*(?:[)\].:]|\s*$|\s+-)[\s*_`\"')\].,:;\-–—|]*(?P<reason>.*)$"
)
ECHOED = "echoed the prompt"  # the unjudged reasons of a per-question reply without an answer
NO_OPTION = "named no option"
_QUESTION_LINE = re.compile(r"^Question: (?P<q>.*)$")
_OPTION_LINE = re.compile(r"^(?P<letter>[A-Z])\) (?P<opt>.*)$")


def render_question(template: str, question_text: str, options: Sequence[str]) -> str:
    """Fill the per-question template; plain replacement, so braces in quiz text are harmless."""
    letters = LETTERS[: len(options)]
    lines = "\n".join(f"{L}) {sanitise(o)}" for L, o in zip(letters, options, strict=False))
    shown = ", ".join(letters)
    return (
        template.replace("{letters}", shown)
        .replace("{options}", lines)
        .replace("{question}", sanitise(question_text))
    )


def parse_rendered_question(prompt: str) -> list[str] | None:
    """Inverse of :func:`render_question` for oracles: the assertion text of each option."""
    question = None
    options: list[str] = []
    for line in prompt.splitlines():
        m = _QUESTION_LINE.match(line.strip())
        if m and question is None:
            question = m.group("q")
            continue
        m = _OPTION_LINE.match(line.strip())
        if m and question is not None and m.group("letter") == LETTERS[len(options)]:
            options.append(m.group("opt"))
    if question is None or len(options) < 2:
        return None
    return [assertion_text(question, o) for o in options]


def parse_choice_line(line: str, n: int) -> tuple[int, str] | None:
    """The option index (and reason) a reply line names, or None."""
    return read_choice_line(line, n)[0]


def read_choice_line(line: str, n: int) -> tuple[tuple[int, str] | None, str | None]:
    """(:func:`parse_choice_line`'s answer, why the line's JSON was refused or None)."""
    text = line.strip()
    if not text:
        return None, None
    refused = None
    if "{" in text:
        try:
            obj = line_object(text)
        except JSONRefused as exc:
            obj, refused = None, str(exc)
        if obj is not None:
            raw = obj.get("answer") or obj.get("option") or obj.get("choice")
            if (
                isinstance(raw, str)
                and len(raw.strip()) == 1
                and raw.strip().upper() in LETTERS[:n]
            ):
                choice = LETTERS.index(raw.strip().upper()), str(obj.get("reason") or "").strip()
                return choice, None
    return _choice_from_words(text, n), refused


def _choice_from_words(text: str, n: int) -> tuple[int, str] | None:
    for pattern in (_ANSWER, _BARE):
        m = pattern.match(text)
        if m:
            letter = m.group("letter").upper()
            if letter in LETTERS[:n]:
                return LETTERS.index(letter), m.group("reason").strip().strip("*_`").strip()
    return None


class QuestionVerdictParser(StreamingVerdictParser):
    """The streaming parser's line handling; a chosen option becomes one verdict per option.

    ``ids`` are the batch ids in option order; ``prompt`` is the question as sent. The reply is
    judged for what it is, when it ends (:meth:`close` gives the verdicts): the last line naming
    an existing option is the answer; lines that repeat the prompt are not answers. A reply that
    repeats the prompt (the question line, or two or more option lines) and names no option
    otherwise sets ``problem`` to :data:`ECHOED`; one that names no option, to :data:`NO_OPTION`.
    A lone repeated option line ("C) Rome") is an answer.
    """

    def __init__(self, ids: Sequence[str], prompt: str = "") -> None:
        super().__init__(ids)
        self._ids = list(ids)
        self._prompt_lines = {k for k in map(_norm, prompt.splitlines()) if k}
        self._choice: tuple[int, str] | None = None
        self._echoed_options: dict[str, tuple[int, str]] = {}
        self._echoed_other = False
        self._lines: list[str] = []  # the whole reply, for a JSON answer written over lines
        self.problem: str | None = None

    def _parse(self, lines: list[str]) -> list[ParsedVerdict]:
        self._lines += lines
        for line in lines:
            found, refused = read_choice_line(line, len(self._ids))
            self.refused = refused or self.refused
            key = _norm(line)
            if key and key in self._prompt_lines:
                if found is not None and _OPTION_LINE.match(line.strip()):
                    self._echoed_options[key] = found
                else:
                    self._echoed_other = True
                continue
            if found is not None:
                self._choice = found
        return []

    def close(self) -> list[ParsedVerdict]:
        super().close()
        choice = self._choice
        echoed = self._echoed_other or len(self._echoed_options) > 1
        if choice is None and len(self._echoed_options) == 1 and not echoed:
            choice = next(iter(self._echoed_options.values()))
        if choice is None and "{" in "".join(self._lines):  # JSON over several lines
            choice, refused = read_choice_line(" ".join(self._lines), len(self._ids))
            self.refused = refused or self.refused
        if choice is None:
            note = f" ({self.refused})" if self.refused else ""  # JSON past the caps
            self.problem = ECHOED if echoed else NO_OPTION + note
            return []
        index, reason = choice
        said = f"chose {LETTERS[index]}" + (f": {reason}" if reason else "")
        return [ParsedVerdict(i, n == index, said) for n, i in enumerate(self._ids)]


def answer_schema(n: int) -> str:
    """The JSON schema of a structured per-question reply, as JSON text: ``{"answer": "C",
    "reason": "..."}`` with the answer one of the question's ``n`` letters."""
    schema = {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "enum": list(LETTERS[:n])},
            "reason": {"type": "string"},
        },
        "required": ["answer", "reason"],
        "additionalProperties": False,
    }
    return json.dumps(schema, separators=(",", ":"))


def _norm(line: str) -> str:
    return " ".join(line.split()).casefold()


def render_question_batch(
    template: str, question_text: str, items: Sequence[Assertion]
) -> tuple[str, dict[str, Assertion]]:
    """One question's assertions (all its options, in option order) → prompt and id map."""
    items = sorted(items, key=lambda a: a.option_index)
    ids = batch_ids(len(items))
    prompt = render_question(template, question_text, [a.option for a in items])
    return prompt, dict(zip(ids, items, strict=True))
