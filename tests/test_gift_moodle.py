"""GIFT as Moodle reads it, each case naming the rule of Moodle's importer it follows:
``qformat_gift::readquestion`` (question/format/gift/format.php) for GIFT, and
``qtype_multianswer_extract_question`` / ``qtype_multianswer_validate_question``
(question/type/multianswer/questiontype.php) for embedded answers (Cloze) pasted into GIFT text.

The fixtures are written the way a teacher's bank looks: ``~`` before every alternative with
``=`` on the right one, and Cloze blanks copied from Moodle's editor into a GIFT file."""

from __future__ import annotations

from pathlib import Path

import pytest

from quiztui.core.bank import Bank, Choice, Item, Text, bank_quiz, stem_plain
from quiztui.errors import QuizFormatError, QuiztuiError
from quiztui.formats import cloze, gift, moodle_xml


def _read(text: str) -> Bank:
    return gift.parse_bank(text, "english.gift", "english")


def _answers(item: Item) -> list[tuple[str, bool, float | None]]:
    return [(c.text.text, c.correct, c.weight) for c in item.choices]


# --- '~=' alternatives -----------------------------------------------------------------------


def test_tilde_equals_marks_the_right_alternative() -> None:
    # Moodle rule: readquestion (multichoice) replaces '=' by '~=' and splits at '~'; the blank
    # answer that leaves before '=There' is skipped when qtype_multichoice saves the answers.
    bank = _read(
        "::Exist 1::{~It ~=There} are three books on the table.\n"
        "\n"
        "::Exist 2::{~It ~There ~=This} is my brother.\n"
        "\n"
        "::Spaced::Choose: { ~ a ~ = b }\n"
    )
    assert [i.type for i in bank.items] == ["multichoice"] * 3
    assert _answers(bank.items[0]) == [("It", False, None), ("There", True, None)]
    assert _answers(bank.items[1]) == [
        ("It", False, None),
        ("There", False, None),
        ("This", True, None),
    ]
    assert _answers(bank.items[2]) == [("a", False, None), ("b", True, None)]
    quiz = bank_quiz(bank)
    assert [q.key for q in quiz.questions] == [1, 2, 1]


def test_an_empty_tilde_elsewhere_is_still_an_empty_answer() -> None:
    # Only '~' directly before '=' is Moodle's '~=' spelling; '{=a ~ ~b}' has a real blank answer.
    with pytest.raises(QuizFormatError, match="empty answer"):
        _read("Pick {=a ~ ~b}\n")


# --- weights ----------------------------------------------------------------------------------


def test_answer_weights() -> None:
    # Moodle rule: giftanswerweightregex '^%\-*([0-9]{1,2})\.?([0-9]*)%' read by
    # answerweightparser after '~' (multichoice) and after '=' (short answer, numerical).
    bank = _read(
        "Which are prime? {~%50%2 ~%50%3 ~%-100%4}\n"
        "\n"
        "Capital of Italy? {=Rome =%50%Roma =%-25%Milan}\n"
        "\n"
        "Year? {#=1822:0 =%50%1822:2}\n"
    )
    assert _answers(bank.items[0]) == [("2", False, 50.0), ("3", False, 50.0), ("4", False, -100)]
    assert _answers(bank.items[1]) == [
        ("Rome", True, None),
        ("Roma", True, 50.0),
        ("Milan", True, -25.0),
    ]
    assert _answers(bank.items[2]) == [("1822:0", True, None), ("1822:2", True, 50.0)]


def test_numerical_partial_credit_is_written_after_equals() -> None:
    # Moodle rule: in a numerical block everything after '~' is the feedback for any other
    # answer (readquestion, numerical), and writequestion writes each answer as '=%w%value'.
    # A partly right number from Moodle XML (fraction 50) must come out '=%50%...', never '~%50%'.
    xml = (
        '<quiz><question type="numerical"><name><text>Born</text></name>'
        "<questiontext><text>When was Grant born?</text></questiontext>"
        '<answer fraction="100"><text>1822</text><tolerance>0</tolerance></answer>'
        '<answer fraction="50"><text>1822</text><tolerance>2</tolerance></answer>'
        '<answer fraction="0"><text>1800</text><tolerance>0</tolerance></answer>'
        "</question></quiz>"
    )
    item = moodle_xml.parse_bank(xml, "born.xml", "born").items[0]
    written = gift.render_item(item)
    assert "\t=%50%1822:2\n" in written and "~%50%" not in written
    assert "\t=%0%1800\n" in written
    again = _read(written).items[0]
    assert [(c.text.text, c.weight) for c in again.choices] == [
        ("1822", 100.0),
        ("1822:2", 50.0),
        ("1800", 0.0),
    ]


