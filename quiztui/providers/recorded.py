"""A judge that answers from a file: one model's recorded answers (``formats/recorded.py``).

It stands where a model would in a per-question (``mode = "question"``) vet run: its label names
the model and the file, it sends nothing (0 requests, 0 tokens, cost $0) and it is not
simulated. A run over it takes every answer at once (``pipeline/recorded.RecordedVetRun``);
``complete`` still answers a per-question prompt from the file, by the question and options the
prompt shows, so any path that asks it gets the recorded answer. A question edited since (its
text or options differ from the quiz the answers were joined to) has no recorded answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from quiztui.core.assertions import sanitise
from quiztui.core.quiz import Question, Quiz
from quiztui.core.recorded import LETTERS, RecordedJudge, norm
from quiztui.providers.base import ChatRequest, ChatResult, OnLogprobs, OnRetry, OnText, Usage

EDITED = "no recorded answer: the question was edited after its answers were recorded"
NOT_IN_FILE = "no recorded answer: the question is not in the answers file"
_QUESTION = re.compile(r"^Question: (?P<q>.*)$")
_OPTION = re.compile(r"^(?P<letter>[A-Z])\) (?P<opt>.*)$")


class RecordedProvider:
    name = "recorded"
    simulated = False

    def __init__(self, judge: RecordedJudge, quiz: Quiz) -> None:
        self.judge = judge
        self.model = judge.model
        self.base_url = f"file:{judge.source}"
        self.usage = Usage(limit=1)
        self.questions = {q.id: q for q in quiz.questions}
        self._by_prompt: dict[tuple[str, ...], str] | None = None  # made on the first prompt

    @property
    def label(self) -> str:
        return self.judge.label

    def answer(self, question: Question) -> tuple[int | None, str]:
        """(the option the model chose, what it said as a verdict reason), or (None, why it has
        no usable answer) — the unjudged reason."""
        original = self.questions.get(question.id)
        if original is None:
            return None, NOT_IN_FILE
        if original.text != question.text or original.options != question.options:
            return None, EDITED
        found = self.judge.answers.get(question.id)
        if found is None:
            return None, NOT_IN_FILE
        file, _, line = found.where.rpartition(":")
        where = f"{file.rpartition('/')[2]}:{line}"
        if found.option is None:
            return None, f"recorded answer unusable: {found.reason} ({where})"
        given = " ".join(found.given.split())
        if len(given) > 60:
            given = given[:59] + "…"
        return found.option, f"chose {LETTERS[found.option]}: recorded answer {given!r} ({where})"

    async def complete(
        self,
        request: ChatRequest,
        *,
        on_text: OnText | None = None,
        on_retry: OnRetry | None = None,
        on_logprobs: OnLogprobs | None = None,
    ) -> ChatResult:
        """The recorded answer to the per-question prompt, in the reply format the per-question
        parser reads ("Answer: C — …"); a prompt it cannot place, or an unusable answer, gets
        a reply that names no option. Nothing is sent, so nothing is counted."""
        text, options = _read_prompt(request.messages[-1][1])
        if self._by_prompt is None:
            self._by_prompt = {_key(q.text, q.options): q.id for q in self.questions.values()}
        qid = self._by_prompt.get(_key(text, options, sanitised=True))
        if qid is None:
            reply = f"No option: {NOT_IN_FILE}\n"
        else:
            option, said = self.answer(self.questions[qid])
            reply = f"No option: {said}\n" if option is None else f"Answer: {said[6:]}\n"
        if on_text is not None:
            on_text(reply)
        return ChatResult(reply, 0, 0, "stop")

    async def aclose(self) -> None:
        return None


def _key(text: str, options: Sequence[str], *, sanitised: bool = False) -> tuple[str, ...]:
    if sanitised:
        return (norm(text), *(norm(o) for o in options))
    return (norm(sanitise(text)), *(norm(sanitise(o)) for o in options))


def _read_prompt(prompt: str) -> tuple[str, list[str]]:
    """The question and options a per-question prompt shows (core/question_mode's layout)."""
    question = ""
    options: list[str] = []
    for line in prompt.splitlines():
        m = _QUESTION.match(line.strip())
        if m and not question:
            question = m.group("q")
            continue
        m = _OPTION.match(line.strip())
        if m and question and m.group("letter") == LETTERS[len(options)]:
            options.append(m.group("opt"))
    return question, options


__all__ = ["EDITED", "NOT_IN_FILE", "RecordedProvider"]
