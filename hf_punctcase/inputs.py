"""What a restorer accepts, parsed and checked in one place: the pipeline, the torch-free runtime and the
stream all take their input through here, so they accept the same things and refuse the rest alike.

A transcript is a string (split on whitespace) or, with ``is_split_into_words=True``, a list of words.
A word of such a list is a ``str`` or a dict as speech recognisers give timed words
(``{"word": " Hello", "start": 0.0, "end": 0.4, ...}``): its ``"word"`` (whitespace around it dropped)
is the word, and every other field is carried to the word's entry in the result. Many transcripts are
a list of strings, or a list of word lists.

Faults: a value of the wrong type is a ``TypeError`` (a transcript that is not a string, a word that is
neither a ``str`` nor a dict, a ``"word"`` that is not a ``str``); a value of the right type that
cannot be one word is a ``ValueError`` (a word that is empty or holds whitespace, a dict without
``"word"``). Messages name the transcript and the word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .labels import split_trailing_marks


@dataclass(frozen=True, eq=False)
class InputWords:
    """An input's words and the marks that trailed them, shared by all its windows; ``extras`` holds,
    for words given as dicts, each word's other fields (None where the input was plain words).

    Held in an object rather than as lists because the pipeline base class walks every list in a
    batch (to move tensors to the device): a list of a million words per window would be walked
    once per window.
    """

    words: list[str]
    marks: list[str]
    extras: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return len(self.words)


def split_words(tokens: Sequence[str], extras: list[dict[str, Any]] | None = None) -> InputWords:
    """Whitespace tokens → words and the punctuation each carried (``"risks?"`` → ``"risks"``, ``"?"``).

    A token of punctuation only (``--``, ``...``) stays a word of its own, so that every token is one
    word of the output."""
    cores, marks = [], []
    for token in tokens:
        core, trail = split_trailing_marks(token)
        if not core:
            core, trail = token, ""
        cores.append(core)
        marks.append(trail)
    return InputWords(cores, marks, extras)


def check_one_token(word: str, where: str) -> None:
    """Raise ValueError naming ``where`` unless a pre-split word is one whitespace token: a word
    holding whitespace would break one word in, one word out."""
    if not word or len(word.split()) != 1 or word != word.strip():
        raise ValueError(f"{where} ({word!r}) is empty or holds whitespace; each word must be one token")


def parse_word(item: Any, where: str) -> tuple[str, dict[str, Any] | None]:
    """One word of a pre-split transcript: ``(word, other fields)``, the fields None for a ``str``."""
    if isinstance(item, str):
        check_one_token(item, where)
        return item, None
    if isinstance(item, Mapping):
        if "word" not in item:
            raise ValueError(f"{where} is a dict without a 'word' field: {dict(item)!r:.200}")
        word = item["word"]
        if not isinstance(word, str):
            raise TypeError(f"{where} has a 'word' of type {type(word).__name__}, not str")
        word = word.strip()  # as speech recognisers give them: " Hello"
        check_one_token(word, where)
        return word, {key: value for key, value in item.items() if key != "word"}
    raise TypeError(f"{where} is {type(item).__name__}; a word is a str or a dict with a 'word' field")


def parse_words(items: Sequence[Any], where: str = "") -> InputWords:
    """A pre-split transcript (words as ``str`` or dicts), every word checked (:func:`parse_word`)."""
    words, extras, timed = [], [], False
    for i, item in enumerate(items):
        word, fields = parse_word(item, f"word {i}{where}")
        words.append(word)
        extras.append(fields if fields is not None else {})
        timed = timed or fields is not None
    return split_words(words, extras if timed else None)


def parse_inputs(inputs: Any, is_split_into_words: bool, caller: str = "punct-case") -> tuple[list, bool]:
    """The transcripts of a restorer's call and whether one was given (the result is then one dict,
    else a list). Strings stay strings, split when their turn comes (:func:`transcript`); word lists
    are parsed and checked here, every one before any is restored."""
    if is_split_into_words and isinstance(inputs, (list, tuple)):
        lists = [isinstance(item, (list, tuple)) for item in inputs]
        if not any(lists):  # one transcript: each word is checked, and a bad one named
            return [parse_words(inputs)], True
        if all(lists):
            return [parse_words(item, f" of transcript {n}") for n, item in enumerate(inputs)], False
    if is_split_into_words:
        raise TypeError(
            "with is_split_into_words=True, pass a list of words (str, or dicts with a \"word\") or a list of such lists"
        )
    if isinstance(inputs, str):
        return [inputs], True
    if isinstance(inputs, (list, tuple)):
        for i, item in enumerate(inputs):
            if not isinstance(item, str):
                raise TypeError(
                    f"{caller} accepts a str or a list of str; item {i} is {type(item).__name__} "
                    "(a list of words? pass is_split_into_words=True)"
                )
        return list(inputs), False
    raise TypeError(f"{caller} accepts a str or a list of str, got {type(inputs).__name__}")


def transcript(item: str | InputWords) -> InputWords:
    """A transcript from :func:`parse_inputs` as words."""
    return item if isinstance(item, InputWords) else split_words(item.split())


__all__ = [
    "InputWords", "check_one_token", "parse_inputs", "parse_word", "parse_words", "split_words",
    "transcript",
]
