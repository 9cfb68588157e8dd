import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_punctcase.labels import (
    LabelScheme,
    apply_case,
    build_mixed_case_lexicon,
    case_label_of,
    split_trailing_marks,
)

SCHEME = LabelScheme()


def test_parse_tricky_text():
    text = (
        'I\'m sure, Dr. Smith -- he said "yes!" -- costs 3.5 or 1,000 dollars... '
        "(Really?!) NASA's iPhone is high-functioning; the U.S. isn't."
    )
    parsed = SCHEME.parse(text)
    assert parsed.words == [
        "i'm", "sure", "dr.", "smith", "he", "said", "yes", "costs", "3.5", "or", "1,000", "dollars",
        "really", "nasa's", "iphone", "is", "high-functioning", "the", "u.s.", "isn't",
    ]
    assert parsed.punct == [
        "O", "COMMA", "O", "COMMA", "O", "O", "PERIOD", "O", "O", "O", "O", "PERIOD",
        "QUESTION", "O", "O", "O", "COMMA", "O", "O", "PERIOD",
    ]
    assert parsed.case == [
        "UPPER_FIRST", "LOWER", "UPPER_FIRST", "UPPER_FIRST", "LOWER", "LOWER", "LOWER", "LOWER", "LOWER",
        "LOWER", "LOWER", "LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED", "LOWER", "LOWER", "LOWER",
        "ALL_UPPER", "LOWER",
    ]


def test_render_round_trip():
    text = "So what are the risks? I am not technical, but NASA's iPhone costs 3.5 dollars."
    parsed = SCHEME.parse(text)
    assert SCHEME.render(parsed.words, parsed.punct, parsed.case, {"iphone": "iPhone"}) == text


def test_marks_outside_the_scheme_fall_back():
    parsed = SCHEME.parse("stop! wait: now; go")
    assert parsed.punct == ["PERIOD", "COMMA", "COMMA", "O"]
    wider = LabelScheme(punct_labels=("O", "COMMA", "PERIOD", "QUESTION", "EXCLAMATION", "COLON"))
    assert wider.parse("stop! wait: now; go").punct == ["EXCLAMATION", "COLON", "COMMA", "O"]
    assert wider.render(["stop", "wait"], ["EXCLAMATION", "COLON"], ["UPPER_FIRST", "LOWER"]) == "Stop! wait:"


def test_strongest_of_several_marks():
    assert SCHEME.label_of_marks("?!") == "QUESTION"
    assert SCHEME.label_of_marks('."') == "PERIOD"
    assert SCHEME.label_of_marks("...") == "PERIOD"
    assert SCHEME.label_of_marks(",)") == "COMMA"
    assert SCHEME.label_of_marks('"') == "O"


@pytest.mark.parametrize(
    "token, expected",
    [
        ("risks?", ("risks", "?")),
        ("3.5.", ("3.5", ".")),
        ("1,000,", ("1,000", ",")),
        ("students'", ("students'", "")),
        ("'quoted'", ("'quoted", "'")),
        ("U.S.", ("U.S.", "")),
        ("U.S..", ("U.S.", ".")),
        ("--", ("", "--")),
        ("don't", ("don't", "")),
    ],
)
def test_split_trailing_marks(token, expected):
    assert split_trailing_marks(token) == expected


@pytest.mark.parametrize(
    "word, label",
    [("hello", "LOWER"), ("Hello", "UPPER_FIRST"), ("I", "UPPER_FIRST"), ("NASA", "ALL_UPPER"),
     ("iPhone", "MIXED"), ("McDonald's", "MIXED"), ("3.5", "LOWER"), ("I'm", "UPPER_FIRST"), ("3D", "UPPER_FIRST")],
)
def test_case_label_of(word, label):
    assert case_label_of(word) == label


def test_apply_case():
    assert apply_case("iphone", "MIXED", {"iphone": "iPhone"}) == "iPhone"
    assert apply_case("mcdonald's", "MIXED", {}) == "Mcdonald's"  # unknown form: capitalised
    assert apply_case("3d", "UPPER_FIRST") == "3D"
    assert apply_case("привет", "UPPER_FIRST") == "привет"  # casing classes are for Latin script
    # Case changes never change a word's length: "ß" has no one-letter capital.
    assert apply_case("straße", "ALL_UPPER") == "STRAßE"
    assert apply_case("ß", "UPPER_FIRST") == "ß"
    assert apply_case("İstanbul", "LOWER") == "İstanbul"
    with pytest.raises(ValueError):
        apply_case("x", "SHOUTING")


def test_lexicon_keeps_majority_mixed_forms():
    texts = ["My iPhone and your iPhone.", "McDonald's, McDonald's.", "ThE end, the end, the end."]
    assert build_mixed_case_lexicon(texts) == {"iphone": "iPhone", "mcdonald's": "McDonald's"}


def test_scheme_validation():
    with pytest.raises(ValueError, match="start with 'O'"):
        LabelScheme(punct_labels=("COMMA", "O"))
    with pytest.raises(ValueError, match="unknown punctuation labels"):
        LabelScheme(punct_labels=("O", "DASH"))


words = st.lists(st.text(alphabet="abcdefghij-", min_size=1, max_size=8).filter(lambda w: w[0].isalpha() and w[-1].isalpha()), min_size=1, max_size=30)


@settings(max_examples=50, deadline=None)
@given(words, st.data())
def test_labels_to_text_to_labels(word_list, data):
    """Any labelling of plain words renders to text that parses back to the same labels."""
    punct = data.draw(st.lists(st.sampled_from(SCHEME.punct_labels), min_size=len(word_list), max_size=len(word_list)))
    case = data.draw(st.lists(st.sampled_from(["LOWER", "UPPER_FIRST", "ALL_UPPER"]), min_size=len(word_list), max_size=len(word_list)))
    # A one-letter word in capitals is UPPER_FIRST by convention ("I", "A").
    case = ["UPPER_FIRST" if c == "ALL_UPPER" and sum(ch.isalpha() for ch in w) == 1 else c for w, c in zip(word_list, case)]
    parsed = SCHEME.parse(SCHEME.render(word_list, punct, case))
    assert parsed.words == [w.lower() for w in word_list]
    assert parsed.punct == punct
    assert parsed.case == case