# --- embedded answers (Cloze) in GIFT text -------------------------------------------------------

CLOZE = (
    "// [id:vary-1]\n"
    "::Word formation 3::It was chosen for a {1:SA:=variety} (VARY) of reasons, and\n"
    "{1:MC:~It ~=There} were {2:MULTICHOICE:~two~=three#Count again~%50%tree} in all.\n"
    "\n"
    "::Numbers::Grant was born in {1:NUMERICAL:=1822:0#Yes~%50%1822:5#Close} and\n"
    "died {1:SHORTANSWER:=in office~%100%young} aged {1:NM:=63}.\n"
    "\n"
    "Plain one {=a ~b}\n"
)


def test_cloze_blanks_are_one_question_with_numbered_sub_answers() -> None:
    # Moodle rule: qtype_multianswer_extract_question matches ANSWER_REGEX
    # '{N:TYPE:alternatives}' left to right and replaces blank k by '{#k}' in the text.
    bank = _read(CLOZE)
    first, second, plain = bank.items
    assert (first.type, first.title, first.ident) == ("multianswer", "Word formation 3", "vary-1")
    assert first.stem.text == (
        "It was chosen for a {#1} (VARY) of reasons, and {#2} were {#3} in all."
    )
    assert [(s.kind, s.mark) for s in first.subquestions] == [
        ("SA", "1"),
        ("MC", "1"),
        ("MULTICHOICE", "2"),
    ]
    sa, mc, mc2 = first.subquestions
    assert [(c.text.text, c.correct) for c in sa.choices] == [("variety", True)]
    # Moodle rule: a leading '~' before the first alternative is read by the '~?' of the
    # alternatives loop, so '{1:MC:~It ~=There}' has two answers, not an empty first one.
    assert [(c.text.text, c.correct) for c in mc.choices] == [("It", False), ("There", True)]
    # Moodle rule: ANSWER_ALTERNATIVE_FRACTION_REGEX '=|%(-?[0-9]+(?:[.,][0-9]*)?)%' and
    # '#feedback' up to the next unescaped '~' or '}'.
    assert [(c.text.text, c.correct, c.weight) for c in mc2.choices] == [
        ("two", False, None),
        ("three", True, None),
        ("tree", False, 50.0),
    ]
    assert mc2.choices[1].feedback == Text("Count again", "html")
    assert second.type == "multianswer" and len(second.subquestions) == 3
    numerical, short, nm = second.subquestions
    assert [(c.text.text, c.weight) for c in numerical.choices] == [
        ("1822:0", None),
        ("1822:5", 50.0),
    ]
    assert [(c.text.text, c.correct) for c in short.choices] == [
        ("in office", True),
        ("young", True),
    ]
    assert nm.family == "numerical"
    assert plain.type == "multichoice"


def test_cloze_multiple_choice_blanks_are_vetted_and_short_answers_kept() -> None:
    quiz = bank_quiz(_read(CLOZE))
    judged = {q.id: q for q in quiz.questions}
    assert sorted(judged) == ["q1.2", "q1.3", "q3"]
    blank = judged["q1.2"]
    assert blank.options == ("It", "There") and blank.key == 1
    # The blank judged is '___'; the other blanks show their right answers for context.
    assert blank.text == "It was chosen for a variety (VARY) of reasons, and ___ were three in all."
    assert judged["q1.3"].options == ("two", "three", "tree") and judged["q1.3"].key == 1
    kept = {u.id: u.type for u in quiz.unjudged}
    assert kept == {
        "q1.1": "short answer",
        "q2.1": "short answer",
        "q2.2": "short answer",
        "q2.3": "short answer",
    }
    numbers = next(u for u in quiz.unjudged if u.id == "q2.1")
    assert numbers.text == "Grant was born in ___ and died in office aged 63."


def test_cloze_round_trips_through_gift_unchanged() -> None:
    bank = _read(CLOZE)
    again = _read(gift.write_bank(bank, cloze_extension=True))  # quiztui's GIFT extension
    assert [i.content() for i in again.items] == [i.content() for i in bank.items]
    with pytest.raises(QuiztuiError, match="embedded answers .cloze. have no GIFT form"):
        gift.write_bank(bank)  # Moodle's GIFT has no embedded answers: left out by default


