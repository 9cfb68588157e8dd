"""What a restorer accepts, parsed and checked in one place: the pipeline, the torch-free runtime and the
stream all take their input through here, so they accept the same things and refuse the rest alike.

A transcript is a string (split on whitespace) or, with ``is_split_into_words=True``, a list of words.
A word of such a list is a ``str`` or a dict as speech recognisers give timed words
(``{"word": " Hello", "start": 0.0, "end": 0.4, ...}``): its ``"word"`` (whitespace around it dropped)
is the word, and every other field is carried to the word's entry in the result. Many transcripts are
a list of strings, or a list of word lists.

A timed word's ``"start"`` and ``"end"``, where present and not None, are checked as they are parsed
(:class:`Timeline`), in the same way for every front door (the pipeline, the runtime, the stream and,
through :func:`~hf_punctcase.subtitles.whisper_words`, subtitles): each is a number of seconds from 0
to :data:`MAX_SECONDS`, a word does not end before it starts, and times do not run backwards (no word
starts before the timed word before it; overlapping words are fine). A fault is refused, naming the
word, not repaired (only :func:`~hf_punctcase.subtitles.whisper_words` takes a Whisper word's end before
its own start as the start).

Faults: a value of the wrong type is a ``TypeError`` (a transcript that is not a string, a word that is
neither a ``str`` nor a dict, a ``"word"`` that is not a ``str``, a time that is not a number); a value
of the right type that cannot be one word is a ``ValueError`` (a word that is empty or holds
whitespace, a dict without ``"word"``, a time out of range or running backwards). Messages name the
transcript and the word.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .labels import split_trailing_marks

#: The latest word time accepted, in seconds (about 31 years): no recording runs longer, and subtitle
#: files cannot hold much later times (Python's timedelta, which SRT goes through, ends near 8.6e13 s).
MAX_SECONDS = 10**9
#: The fields of a timed word that hold times, in seconds.
TIME_FIELDS = ("start", "end")


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


def seconds(value: Any, key: str, where: str) -> float:
    """A word's time (its ``key``, ``"start"`` or ``"end"``) as a float, checked: TypeError unless a
    number, ValueError unless from 0 to :data:`MAX_SECONDS` (NaN and infinities included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):  # NumPy's numbers too
        raise TypeError(f"{where}: {key!r} is not a time in seconds (got {value!r:.60})")
    # Compared before any conversion: an int too large for a float would raise OverflowError there.
    if not 0 <= value <= MAX_SECONDS:
        shown = repr(value) if len(repr(value)) <= 30 else f"{repr(value)[:24]}… ({len(repr(value))} digits)"
        raise ValueError(f"{where}: {key!r} is {shown}, not a time from 0 to {MAX_SECONDS:,} seconds")
    return float(value)


@dataclass
class Timeline:
    """The times of one transcript's timed words, checked word by word in order (:meth:`check`);
    ``last_start`` is the start of the last timed word checked."""

    last_start: float | None = None

    def check(self, fields: Mapping[str, Any], where: str) -> None:
        """Check a word's ``"start"`` and ``"end"`` (each optional; None counts as absent): each a time
        (:func:`seconds`), the end not before the start, the start not before the last word's.
        Raises naming ``where``; ``last_start`` moves only when the word passes."""
        times = {key: seconds(fields[key], key, where) for key in TIME_FIELDS if fields.get(key) is not None}
        start, end = times.get("start"), times.get("end")
        if start is not None and end is not None and end < start:
            raise ValueError(f"{where}: ends at {end} s, before it starts ({start} s)")
        if start is None:
            return
        if self.last_start is not None and start < self.last_start:
            raise ValueError(
                f"{where}: starts at {start} s, before the timed word before it ({self.last_start} s); "
                "word times must not run backwards"
            )
        self.last_start = start


def parse_word(item: Any, where: str, timeline: Timeline | None = None) -> tuple[str, dict[str, Any] | None]:
    """One word of a pre-split transcript: ``(word, other fields)``, the fields None for a ``str``; a
    dict's times are checked against ``timeline`` (the transcript's, else the word's own alone)."""
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
        (Timeline() if timeline is None else timeline).check(item, f"{where} ({word!r:.60})")
        return word, {key: value for key, value in item.items() if key != "word"}
    raise TypeError(f"{where} is {type(item).__name__}; a word is a str or a dict with a 'word' field")


def written_word(token: str | Mapping[str, Any]) -> str:
    """A checked input word as it was given: a ``str`` itself, a timed word's ``word`` stripped (as
    :func:`parse_word` reads it)."""
    return token["word"].strip() if isinstance(token, Mapping) else token


def parse_words(items: Sequence[Any], where: str = "") -> InputWords:
    """A pre-split transcript (words as ``str`` or dicts), every word checked (:func:`parse_word`), the
    times of its timed words in order (:class:`Timeline`)."""
    words, extras, timed = [], [], False
    timeline = Timeline()
    for i, item in enumerate(items):
        word, fields = parse_word(item, f"word {i}{where}", timeline)
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
    "InputWords", "MAX_SECONDS", "TIME_FIELDS", "Timeline", "check_one_token", "parse_inputs", "parse_word",
    "parse_words", "seconds", "split_words", "transcript", "written_word",
]
