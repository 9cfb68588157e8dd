"""Label schemes and the two conversions every other stage relies on.

text  →  (words, punctuation labels, casing labels)     :func:`LabelScheme.parse`
words + labels  →  text                                 :func:`LabelScheme.render`

A *word* is a whitespace token. A punctuation label names the mark that follows the word; a casing
label names how the word is written. Apostrophes and hyphens stay inside words ("don't",
"high-functioning") and numbers keep their internal marks ("3.5", "1,000").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: The one "no label" value of subword label sequences: later subwords, special tokens, padding, and
#: words whose source gave no label. It is the cross-entropy's ``ignore_index``.
IGNORE_INDEX = -100
#: A word-level label a source could not give, as stored in ``datasets.ClassLabel`` columns (whose
#: own convention for "no label" is -1; it becomes :data:`IGNORE_INDEX` on the subwords).
MISSING_LABEL = -1

#: The literature's punctuation set (IWSLT, Che et al. 2016; Sunkara et al. 2020).
DEFAULT_PUNCT_LABELS: tuple[str, ...] = ("O", "COMMA", "PERIOD", "QUESTION")
#: Word casing classes.
DEFAULT_CASE_LABELS: tuple[str, ...] = ("LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED")
#: Disfluency classes of a word: DISFLUENT for fillers ("uh", "um"), discourse markers and edit terms
#: ("i mean") as annotated, and the reparandum of a repair (the first "we were" of "we were we were
#: going"); FLUENT for every other word, the words a fluent transcript keeps.
DISFLUENCY_LABELS: tuple[str, ...] = ("FLUENT", "DISFLUENT")

#: Paragraph classes of a word: END for the last word of a paragraph, INSIDE for every other word.
PARAGRAPH_LABELS: tuple[str, ...] = ("INSIDE", "END")
#: Spoken-command classes of a word (dictation): WORD for a word meant as a word, else the mark or break
#: that the command it is part of dictates ("period" in "chest pain period", both words of "new paragraph").
COMMAND_LABELS: tuple[str, ...] = (
    "WORD", "COMMA", "PERIOD", "QUESTION", "COLON", "SEMICOLON", "EXCLAMATION", "NEWLINE", "PARAGRAPH",
)
#: The words that dictate each command, lowercase as a transcript spells them.
SPOKEN_COMMANDS: dict[str, tuple[str, ...]] = {
    "COMMA": ("comma",),
    "PERIOD": ("period", "full stop"),
    "QUESTION": ("question mark",),
    "COLON": ("colon",),
    "SEMICOLON": ("semicolon", "semi colon"),
    "EXCLAMATION": ("exclamation point", "exclamation mark"),
    "NEWLINE": ("new line", "next line"),
    "PARAGRAPH": ("new paragraph", "next paragraph"),
}
#: What a command writes after the word before it (NEWLINE and PARAGRAPH: a line break, a blank line).
TEXT_OF_COMMAND: dict[str, str] = {
    "COMMA": ",", "PERIOD": ".", "QUESTION": "?", "COLON": ":", "SEMICOLON": ";", "EXCLAMATION": "!",
    "NEWLINE": "\n", "PARAGRAPH": "\n\n",
}

#: Punctuation labels that end a sentence: the next word is capitalised.
SENTENCE_END_LABELS: tuple[str, ...] = ("PERIOD", "QUESTION", "EXCLAMATION")

#: Every punctuation label a scheme may contain, and the mark it writes.
MARK_OF_LABEL: dict[str, str] = {
    "O": "",
    "COMMA": ",",
    "PERIOD": ".",
    "QUESTION": "?",
    "EXCLAMATION": "!",
    "COLON": ":",
    "SEMICOLON": ";",
}
#: Where a mark has no label in the scheme, the label it falls back to (``! → PERIOD``, ``; : → COMMA``;
#: a dash is a pause and counts as a comma, as in Che et al.'s IWSLT preparation).
FALLBACK_LABEL: dict[str, str] = {
    "EXCLAMATION": "PERIOD",
    "COLON": "COMMA",
    "SEMICOLON": "COMMA",
}
_LABEL_OF_MARK: dict[str, str] = {
    ",": "COMMA",
    ".": "PERIOD",
    "?": "QUESTION",
    "!": "EXCLAMATION",
    ":": "COLON",
    ";": "SEMICOLON",
    "-": "COMMA",
    "…": "PERIOD",
}
# When a word is followed by several marks ("?!", ".\"", "..."), the strongest one is the label.
_STRENGTH: dict[str, int] = {
    "QUESTION": 6,
    "EXCLAMATION": 5,
    "PERIOD": 4,
    "SEMICOLON": 3,
    "COLON": 2,
    "COMMA": 1,
    "O": 0,
}

#: Characters that can trail a word as punctuation (including closing quotes and brackets).
TRAILING_PUNCTUATION = ".,?!:;-…\"'”’»)]}"
#: Characters that can open a word (quotes, brackets) and are not part of it.
LEADING_PUNCTUATION = "\"'“‘«([{"
#: The subset of trailing characters that carry a punctuation label.
LABELLED_MARKS = ".,?!:;-…"

# Abbreviations keep their final period as part of the word ("Mr.", "U.S.", "e.g.").
_ABBREVIATION = re.compile(r"^(?:[A-Za-z]\.){2,}$|^(?:mr|mrs|ms|dr|st|jr|sr|vs|etc|prof|inc|ltd|co|no)\.$", re.I)


def strongest_label(labels: Iterable[str]) -> str:
    """The strongest of some punctuation labels ("O" for none): QUESTION > EXCLAMATION > PERIOD >
    SEMICOLON > COLON > COMMA > O, the order that picks one label for a word followed by several marks."""
    return max(labels, key=_STRENGTH.__getitem__, default="O")


def is_latin_letter(ch: str) -> bool:
    return ch.isalpha() and "LATIN" in unicodedata.name(ch, "")


def _is_latin_word(word: str) -> bool:
    """True when every cased letter of ``word`` is Latin, so that English casing rules apply."""
    if word.isascii():  # every ASCII letter is Latin; most words, without a name lookup per letter
        return True
    return all(is_latin_letter(ch) for ch in word if ch.isalpha() and ch.lower() != ch.upper())


# The possessive clitic is written in lowercase whatever the casing of its stem ("NASA's").
_POSSESSIVE = re.compile(r"^(.*[^\W\d_].*?)(['’][sS])$")


def _split_possessive(word: str) -> tuple[str, str]:
    match = _POSSESSIVE.match(word)
    return (match.group(1), match.group(2)) if match else (word, "")


def case_label_of(word: str) -> str:
    """Casing class of a written word: LOWER, UPPER_FIRST, ALL_UPPER or MIXED."""
    stem, clitic = _split_possessive(word)
    if clitic and clitic[1] == "s" and len([ch for ch in stem if ch.isalpha()]) > 1 and stem == stem.upper():
        return "ALL_UPPER"  # "NASA's"
    letters = [ch for ch in word if ch.isalpha()]
    if not letters or word == word.lower():
        return "LOWER"
    if len(letters) == 1:
        return "UPPER_FIRST"  # "I", "A", "3D"
    if all(ch.isupper() for ch in letters):
        return "ALL_UPPER"
    if letters[0].isupper() and all(not ch.isupper() for ch in letters[1:]):
        return "UPPER_FIRST"  # "Hello", "I'm", "High-functioning"
    return "MIXED"  # "iPhone", "McDonald's"


def _upper(text: str) -> str:
    """Uppercase character by character, keeping characters whose capital is not one character
    ("ß" → "SS" would change the word) or is the capital of another letter: "ı", "ſ" and "ẛ"
    capitalise to "I", "S" and "Ṡ", which lowercase to "i", "s" and "ṡ", so the word would no longer
    be the input word up to case."""
    if text.isascii():  # ASCII letters map one to one: most words, without a loop per character
        return text.upper()
    return "".join(up if len(up := ch.upper()) == 1 and up.lower() == ch.lower() else ch for ch in text)


def _lower(text: str) -> str:
    """Lowercase character by character, with the same guard ("İ" → "i̇" is two characters)."""
    if text.isascii():
        return text.lower()
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


def _upper_first_letter(word: str) -> str:
    for i, ch in enumerate(word):
        if ch.isalpha():
            return word[:i] + _upper(ch) + word[i + 1 :]
    return word


def apply_case(word: str, case_label: str, lexicon: dict[str, str] | None = None) -> str:
    """Write ``word`` in the casing class ``case_label``.

    MIXED takes the surface form from ``lexicon`` (lowercase → observed form) and falls back to
    UPPER_FIRST for a word the lexicon does not know. Words in non-Latin scripts are returned as
    they are: the casing classes are English ones.
    """
    if not _is_latin_word(word):
        return word
    lowered = _lower(word)
    if case_label == "LOWER":
        return lowered
    if case_label == "UPPER_FIRST":
        return _upper_first_letter(lowered)
    if case_label == "ALL_UPPER":
        stem, clitic = _split_possessive(word)
        return _upper(stem) + _lower(clitic)
    if case_label == "MIXED":
        form = (lexicon or {}).get(lowered)
        if form is not None and len(form) == len(word):
            return form
        return _upper_first_letter(lowered)
    raise ValueError(f"unknown casing label {case_label!r}")


def split_trailing_marks(token: str) -> tuple[str, str]:
    """Split a token into its core and the punctuation that trails it: ``"risks?"`` → ``("risks", "?")``.

    Internal marks stay in the core ("3.5", "1,000", "don't"), and so does the period of an
    abbreviation ("U.S.", "Dr."). Returns ``("", token)`` for a token made only of punctuation.
    """
    end = len(token)
    while end > 0 and token[end - 1] in TRAILING_PUNCTUATION:
        end -= 1
    core, trail = token[:end], token[end:]
    # A trailing apostrophe is possessive ("students'") unless the token opened with one.
    if trail.startswith(("'", "’")) and core and not token.startswith(("'", "‘")):
        core, trail = core + trail[0], trail[1:]
    if trail.startswith(".") and core and _ABBREVIATION.match(core + "."):
        core, trail = core + ".", trail[1:]
    return core, trail


def restored_trail(trail: str, mark: str) -> str:
    """What follows a word in the output when its marks are predicted: its trailing characters
    ``trail`` with the punctuation marks among them replaced by the predicted ``mark``. Closing quotes
    and brackets stay; the mark takes the place of the first mark it replaces, or follows them where
    there was none: ``."`` + "," → ``,"``; ``)`` + "." → ``).``; ``"`` + "" → ``"``."""
    first = next((i for i, ch in enumerate(trail) if ch in LABELLED_MARKS), len(trail))
    return trail[:first] + mark + "".join(ch for ch in trail[first:] if ch not in LABELLED_MARKS)


@dataclass
class LabeledWords:
    """Words with one punctuation and one casing label each (labels as strings)."""

    words: list[str]
    punct: list[str]
    case: list[str]

    def __post_init__(self) -> None:
        if not len(self.words) == len(self.punct) == len(self.case):
            raise ValueError(
                f"words, punct and case must have one entry per word, got "
                f"{len(self.words)}, {len(self.punct)} and {len(self.case)}"
            )

    def __len__(self) -> int:
        return len(self.words)


@dataclass(frozen=True)
class LabelScheme:
    """The label sets of a model, and conversions between text and labels.

    ``punct_labels`` must start with "O"; each other label names a mark (see :data:`MARK_OF_LABEL`).
    Marks without a label of their own map through :data:`FALLBACK_LABEL`.
    """

    punct_labels: tuple[str, ...] = DEFAULT_PUNCT_LABELS
    case_labels: tuple[str, ...] = DEFAULT_CASE_LABELS
    _mark_to_label: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "punct_labels", tuple(self.punct_labels))
        object.__setattr__(self, "case_labels", tuple(self.case_labels))
        if not self.punct_labels or self.punct_labels[0] != "O":
            raise ValueError(f"punct_labels must start with 'O', got {self.punct_labels}")
        unknown = [label for label in self.punct_labels if label not in MARK_OF_LABEL]
        if unknown:
            raise ValueError(f"unknown punctuation labels {unknown}; known: {sorted(MARK_OF_LABEL)}")
        if set(self.case_labels) - set(DEFAULT_CASE_LABELS) or "LOWER" not in self.case_labels:
            raise ValueError(f"case_labels must be a subset of {DEFAULT_CASE_LABELS} containing LOWER")
        mapping = {}
        for mark, label in _LABEL_OF_MARK.items():
            while label not in self.punct_labels:
                label = FALLBACK_LABEL.get(label, "O")
            mapping[mark] = label
        object.__setattr__(self, "_mark_to_label", mapping)

    # ---- label ids -------------------------------------------------------------------------
    @property
    def punct2id(self) -> dict[str, int]:
        return {label: i for i, label in enumerate(self.punct_labels)}

    @property
    def case2id(self) -> dict[str, int]:
        return {label: i for i, label in enumerate(self.case_labels)}

    # ---- marks -----------------------------------------------------------------------------
    def label_of_marks(self, marks: str) -> str:
        """The punctuation label of the marks trailing a word (quotes and brackets are ignored)."""
        return strongest_label(self._mark_to_label[ch] for ch in marks if ch in self._mark_to_label)

    def mark_of(self, punct_label: str) -> str:
        return MARK_OF_LABEL[punct_label]

    # ---- text → words + labels -------------------------------------------------------------
    def parse(self, text: str) -> LabeledWords:
        """Turn punctuated, cased text into words and labels (for training and evaluation).

        Opening/closing quotes and brackets are dropped; a token made only of punctuation ("--",
        "...") gives its mark to the word before it. The casing label of "MIXED" words needs the
        surface form: collect those with :func:`build_mixed_case_lexicon`.
        """
        return self.parse_tokens(text.split())[0]

    def parse_tokens(self, tokens: Sequence[str]) -> tuple[LabeledWords, list[int]]:
        """:meth:`parse` over whitespace tokens; also returns, for each word, the index of its token
        (so that per-token annotations such as disfluency marks can follow the words)."""
        words: list[str] = []
        punct: list[str] = []
        case: list[str] = []
        sources: list[int] = []
        for index, token in enumerate(tokens):
            core, marks = split_trailing_marks(token.lstrip(LEADING_PUNCTUATION))
            label = self.label_of_marks(marks)
            if not core:
                if words:
                    punct[-1] = strongest_label((punct[-1], label))
                continue
            cased = case_label_of(core)
            if cased not in self.case_labels:
                cased = "UPPER_FIRST" if "UPPER_FIRST" in self.case_labels else "LOWER"
            words.append(core.lower())
            punct.append(label)
            case.append(cased)
            sources.append(index)
        return LabeledWords(words, punct, case), sources

    # ---- words + labels → text -------------------------------------------------------------
    def render_word(self, word: str, punct_label: str, case_label: str, lexicon: dict[str, str] | None = None) -> str:
        return apply_case(word, case_label, lexicon) + self.mark_of(punct_label)

    def render(
        self,
        words: Sequence[str],
        punct: Sequence[str],
        case: Sequence[str],
        lexicon: dict[str, str] | None = None,
    ) -> str:
        """Join words with their casing and trailing marks into one string."""
        labeled = LabeledWords(list(words), list(punct), list(case))
        return " ".join(
            self.render_word(w, p, c, lexicon) for w, p, c in zip(labeled.words, labeled.punct, labeled.case)
        )


def build_mixed_case_lexicon(texts: Iterable[str], min_count: int = 2) -> dict[str, str]:
    """Lowercase word → its most frequent MIXED surface form ("iphone" → "iPhone").

    Only words whose most frequent written form is MIXED enter the lexicon, so that "McDonald's"
    is kept and a stray "ThE" is not.
    """
    forms: dict[str, Counter] = {}
    for text in texts:
        for token in text.split():
            core, _ = split_trailing_marks(token.lstrip(LEADING_PUNCTUATION))
            if core and any(ch.isalpha() for ch in core):
                forms.setdefault(core.lower(), Counter())[core] += 1
    lexicon = {}
    for lowered, counter in forms.items():
        form, count = counter.most_common(1)[0]
        if case_label_of(form) == "MIXED" and count >= min_count:
            lexicon[lowered] = form
    return dict(sorted(lexicon.items()))
