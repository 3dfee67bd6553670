"""Issue 31: real-shaped Moodle 4.x exports round-trip without loss.

The fixture ``fixtures/moodle_xml/moodle4_mixed_export.xml`` is written for these tests in the
shape Moodle 4.x exports (qformat_xml::writequestion): categories with info and idnumber, code
options that differ only by quotes, case or layout, an embedded image, a tick-all multichoice,
a multichoiceset, a cloze question with backslashes, ``}`` and a line break in its blanks,
negative and partial weights, and a type quiztui keeps verbatim (ddwtos). Each test names the
Moodle rule it checks and the file of Moodle's source that holds it.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiztui.core.bank import Choice, SubQuestion, Text
from quiztui.formats import cloze, moodle_xml

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "moodle_xml" / "moodle4_mixed_export.xml"


def fixture_bank() -> moodle_xml.Bank:
    return moodle_xml.parse_bank(FIXTURE.read_text(encoding="utf-8"), str(FIXTURE), "mixed")


def by_title(bank: moodle_xml.Bank, title: str) -> moodle_xml.Item:
    return next(item for item in bank.items if item.title == title)


# --- Cloze (embedded answers) ------------------------------------------------------------------


def test_cloze_blanks_are_read_with_moodles_own_escapes() -> None:
    """question/type/multianswer/questiontype.php, qtype_multianswer_extract_question: an
    answer ends at the first ``~``, ``#`` or ``}`` not just after a backslash
    (ANSWER_ALTERNATIVE_ANSWER_REGEX), only ``\\}`` and ``\\#`` are decoded, and the regex runs
    with /s, so a backslash before any other character and a line break are answer text."""
    item = by_title(fixture_bank(), "Pfade und Klammern")
    answers = [
        [(c.text.text, c.feedback.text if c.feedback else None) for c in s.choices]
        for s in item.subquestions
    ]
    assert answers == [
        [("C:\\Windows\\System32", "Richtig: C:\\Windows\\System32")],
        [("\\{1, 2}", "Mit } geschlossen")],  # Moodle keeps "\{": it decodes only \} and \#
        [("//", None), ("#", "In Bash: #"), ("/*", None)],
        [("erste\nzweite", None)],
    ]


def test_cloze_question_text_is_written_back_byte_for_byte() -> None:
    """question/format/xml/format.php imports a cloze question's text whole and
    qtype_multianswer re-reads the blanks from it: XML -> XML writes the same text."""
    source = FIXTURE.read_text(encoding="utf-8")
    start = source.index("<p>Der Systemordner")
    original = source[start : source.index("]]></text>", start)]
    written = moodle_xml.write_bank(fixture_bank())
    assert original in written
    again = moodle_xml.write_bank(moodle_xml.parse_bank(written, "w.xml", "w"))
    assert again == written


ANSWER_TEXT = (
    st.lists(st.sampled_from([*"ab \\}{#~=%&;:\n", "&amp;", "&#39;", "é"]), min_size=1, max_size=8)
    .map("".join)
    .filter(lambda t: t.strip() != "")
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    answers=st.lists(ANSWER_TEXT, min_size=2, max_size=3),
    feedback=st.one_of(st.none(), ANSWER_TEXT),
)
def test_an_edited_blank_is_written_so_moodles_reader_reads_it_back(
    answers: list[str], feedback: str | None
) -> None:
    """qtype_multianswer_extract_question (ANSWER_REGEX, the \\} / \\# decoding): whatever the
    answers and feedback hold, the blank written for Moodle reads back as the same blank (the
    same text shown: an answer may end in an entity where Moodle could not end it otherwise),
    and writing what was read gives the same bytes."""
    choices = tuple(
        Choice(
            Text(a, "html"),
            correct=i == 0,
            feedback=Text(feedback, "html") if feedback and i == 1 else None,
        )
        for i, a in enumerate(answers)
    )
    sub = SubQuestion(kind="MC", choices=choices, mark="2")
    written = cloze.render(sub)
    stem, subs = cloze.split(f"<p>Pick {written}</p>")
    assert stem == "<p>Pick {#1}</p>" and len(subs) == 1
    assert shown(subs[0]) == shown(sub)
    assert cloze.render(subs[0]) == written


def shown(sub: SubQuestion) -> list[tuple[str, bool, str | None]]:
    return [
        (c.text.plain(), c.correct, c.feedback.plain() if c.feedback else None) for c in sub.choices
    ]
