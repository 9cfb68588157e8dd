"""Interchange formats: IWSLT in Che et al.'s layout, and NeMo's punctuation-capitalization layout.

Che: one ``token<TAB>LABEL`` per line (labels O, COMMA, PERIOD, QUESTION), lowercased, contractions
split ("do", "n't"). NeMo: ``text.txt`` (one lowercase, unpunctuated example per line) beside
``labels.txt`` (one label per word, the mark or O followed by U for a capitalised word or O).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ..labels import LabeledWords, LabelScheme

IGNORED = None  # a label the format cannot give (casing in Che's layout)


def read_che(path: str | os.PathLike, join_contractions: bool = True) -> LabeledWords:
    """Read a Che-layout file as one stream of words. Casing is unknown: case labels are None.

    ``join_contractions`` glues split clitics back ("do" + "n't" → "don't", "we" + "'re" → "we're"),
    as ASR output writes them; the joined word takes the clitic's label.
    """
    words: list[str] = []
    punct: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            try:
                token, label = line.split("\t")
            except ValueError:
                raise ValueError(f"{path}:{number}: expected 'token<TAB>LABEL', got {line!r}") from None
            if not token.split():  # a whitespace-only token (e.g. U+00A0) is no word: its label moves back
                if words and label != "O":
                    punct[-1] = label
                continue
            if join_contractions and words and (token.startswith("'") or token == "n't"):
                words[-1] += token
                punct[-1] = label
            else:
                words.append(token)
                punct.append(label)
    return LabeledWords(words, punct, [IGNORED] * len(words))


def write_che(path: str | os.PathLike, examples: Iterable[LabeledWords]) -> None:
    """Write labelled words in Che's layout (lowercased; one stream, examples in order)."""
    with open(path, "w", encoding="utf-8") as handle:
        for example in examples:
            for word, label in zip(example.words, example.punct):
                handle.write(f"{word.lower()}\t{label}\n")


def _nemo_label(scheme: LabelScheme, punct: str, case: str | None) -> str:
    mark = scheme.mark_of(punct) or "O"
    return mark + ("U" if case in ("UPPER_FIRST", "ALL_UPPER", "MIXED") else "O")


def write_nemo(directory: str | os.PathLike, examples: Iterable[LabeledWords], scheme: LabelScheme | None = None) -> None:
    """Write ``text.txt`` and ``labels.txt`` for NeMo. NeMo's capitalisation is one bit per word:
    ALL_UPPER and MIXED are written as U (capitalised)."""
    scheme = scheme or LabelScheme()
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "text.txt"), "w", encoding="utf-8") as text, open(
        os.path.join(directory, "labels.txt"), "w", encoding="utf-8"
    ) as labels:
        for example in examples:
            text.write(" ".join(w.lower() for w in example.words) + "\n")
            labels.write(" ".join(_nemo_label(scheme, p, c) for p, c in zip(example.punct, example.case)) + "\n")


def read_nemo(directory: str | os.PathLike, scheme: LabelScheme | None = None) -> Iterator[LabeledWords]:
    """Read NeMo's ``text.txt`` + ``labels.txt``: U → UPPER_FIRST, O → LOWER."""
    scheme = scheme or LabelScheme()
    with open(os.path.join(directory, "text.txt"), encoding="utf-8") as text, open(
        os.path.join(directory, "labels.txt"), encoding="utf-8"
    ) as labels:
        for number, (line, label_line) in enumerate(zip(text, labels), 1):
            words, tags = line.split(), label_line.split()
            if len(words) != len(tags):
                raise ValueError(f"{directory}: line {number} has {len(words)} words but {len(tags)} labels")
            punct, case = [], []
            for tag in tags:
                if len(tag) != 2 or tag[1] not in "UO":
                    raise ValueError(f"{directory}: line {number}: bad label {tag!r} (expected e.g. 'OU', ',O', '.U')")
                punct.append("O" if tag[0] == "O" else scheme.label_of_marks(tag[0]))
                case.append("UPPER_FIRST" if tag[1] == "U" else "LOWER")
            yield LabeledWords(words, punct, case)
