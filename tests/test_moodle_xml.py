"""Moodle XML import and export: the synthetic Moodle banks, every modelled type, located
problems, round trips (fixtures and generated banks) and splices that keep every other byte."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from conftest import fuzz_examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiztui.core.bank import Bank, Choice, Item, Text, apply_edit, bank_quiz
from quiztui.errors import QuizFormatError, QuiztuiError
from quiztui.formats import moodle_xml
from quiztui.formats.bank_io import edited_text

QUIZ_FORMATS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "quiz_formats"
SYNTHETIC = QUIZ_FORMATS / "moodle_xml_synthetic"
OWN = Path(__file__).resolve().parent / "fixtures" / "moodle_xml"
SYNTHETIC_NAMES = (
    "calculated",
    "essay",
    "gapselects",
    "matchings",
    "multichoices",
    "numericals",
    "ordering",
    "oumultiresponse",
    "randomsamatch",
    "shortanswer",
)


def fixture_path(name: str) -> Path:
    if name.startswith("own:"):
        return OWN / name[4:]
    path = SYNTHETIC / f"{name}.xml"
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


ALL_FIXTURES = [*SYNTHETIC_NAMES, "own:all_types.xml"]


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def parse(text: str, path: str = "quiz.xml") -> Bank:
    return moodle_xml.parse_bank(text, path, "quiz")


def problems_of(text: str) -> list[tuple[int | None, int | None, str | None, str]]:
    with pytest.raises(QuizFormatError) as caught:
        parse(text, "bad.xml")
    assert all(p.path == "bad.xml" for p in caught.value.problems)
    return [(p.line, p.column, p.field, p.message) for p in caught.value.problems]


def quiz(*questions: str) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n' + "\n".join(questions) + "\n</quiz>\n"


def spliced(bank: Bank, items: list[Item]) -> str:
    """The bank's source with every item's span rewritten by ``render_item`` (as a save does)."""
    return edited_text(bank, dict(enumerate(items)))


# --- U2: the ten synthetic Moodle banks --------------------------------------------------------

EXPECTED_TYPES = {
    "calculated": {"calculated": 1},
    "essay": {"essay": 1},
    "gapselects": {"gapselect": 5},
    "matchings": {"matching": 5},
    "multichoices": {"multichoice": 5},
    "numericals": {"numerical": 5},
    "ordering": {"ordering": 1},
    "oumultiresponse": {"oumultiresponse": 1},
    "randomsamatch": {"randomsamatch": 1},
    "shortanswer": {"shortanswer": 1},
}


@pytest.mark.parametrize("name", SYNTHETIC_NAMES)
def test_synthetic_bank_imports_with_its_types(name: str) -> None:
    text = read(fixture_path(name))
    bank = parse(text)
    assert Counter(i.type for i in bank.items) == EXPECTED_TYPES[name]
    assert bank.format == "moodle_xml" and bank.source_text == text
    for item in bank.items:
        assert item.line is not None and item.span is not None
        source = text[slice(*item.span)]
        assert source.startswith("<question") and source.endswith("</question>")
        assert text.count("\n", 0, item.span[0]) + 1 == item.line
        assert item.title and item.ident and item.stem.format == "html"
        if item.type not in moodle_xml.MODELLED:
            assert item.raw == source and item.choices == () and item.extra == ()


def test_synthetic_values() -> None:
    essay = parse(read(fixture_path("essay"))).items[0]
    assert (essay.title, essay.ident) == ("Exclusive fresh-thinking monitoring", "various")
    assert essay.stem.text.startswith("Off finally parent nature") and "\n" in essay.stem.text
    assert essay.extra_value("responseformat") == "editor"
    assert essay.extra_value("maxwordlimit") == "500"
    grader = essay.extra_value("graderinfo")
    assert grader is not None and grader.startswith('<graderinfo format="html">')

    multi = parse(read(fixture_path("multichoices"))).items
    assert [c.weight for c in multi[0].choices] == [75, 25, 0, 0]
    assert not any(c.correct for c in multi[0].choices)  # no 100% answer
    assert multi[0].choices[3].feedback == Text("Optimized 24/7 task-force", "html")
    assert multi[0].choices[0].feedback is None
    assert multi[0].general_feedback is not None
    assert multi[0].general_feedback.text.startswith("Research training call kid")
    assert [m.extra_value("single") for m in multi] == ["False", "False", "True", "True", "False"]
    assert multi[0].extra_value("answernumbering") == "123"
    assert multi[0].extra_value("shownumcorrect") == ""
    assert [k for k, _ in multi[0].extra].count("hint") == 2
    assert bank_quiz(parse(read(fixture_path("multichoices")))).unjudged[0].type == ("multi-answer")

    numerical = parse(read(fixture_path("numericals"))).items[0]
    assert [c.text.text for c in numerical.choices] == ["69:4", "98:7", "70:8", "82:9"]
    assert [c.correct for c in numerical.choices] == [False, False, True, True]
    assert numerical.choices[0].text.format == "moodle"  # format="moodle_auto_format"
    fractions = [c.weight for m in parse(read(fixture_path("numericals"))).items for c in m.choices]
    assert 11.11111 in fractions and 66.66667 in fractions

    matching = parse(read(fixture_path("matchings"))).items[0]
    assert [(c.text.text, c.match) for c in matching.choices][:2] == [
        ("Address society possible every church wall.", "decide"),
        ("Computer speech wrong.", "science"),
    ]
    assert matching.extra_value("shuffleanswers") == "True"

    short = parse(read(fixture_path("shortanswer"))).items[0]
    assert [(c.text.text, c.weight, c.correct) for c in short.choices][:2] == [
        ("Reveal before skill pass dog yes.", 100, True),
        ("Wish since stand office.", 25, False),
    ]
    assert short.extra_value("usecase") == "1"

    calculated = parse(read(fixture_path("calculated"))).items[0]
    assert calculated.title == "Ameliorated upward-trending challenge"
    assert calculated.stem.text.startswith("{x} e {y}Candidate")
    gaps = parse(read(fixture_path("gapselects"))).items
    assert "[[1]] <br>" in gaps[0].stem.text  # &lt;br&gt; decoded
    assert [g.ident for g in gaps] == ["though", "paper", "paper", "increase", "hospital"]
    for name, title in [
        ("ordering", "Profit-focused eco-centric structure"),
        ("oumultiresponse", "Reduced grid-enabled task-force"),
        ("randomsamatch", "Face-to-face 6thgeneration encoding"),
    ]:
        assert parse(read(fixture_path(name))).items[0].title == title
    assert bank_quiz(parse(read(fixture_path("ordering")))).unjudged[0].type == "ordering"


def test_own_fixture_every_modelled_type() -> None:
    bank = parse(read(OWN / "all_types.xml"))
    kinds = [i.type for i in bank.items]
    assert kinds == [
        "multichoice",
        "multichoice",
        "truefalse",
        "numerical",
        "shortanswer",
        "matching",
        "essay",
        "description",
        "multianswer",
    ]
    boil, noble, sun, pi, capital, symbols, essay, intro, cloze = bank.items
    assert [i.category for i in bank.items] == ["$course$/top/Science"] * 3 + [
        "$course$/top/Science/Maths"
    ] * 6
    assert boil.stem.text.startswith("<p>At sea level") and boil.stem.format == "html"
    assert boil.extra_value("questiontext/file") == (
        '<file name="kettle.png" path="/" encoding="base64">iVBORw0KGgo=</file>'
    )
    assert boil.general_feedback == Text("<p>Water boils at 100 &deg;C at 1 atm.</p>", "html")
    assert (boil.ident, boil.tags) == ("phys-boil-1", ("physics", "quiztui:badge=poor"))
    assert [(c.text, c.correct, c.weight) for c in boil.choices] == [
        (Text("100 °C", "html"), True, 100),
        (Text("90 °C", "html"), False, 0),
        (Text("<50 °C", "plain"), False, -33.33333),
    ]
    assert boil.choices[0].feedback == Text("Right & well done.", "html")
    assert boil.choices[2].feedback is None  # empty feedback is no feedback
    # No format attributes: answers take the question text's format (markdown here).
    assert noble.stem.format == "markdown" and {c.text.format for c in noble.choices} == {
        "markdown"
    }
    assert [c.weight for c in noble.choices] == [50, 50, -100] and noble.ident is None
    # true/false: the True choice first whatever the file's order, right by fraction 100.
    assert [(c.text.text, c.correct, c.weight) for c in sun.choices] == [
        ("True", True, None),
        ("False", False, None),
    ]
    assert sun.choices[1].feedback == Text("It is a G-type main-sequence star.", "moodle")
    assert [c.text.text for c in pi.choices] == ["3.14:0.005", "3", "*"]
    assert pi.choices[2].text.format == "plain"  # numerical answers are plain unless told
    assert pi.extra_value("unitgradingtype") == "0"
    assert [(c.text.text, c.weight) for c in capital.choices] == [
        ("Paris", 100),
        ("Île-de-France", 20),
    ]
    assert [(c.text.text, c.match) for c in symbols.choices] == [
        ("Sodium", "Na"),
        ("Potassium", "K"),
        ("", "Fe"),  # an extra wrong answer
    ]
    assert essay.title == 'Explain "entropy"' and essay.choices == ()
    assert intro.stem.text == "The next questions are about <chemistry>."
    assert cloze.raw is not None and cloze.raw.startswith('<question type="multianswer">')
    assert (cloze.ident, cloze.stem.text) == ("cloze-1", "Two plus two is {1:NUMERICAL:=4}.")
    quiz_ = bank_quiz(bank)
    # q1 and q3 have one key each; q2 (<single>false</single>) is judged option by option.
    assert [q.id for q in quiz_.questions] == ["q1", "q2.1", "q2.2", "q2.3", "q3"]
    assert len(quiz_.unjudged) == 6


# --- U3: round trips and splices ----------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_round_trip_keeps_every_question(name: str) -> None:
    first = parse(read(fixture_path(name)))
    written = moodle_xml.write_bank(first)
    second = parse(written)
    assert [i.content() for i in second.items] == [i.content() for i in first.items]
    assert moodle_xml.sniff(written)
    # Raw items are written byte for byte.
    for item, again in zip(first.items, second.items, strict=True):
        if item.raw is not None:
            assert again.raw == item.raw


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_splicing_every_rendered_item_keeps_contents(name: str) -> None:
    text = read(fixture_path(name))
    bank = parse(text)
    new_text = spliced(bank, list(bank.items))
    again = parse(new_text)
    assert [i.content() for i in again.items] == [i.content() for i in bank.items]
    for item in bank.items:
        if item.raw is not None:
            assert item.span is not None
            assert moodle_xml.render_item(item) == text[slice(*item.span)]
    if all(i.raw is not None for i in bank.items):
        assert new_text == text


def test_saving_one_edited_question_keeps_every_other_byte() -> None:
    text = read(OWN / "all_types.xml")
    bank = parse(text)
    item = bank.items[0]
    edited = apply_edit(item, "Water boils at?", ["100 °C", "90 °C & more", "<50 °C"], 1)
    assert item.span is not None
    start, end = item.span
    new_text = text[:start] + moodle_xml.render_item(edited) + text[end:]
    assert new_text.startswith(text[:start]) and new_text.endswith(text[end:])
    again = parse(new_text)
    assert again.items[0].content() == edited.content()
    assert again.items[0].choices[1].text == Text("90 °C &amp; more", "html")
    assert again.items[0].extra_value("questiontext/file") is not None  # the image is kept
    assert [i.content() for i in again.items[1:]] == [i.content() for i in bank.items[1:]]


def test_spans_skip_comments_cdata_declarations_and_tricky_attributes() -> None:
    text = (
        '<?xml version="1.0"?>\r<!DOCTYPE quiz [ <!ELEMENT quiz ANY> <!-- a ] > --> ]>\r'
        "<quiz><!-- <question type='essay'> in a comment -->\r"
        '  <question type="description" note="a > b"><questiontext><text>'
        "<![CDATA[</question> <question>]]></text></questiontext></question>\r"
        '  <?pi <question> ?><question type="description"/>\r'
        "</quiz>"
    )
    first, second = parse(text).items
    assert (first.line, second.line) == (4, 5)
    assert first.stem.text == "</question> <question>"
    assert first.span is not None and second.span is not None
    assert text[slice(*first.span)].startswith('<question type="description" note="a > b">')
    assert text[slice(*first.span)].endswith("]]></text></questiontext></question>")
    assert text[slice(*second.span)] == '<question type="description"/>'
    assert second.stem == Text("", "html") and second.title is None
    # Moodle needs a <name>: a rewritten item without one is named after its text or type.
    again = parse(spliced(parse(text), [first, second])).items
    assert [i.title for i in again] == ["description question"] * 2
    assert [replace(i.content(), title=None) for i in again] == [
        first.content(),
        second.content(),
    ]


# --- Bad input ------------------------------------------------------------------------------------


def test_malformed_xml_gives_line_and_column() -> None:
    text = quiz('  <question type="essay">', "    <name><text>é é</tex></name>", "  </question>")
    [(line, column, fld, message)] = problems_of(text)
    assert (line, column, fld) == (4, 20, None)  # the "</tex>", counted in characters
    assert message == "not well-formed XML: mismatched tag"
    [(line, column, _, message)] = problems_of("")
    assert line == 1 and "no element found" in message


def test_answers_missing_or_unreadable_are_all_reported_with_their_lines() -> None:
    text = quiz(
        '  <question type="multichoice">',  # line 3
        "    <name><text>No answers</text></name>",
        "    <questiontext><text>Q?</text></questiontext>",
        "  </question>",
        '  <question type="multichoice">',  # line 7
        "    <questiontext><text>Q?</text></questiontext>",
        '    <answer fraction="100"><text>a</text></answer>',
        '    <answer fraction="half"><text>b</text></answer>',  # line 10
        "  </question>",
        '  <question type="truefalse">',  # line 12
        "    <questiontext><text>Q?</text></questiontext>",
        '    <answer fraction="100"><text>yes</text></answer>',
        '    <answer fraction="0"><text>no</text></answer>',
        "  </question>",
        '  <question type="numerical">',  # line 17
        "    <questiontext><text>Q?</text></questiontext>",
        '    <answer fraction="100"><text>3</text><tolerance>a bit</tolerance></answer>',
        "  </question>",
        '  <question type="truefalse">',  # line 21
        '    <answer fraction="100"><text>true</text></answer>',
        '    <answer fraction="100"><text>false</text></answer>',
        "  </question>",
        "  <question>",  # line 25
        "  </question>",
    )
    problems = problems_of(text)
    assert [(line, column, fld) for line, column, fld, _ in problems] == [
        (3, 3, "answer"),
        (10, 5, "fraction"),
        (12, 3, "answer"),
        (19, 42, "tolerance"),
        (21, 3, "fraction"),
        (25, 3, "type"),
    ]
    messages = [m for *_, m in problems]
    assert "needs at least one <answer>" in messages[0]
    assert messages[1] == "fraction must be a number (got 'half')"
    assert "one answer 'true' and one 'false' (got 'yes', 'no')" in messages[2]
    assert "exactly one" in messages[4]


def test_doctype_entities_are_refused_before_parsing() -> None:
    bomb = (
        '<?xml version="1.0"?>\n<!DOCTYPE quiz [\n  <!ENTITY a "aaaaaaaaaa">\n'
        '  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n<quiz>&b;</quiz>\n'
    )
    [(line, column, _, message)] = problems_of(bomb)
    assert (line, column) == (3, 3) and "<!ENTITY" in message
    # Without the pre-check expat itself refuses an undeclared entity, with its location.
    [(line, _, _, message)] = problems_of("<quiz>\n&b;</quiz>")
    assert line == 2 and "undefined entity" in message
    # A DOCTYPE without entities is harmless.
    assert parse('<?xml version="1.0"?>\n<!DOCTYPE quiz>\n<quiz></quiz>').items == ()


def test_not_a_quiz_and_category_without_text() -> None:
    [(line, _, _, message)] = problems_of("<html><body/></html>")
    assert line == 1 and "root element is <html>" in message
    [(line, _, fld, _)] = problems_of(quiz('  <question type="category"></question>'))
    assert (line, fld) == (3, "category")


# --- Writing ------------------------------------------------------------------------------------


def _mc(*weights: float, single: str | None = None, **fields: object) -> Item:
    item = Item(
        type="multichoice",
        stem=Text("Which?", "html"),
        choices=tuple(
            Choice(Text(f"option {i}", "html"), correct=w == 100, weight=w)
            for i, w in enumerate(weights)
        ),
        title="T",
        extra=(("single", single),) if single is not None else (),
    )
    return replace(item, **fields)  # type: ignore[arg-type]


def test_categories_are_written_when_they_change() -> None:
    items = (
        _mc(100, 0, single="true"),
        _mc(100, 0, single="true", category="$course$/top/A"),
        _mc(100, 0, single="true", category="$course$/top/A"),
        _mc(100, 0, single="true", category="$course$/top/B & C"),
    )
    written = moodle_xml.write_bank(Bank(items, format="gift", title="t"))
    assert written.count('<question type="category">') == 2
    assert "<text><![CDATA[$course$/top/B & C]]></text>" in written
    assert [i.category for i in parse(written).items] == [
        None,
        "$course$/top/A",
        "$course$/top/A",
        "$course$/top/B & C",
    ]


def test_annotations_replace_quiztui_tags_on_modelled_and_raw_items() -> None:
    bank = parse(read(OWN / "all_types.xml"))
    notes = {0: {"badge": "ok", "reason": "fine\nnow"}, 8: {"badge": "poor"}}
    again = parse(moodle_xml.write_bank(bank, notes))
    assert again.items[0].tags == ("physics", "quiztui:badge=ok", "quiztui:reason=fine now")
    assert again.items[8].tags == ("quiztui:badge=poor",)
    assert again.items[8].raw is not None and again.items[8].ident == "cloze-1"
    assert again.items[1].tags == ()
    assert [i.content() for i in again.items[1:8]] == [i.content() for i in bank.items[1:8]]


def test_single_is_derived_when_missing_and_a_name_is_made_when_absent() -> None:
    one = parse(moodle_xml.write_bank(Bank((_mc(100, -50, title=None),), "gift", "t"))).items[0]
    assert one.extra_value("single") == "true" and one.title == "Which?"
    many = parse(moodle_xml.write_bank(Bank((_mc(50, 50, 0),), "gift", "t"))).items[0]
    assert many.extra_value("single") == "false"


def test_items_from_gift_gap_and_range_numericals_and_unweighted_keys() -> None:
    gap = Item(
        type="shortanswer",
        stem=Text("Two plus two", "moodle"),
        tail=Text("is four.", "moodle"),
        choices=(Choice(Text("4", "moodle"), correct=True),),
    )
    ranged = Item(
        type="numerical",
        stem=Text("Pi?", "moodle"),
        choices=(Choice(Text("3.141..3.142", "moodle"), correct=True),),
    )
    read_back = parse(moodle_xml.write_bank(Bank((gap, ranged), "gift", "t"))).items
    assert read_back[0].stem.text == "Two plus two _____ is four." and read_back[0].tail is None
    assert [(c.correct, c.weight) for c in read_back[0].choices] == [(True, 100)]
    assert read_back[1].choices[0].text.text == "3.1415:0.0005"


def test_unsupported_items() -> None:
    gift_raw = Item(type="calculated", stem=Text("x"), raw="::T:: {x} {=1}")
    assert "another format" in (moodle_xml.unsupported(gift_raw) or "")
    assert "no Moodle XML form" in (moodle_xml.unsupported(Item("cloze", Text("x"))) or "")
    control = _mc(100, 0, single="true", title="bell\x07")
    assert "control characters" in (moodle_xml.unsupported(control) or "")
    broken_tf = Item(type="truefalse", stem=Text("x"), choices=(Choice(Text("True")),))
    assert "True and False" in (moodle_xml.unsupported(broken_tf) or "")
    assert moodle_xml.unsupported(_mc(100, 0)) is None
    with pytest.raises(QuiztuiError, match="2 question\\(s\\) cannot be written as Moodle XML"):
        moodle_xml.write_bank(Bank((gift_raw, control, _mc(100, 0)), "gift", "t"))
    with pytest.raises(QuiztuiError):
        moodle_xml.render_item(control)


def test_sniff() -> None:
    assert moodle_xml.sniff(read(OWN / "all_types.xml"))
    assert moodle_xml.sniff("\ufeff<quiz/>")
    assert moodle_xml.sniff('<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE quiz>\n<quiz>\n</quiz>')
    assert not moodle_xml.sniff("<quizzes/>")
    assert not moodle_xml.sniff("<html><quiz></quiz></html>")
    assert (moodle_xml.NAME, moodle_xml.EXTENSIONS) == ("moodle_xml", (".xml",))


# --- U3: generated banks ------------------------------------------------------------------------
#
# Normalisations, each something Moodle XML cannot represent, applied by the generator:
# - texts are trimmed of " \t\n\r" (Moodle trims every text it reads) and hold no control
#   characters (XML 1.0 cannot carry them; unsupported() refuses such items);
# - empty feedback, names and idnumbers are absent ones (None);
# - a right answer is one with fraction 100, so ``correct`` is ``weight == 100``; a true/false
#   choice has no weight (Moodle reads only "fraction is 100");
# - a numerical tolerance of zero is no tolerance ("3", never "3:0");
# - every item has a title (Moodle needs a <name>; the writer invents one from the stem, tested
#   above) and a multichoice says <single> (derived when absent, tested above);
# - once an item has a category, later items keep one (a file cannot go back to "none").

_CHARS = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Cn"))
_WORD = st.text(alphabet=_CHARS, min_size=1, max_size=8)
_AWKWARD = st.sampled_from(
    ["<p>", "</b>", "&amp;", "&", "<", ">", '"', "'", "]]>", "<![CDATA[", "é", "日本", "→", "\t"]
)
_SEP = st.sampled_from([" ", " ", " ", "\n", "\r\n", "  "])


@st.composite
def _texts(draw: st.DrawFn, *, empty: bool = False) -> str:
    parts = draw(st.lists(st.one_of(_WORD, _AWKWARD), min_size=0 if empty else 1, max_size=8))
    text = "".join(p + draw(_SEP) for p in parts).strip(" \t\n\r")
    if not text and not empty:
        text = draw(st.sampled_from(["x", "Paris", "π"]))
    return text


_FORMATS = st.sampled_from(["html", "moodle", "plain", "markdown"])
_WEIGHTS = st.sampled_from([100, 100, 0, 0, 50, 25, 33.33333, -33.33333, -100, 12.5, 66.66667])


@st.composite
def _text(draw: st.DrawFn, *, empty: bool = False) -> Text:
    return Text(draw(_texts(empty=empty)), draw(_FORMATS))


@st.composite
def _feedback(draw: st.DrawFn) -> Text | None:
    return draw(st.none() | _text())


def _weighted(draw: st.DrawFn, text: Text) -> Choice:
    weight = draw(_WEIGHTS)
    return Choice(text, correct=weight == 100, weight=float(weight), feedback=draw(_feedback()))


@st.composite
def _choices(draw: st.DrawFn, kind: str) -> tuple[Choice, ...]:
    if kind in ("multichoice", "shortanswer"):
        return tuple(_weighted(draw, draw(_text())) for _ in range(draw(st.integers(1, 6))))
    if kind == "numerical":
        values = st.sampled_from(["42", "3.14", "-1e3", "*", "0.5", "+7"])
        tolerances = st.sampled_from(["", ":0.01", ":2", ":1e-3"])
        return tuple(
            _weighted(draw, Text(draw(values) + draw(tolerances), draw(_FORMATS)))
            for _ in range(draw(st.integers(1, 4)))
        )
    if kind == "truefalse":
        true = draw(st.booleans())
        return (
            Choice(Text("True", "plain"), correct=true, feedback=draw(_feedback())),
            Choice(Text("False", "plain"), correct=not true, feedback=draw(_feedback())),
        )
    if kind == "matching":
        return tuple(
            Choice(draw(_text(empty=True)), match=draw(_texts(empty=True)))
            for _ in range(draw(st.integers(1, 5)))
        )
    return ()


@st.composite
def _extra(draw: st.DrawFn, kind: str) -> tuple[tuple[str, str], ...]:
    pairs: list[tuple[str, str]] = []
    if draw(st.booleans()):
        pairs += [("defaultgrade", "1"), ("penalty", "0.3333333"), ("hidden", "0")]
    if kind == "multichoice":
        pairs.append(("single", draw(st.sampled_from(["true", "false", "1"]))))
        pairs.append(("shuffleanswers", draw(st.sampled_from(["true", "0"]))))
    if kind == "essay" and draw(st.booleans()):
        info = escape(draw(_texts()))
        pairs.append(("graderinfo", f'<graderinfo format="html"><text>{info}</text></graderinfo>'))
    for _ in range(draw(st.integers(0, 2))):
        pairs.append(
            ("hint", f'<hint format="html">\n  <text>{escape(draw(_texts()))}</text>\n</hint>')
        )
    return tuple(pairs)


@st.composite
def _items(draw: st.DrawFn) -> Item:
    kind = draw(
        st.sampled_from(
            [
                "multichoice",
                "truefalse",
                "shortanswer",
                "numerical",
                "essay",
                "matching",
                "description",
            ]
        )
    )
    return Item(
        type=kind,
        stem=draw(_text(empty=True)),
        choices=draw(_choices(kind)),
        title=draw(_texts()),
        ident=draw(st.none() | _texts()),
        tags=tuple(draw(st.lists(_texts(), max_size=3))),
        category=draw(st.none() | st.sampled_from(["$course$/top/A", "$course$/top/B/Ç & <d>"])),
        general_feedback=draw(_feedback()),
        extra=draw(_extra(kind)),
    )


def _keep_categories(items: list[Item]) -> tuple[Item, ...]:
    out, category = [], None
    for item in items:
        category = item.category or category
        out.append(replace(item, category=category))
    return tuple(out)


@pytest.mark.fuzz
@settings(
    max_examples=fuzz_examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(_items(), min_size=1, max_size=5).map(_keep_categories))
def test_generated_banks_round_trip(items: tuple[Item, ...]) -> None:
    """Generated Moodle XML banks write, parse back and splice unchanged:
    50 examples in ``make test``, the full 150 in ``make fuzz`` (``conftest.fuzz_examples``)."""
    written = moodle_xml.write_bank(Bank(items, format="moodle_xml", title="t"))
    bank = parse(written)
    assert tuple(i.content() for i in bank.items) == items
    for item in bank.items:
        assert item.span is not None
        assert written[slice(*item.span)] == moodle_xml.render_item(item.content())
        assert re.fullmatch(r"\d+", str(item.line))
    assert spliced(bank, list(bank.items)) == written