def test_cloze_and_an_edit_elsewhere_keep_the_cloze_bytes() -> None:
    from quiztui.formats.bank_io import edited_text

    bank = _read(CLOZE)
    plain = bank.items[2]
    edited = edited_text(
        bank, {2: Item(type="multichoice", stem=Text("Plain two"), choices=plain.choices)}
    )
    assert edited.startswith(CLOZE[: CLOZE.index("Plain one")])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Moodle rule: qtype_multianswer_validate_question, notenoughanswers (multichoice: 2).
        ("Pick {1:MC:=only} one.\n", "embedded answer MC needs at least two answers"),
        # Moodle rule: validate_question, answermustbenumberorstar.
        ("Born in {1:NUMERICAL:=about 1822}.\n", "bad numerical answer 'about 1822'"),
        # Moodle rule: ANSWER_ALTERNATIVE_ANSWER_REGEX '.+?' needs at least one character.
        ("Say {1:SA:=yes~} now.\n", "empty answer in an embedded answer"),
        ("A {1:SA:=yes} and {=b ~c} mixed.\n", "every '{' must open one such as"),
        ("Open {1:SA:=yes and never closed.\n", "is never closed"),
    ],
)
def test_broken_cloze_blanks_are_located_errors(text: str, message: str) -> None:
    with pytest.raises(QuizFormatError) as caught:
        _read(text)
    problem = caught.value.problems[0]
    assert message in problem.message
    assert problem.line == 1 and problem.field == "answers"


def test_escaped_brace_is_not_a_blank() -> None:
    # Moodle rule: escapedchar_pre turns '\{' into a placeholder before anything is parsed.
    bank = _read("Write \\{1:SA:=x\\} literally {=ok ~no}\n")
    assert bank.items[0].type == "multichoice"
    assert bank.items[0].stem.text == "Write {1:SA:=x} literally"


def test_cloze_item_written_back_with_its_codes() -> None:
    item = Item(
        type="multianswer",
        stem=Text("Grant {#1} born in {#2}."),
        subquestions=cloze.split("{:MC:~is~=was#Past} {2:NM:=1822:1}")[1],
    )
    assert gift.render_item(item) == "Grant {:MC:is~=was#Past} born in {2:NM:=1822:1}."
    assert gift.unsupported(item, cloze_extension=True) is None
    assert gift.unsupported(item) is not None  # Moodle's GIFT has no embedded answers
    no_blanks = Item(type="multianswer", stem=Text("No blanks"))
    assert gift.unsupported(no_blanks, cloze_extension=True) is not None
    broken = Item(type="multianswer", stem=Text("Twice {#1} {#1}"), subquestions=item.subquestions)
    assert gift.unsupported(broken, cloze_extension=True) is not None
    assert Choice(Text("was", "html"), correct=True) in [
        Choice(c.text, c.correct) for c in item.subquestions[0].choices
    ]


def test_legacy_8bit_gift_file_is_read_with_a_warning(tmp_path: Path) -> None:
    # Moodle's importer reads the uploaded file in the encoding the teacher picks; quiztui
    # guesses Windows-1252 for a file that is not UTF-8 and says so.
    from quiztui.formats.bank_io import load_bank

    path = tmp_path / "français.gift"
    path.write_bytes("::Accents::Où est la gare ? {=Là-bas ~Ici}\r\n".encode("cp1252"))
    bank = load_bank(path)
    assert bank.items[0].choices[0].text.text == "Là-bas"
    assert bank.load_report() == [
        f"warning: {path}: not UTF-8 (byte 0xf9 on line 1): read as Windows-1252; save the file"
        " as UTF-8 if the text looks wrong"
    ]


# --- B3: GIFT -> Moodle XML -> GIFT ------------------------------------------------------------

ROUND_TRIP = (
    "$CATEGORY: english/grammar\n"
    "\n"
    "// [id:g-1] [tag:existential]\n"
    "::Exist::{~It ~=There} are three books on the table.\n"
    "\n"
    "::Primes::Which are prime? {~%50%2 ~%50%3 ~%-100%4#Four is 2 × 2}\n"
    "\n"
    "::Sky::The sky is blue. {TRUE#Look up.#Right.}\n"
    "\n"
    "::Italy::Capital of Italy? {=Rome =%50%Roma =%-25%Milan####Rome since 1871.}\n"
    "\n"
    "::Grant::When was Grant born? {#=1822#Exactly =%50%1822:2#Close ~#Too far}\n"
    "\n"
    "::Pairs::Match. {=cat -> meow =dog -> woof =cow -> moo}\n"
    "\n"
    "::Essay::Describe your town. {}\n"
    "\n"
    "$CATEGORY: english/cloze\n"
    "\n"
    "::Word formation::It was chosen for a {1:SA:=variety#Yes~%50%varied} (VARY) of reasons,"
    " {1:MC:~It ~=There#Good} were {2:MULTICHOICE_V:~two~=three~%50%tree} in all and"
    " {1:NUMERICAL:=1822:0~%50%1822:5} was the year.\n"
)


