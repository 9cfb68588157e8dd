"""Text as it is spoken: numbers spelled out (num2words) on the way into speech, and ASR output brought
to the same form on the way out (lowercase, no punctuation, numbers spelled).

Spelling the reference before synthesis keeps the reference, the audio and the hypothesis one
sequence of words: "buy 20 apples." is spoken and written "buy twenty apples.", and an ASR system
that writes "20" has its hypothesis spelled the same way before it is compared or aligned.
"""

from __future__ import annotations

import re

# A number inside a token: an optional currency sign, digits with thousands separators and a
# decimal part, then an optional ordinal / decade / percent suffix; "'80s" is a decade too.
_NUMBER = re.compile(
    r"(?P<currency>[$£€])?(?P<apostrophe>')?(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<suffix>st|nd|rd|th|s|%)?(?![\w])"
)
_CLOCK = re.compile(r"\b(?P<hour>\d{1,2}):(?P<minute>\d{2})\b")
_CURRENCY = {"$": "dollars", "£": "pounds", "€": "euros"}
_SENTENCE_END = re.compile(r"[.?!][\"')\]]*$")
# Marks ASR output may carry (Whisper's); an apostrophe inside a word ("don't") is part of it.
_OUTER_PUNCTUATION = re.compile(r"^[^\w']+|[^\w']+$")


def _words_of(value: str) -> str:
    """num2words output as spoken words: "twenty-five" → "twenty five", no commas."""
    return value.replace("-", " ").replace(",", "")


def num2words(value, **kwargs) -> str:
    from num2words import num2words as spell  # the [asr] extra

    return spell(value, **kwargs)


def _plural(words: str) -> str:
    head, _, last = words.rpartition(" ")
    last = last[:-1] + "ies" if last.endswith("y") else last + "s"
    return f"{head} {last}".strip()


def _clock(match: re.Match) -> str:
    minute = int(match["minute"])
    spoken = _words_of(num2words(int(match["hour"])))
    if minute:
        spoken += (" oh " if minute < 10 else " ") + _words_of(num2words(minute))
    return spoken


def _spell(match: re.Match) -> str:
    digits = match["number"].replace(",", "")
    suffix = match["suffix"] or ""
    if digits.count(".") or suffix == "%":
        spoken = _words_of(num2words(float(digits) if "." in digits else int(digits)))
        spoken += " percent" if suffix == "%" else ""
    elif suffix in ("st", "nd", "rd", "th"):
        spoken = _words_of(num2words(int(digits), to="ordinal"))
    elif match["apostrophe"] and suffix == "s" and len(digits) == 2:  # '80s
        spoken = _plural(_words_of(num2words(int(digits))))
    elif len(digits) == 4 and "," not in match["number"] and not match["currency"] and 1100 <= int(digits) <= 2099:
        spoken = _words_of(num2words(int(digits), to="year"))
        spoken = _plural(spoken) if suffix == "s" else spoken  # 1990s
    else:
        spoken = _words_of(num2words(int(digits)))
        spoken = spoken + " s" if suffix == "s" else spoken
    if match["currency"]:
        spoken += " " + _CURRENCY[match["currency"]]
    # apart from letters it touches ("10x" → "ten x"), not from the marks that trail it
    before, after = match.string[: match.start()], match.string[match.end() :]
    return (" " if before[-1:].isalnum() else "") + spoken + (" " if after[:1].isalnum() else "")


def spell_numbers(text: str) -> str:
    """``text`` with every number spelled out as it is read aloud ("$10,000" → "ten thousand dollars",
    "15th" → "fifteenth", "1990s" → "nineteen nineties", "3.5%" → "three point five percent"), its
    other characters kept; a spelled number that starts a sentence is capitalised, and one inside a
    hyphenated word stands as words of its own ("18-year-old" → "eighteen year old")."""
    tokens = text.split()
    spoken: list[str] = []
    for token in tokens:
        if not any(ch.isdigit() for ch in token):
            spoken.append(token)
            continue
        # the words of a compound with a number are spoken apart ("10-cent" → "ten cent")
        replaced = _NUMBER.sub(_spell, _CLOCK.sub(_clock, token))
        replaced = re.sub(r"(?<=\w)-(?=\w)|(?<=\w)-(?= )|(?<= )-(?=\w)", " ", replaced)
        words = replaced.split()
        if words and (not spoken or _SENTENCE_END.search(spoken[-1])) and words[0][:1].islower():
            words[0] = words[0][:1].upper() + words[0][1:]
        spoken.extend(words)
    return " ".join(spoken)


def normalize_transcript(text: str) -> list[str]:
    """ASR output as the words a punctuation model reads: numbers spelled, lowercase, the marks around
    each word removed (an apostrophe inside a word stays: "don't")."""
    words = []
    for token in spell_numbers(text).split():
        word = _OUTER_PUNCTUATION.sub("", token.replace("-", " ")).lower()
        words.extend(part for part in (_OUTER_PUNCTUATION.sub("", w) for w in word.split()) if part)
    return words


__all__ = ["normalize_transcript", "spell_numbers"]