def _shape(bank: Bank) -> list[tuple[object, ...]]:
    """What a round trip must keep: type, text, answers with weights and feedback, blanks.

    Each format says some of it its own way: a right answer is '=' in GIFT and fraction 100 in
    Moodle XML (so a right answer without a weight is compared as 100), and a GIFT answer block
    inside the sentence is a '_____' blank in Moodle XML (the stem is compared with it)."""

    def choice(c: Choice) -> tuple[object, ...]:
        feedback = c.feedback.plain() if c.feedback is not None else None
        weight = c.weight if c.weight is not None else (100.0 if c.correct else None)
        return (c.text.plain(), weight, feedback, c.match)

    out: list[tuple[object, ...]] = []
    for item in bank.items:
        general = item.general_feedback.plain() if item.general_feedback is not None else None
        blanks = [(s.kind, s.mark, [choice(c) for c in s.choices]) for s in item.subquestions]
        out.append(
            (
                item.type,
                item.title,
                item.category,
                " ".join(stem_plain(item).split()),
                general,
                [choice(c) for c in item.choices],
                blanks,
            )
        )
    return out


def test_round_trip_gift_moodle_xml_gift_keeps_every_question() -> None:
    bank = _read(ROUND_TRIP)
    assert len(bank.items) == 8 and bank.items[-1].type == "multianswer"
    xml = moodle_xml.write_bank(bank)
    assert '<question type="cloze">' in xml
    from_xml = moodle_xml.parse_bank(xml, "english.xml", "english")
    again = _read(gift.write_bank(from_xml, cloze_extension=True))
    assert _shape(from_xml) == _shape(bank)
    assert _shape(again) == _shape(bank)
    assert [q.id for q in bank_quiz(again).questions] == [q.id for q in bank_quiz(bank).questions]


def test_moodle_xml_cloze_question_is_read_as_blanks() -> None:
    # Moodle rule: qformat_xml imports type="cloze" through qtype_multianswer's
    # extract_question over the question text.
    xml = (
        '<quiz><question type="cloze"><name><text>Planets</text></name>'
        '<questiontext format="html"><text><![CDATA[<p>The largest planet is'
        " {1:MCH:~Mars~=Jupiter~Venus} and Earth has {1:NM:=1} moon.</p>]]></text>"
        "</questiontext><penalty>0.3333333</penalty></question></quiz>"
    )
    item = moodle_xml.parse_bank(xml, "p.xml", "p").items[0]
    assert item.type == "multianswer" and [s.kind for s in item.subquestions] == ["MCH", "NM"]
    assert item.extra_value("penalty") == "0.3333333"
    quiz = bank_quiz(moodle_xml.parse_bank(xml, "p.xml", "p"))
    assert quiz.questions[0].text == "The largest planet is ___ and Earth has 1 moon."
    # The blank is written back as it was read (its source kept while unchanged).
    assert moodle_xml.render_item(item).count("{1:MCH:~Mars~=Jupiter~Venus}") == 1
    with pytest.raises(QuizFormatError, match=r"embedded answer 1 \(MC\) needs at least two"):
        moodle_xml.parse_bank(xml.replace("MCH:~Mars~=Jupiter~Venus", "MC:=Jupiter"), "b", "b")


def test_editing_one_blank_rewrites_only_that_blank() -> None:
    from quiztui.core.bank import apply_edit, blank_number, item_index

    bank = _read(CLOZE)
    quiz = bank_quiz(bank)
    blank = next(q for q in quiz.questions if q.id == "q1.3")
    assert (item_index(blank.id), blank_number(blank.id)) == (0, 3)
    item = bank.items[0]
    edited = apply_edit(item, blank.text, ("two", "three", "four"), 1, blank=3)
    assert [c.text.text for c in edited.subquestions[2].choices] == ["two", "three", "four"]
    assert edited.subquestions[:2] == item.subquestions[:2] and edited.stem == item.stem
    written = gift.render_item(edited)
    # The blank had weights (%50%tree), so the edited answers keep weights: 100 on the key.
    assert "{2:MULTICHOICE:%0%two~%100%three#Count again~%0%four}" in written
    assert _read(written).items[0].subquestions == edited.subquestions


def test_vet_and_lint_a_cloze_bank_headless(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from quiztui.cli import main

    path = tmp_path / "english.gift"
    path.write_text(CLOZE, encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(["vet", str(path), "--no-tui", "--fail-on", "never", "-o", str(report)]) == 0
    body = json.loads(report.read_text(encoding="utf-8"))
    text = json.dumps(body)
    assert "q1.2" in text and "q1.3" in text and "short answer" in text
    assert main(["lint", str(path), "--fail-on", "never", "--format", "json"]) == 0
    json.loads(capsys.readouterr().out)
    out = tmp_path / "english.xml"
    assert main(["convert", str(path), str(out)]) == 0
    assert out.read_text(encoding="utf-8").count('<question type="cloze">') == 2


def test_comments_stay_with_their_question_on_a_round_trip() -> None:
    # Moodle rule: readquestion blanks every line starting with '//' before reading the question,
    # so comments never change a question; quiztui keeps the author's own comment lines with the
    # question they precede (Moodle's export writes '// question: N  name: …' there too).
    text = (
        "// question: 12  name: Exist\n"
        "// check with Anna before the test\n"
        "// [id:e-1] [tag:grammar]\n"
        "::Exist::{~It ~=There} are books.\n"
        "\n"
        "// quiztui: badge=poor\n"
        "Sky is blue {T}\n"
    )
    bank = _read(text)
    assert bank.items[0].comments == (
        "// question: 12  name: Exist",
        "// check with Anna before the test",
    )
    assert bank.items[1].comments == ()
    written = gift.write_bank(bank)
    assert written.startswith(
        "// question: 12  name: Exist\n// check with Anna before the test\n// [id:e-1]\n"
    )
    assert _read(written).items[0].comments == bank.items[0].comments


# --- the rest of GIFT as Moodle reads it ------------------------------------------------------


def test_category_applies_to_the_questions_after_it() -> None:
    # Moodle rule: readquestion returns a 'category' pseudo-question for '$CATEGORY:' and the
    # importer files every following question in it.
    bank = _read("$CATEGORY: $course$/English/Grammar\n\nQ1 {T}\n\n$CATEGORY: Other\n\nQ2 {F}\n")
    assert [i.category for i in bank.items] == ["$course$/English/Grammar", "Other"]


@pytest.mark.parametrize(
    ("text", "fmt", "stem"),
    [
        # Moodle rule: parse_text_with_format reads a leading [html]/[markdown]/[plain]/[moodle]
        # and keeps the default (moodle) for anything else in brackets.
        ("[html]<b>Bold</b> stem {T}", "html", "<b>Bold</b> stem"),
        ("[markdown]**Bold** stem {T}", "markdown", "**Bold** stem"),
        ("[plain]Plain stem {T}", "plain", "Plain stem"),
        ("[moodle]Moodle stem {T}", "moodle", "Moodle stem"),
        ("[other] stays text {T}", "moodle", "[other] stays text"),
    ],
)
def test_text_formats(text: str, fmt: str, stem: str) -> None:
    item = _read(text + "\n").items[0]
    assert (item.stem.format, item.stem.text) == (fmt, stem)


def test_every_escape() -> None:
    # Moodle rule: escapedchar_pre/escapedchar_post: \\ \: \# \= \{ \} \~ and \n are literal.
    item = _read(
        "Ratio 1\\:2, \\#1, a\\=b, \\{x\\}, \\~y, back\\\\slash\\nnext? {=ok ~no}\n"
    ).items[0]
    assert item.stem.text == "Ratio 1:2, #1, a=b, {x}, ~y, back\\slash\nnext?"


def test_crlf_and_utf8_bom() -> None:
    # Moodle rule: the importer splits the file into lines whatever their ending and
    # qformat_default strips a UTF-8 byte order mark before reading.
    bank = _read("\ufeff::One::First? {=a ~b}\r\n\r\n::Two::Second? {T}\r\n")
    assert [(i.title, i.line) for i in bank.items] == [("One", 1), ("Two", 3)]


def test_numerical_tolerance_and_range() -> None:
    # Moodle rule: readquestion (numerical) takes '[min]..[max]' before 'answer:margin'.
    bank = _read("A? {#1822:5}\n\nB? {#1..5}\n\nC? {#=3.1415:0.0005 =%50%3.1:0.1}\n")
    assert [[c.text.text for c in i.choices] for i in bank.items] == [
        ["1822:5"],
        ["1..5"],
        ["3.1415:0.0005", "3.1:0.1"],
    ]
