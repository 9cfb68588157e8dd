"""Subtitles from timed words: speech recogniser output with word timestamps → restored text → cues.

    Whisper JSON ─whisper_words─▶ timed words ─asr_words─▶ ASR-like words ─pipeline─▶ restored words
    restored words ─build_cues─▶ cues ─to_srt / to_vtt─▶ subtitle file

:func:`whisper_words` reads what openai-whisper (``--word_timestamps True --output_format json``) and
faster-whisper (segments with ``word_timestamps=True``, dumped as dicts) give: ``{"segments": [{"words":
[{"word", "start", "end", ...}, ...]}, ...]}``, or a plain list of such words.

Whisper's words carry a leading space, and often its own punctuation and capitals. By default they
are restored from scratch as a transcript without punctuation and casing is (:func:`asr_words`):
whitespace around each word is dropped, its letters lowercased, and its marks replaced by the
predicted ones. With ``keep_punctuation`` the words are kept as Whisper wrote them and its marks stay
(casing is still predicted; marks are predicted where Whisper wrote none).

:func:`build_cues` cuts the restored words into cues: after every sentence end (PERIOD, QUESTION,
EXCLAMATION), and, where a cue would pass ``max_chars`` characters or ``max_seconds`` seconds, after
its last comma (or other mark) or, where it has none, at its last pause of at least ``pause`` seconds
between words, or else before the word that would not fit. A cue is one line of text; a word longer
than ``max_chars`` is a cue of its own. Every word is in exactly one cue, in order; a cue runs from its
first word's start to its last word's end.

Writing needs the ``srt`` and ``webvtt-py`` packages (``pip install 'hf_punctcase[subtitles]'``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .restoration.layout import BREAK_COMMANDS
from .inputs import TIME_FIELDS, Timeline, seconds, split_words
from .restoration import is_opaque, is_sentence_end

FORMATS = ("srt", "vtt")
DEFAULT_MAX_CHARS = 42
DEFAULT_MAX_SECONDS = 6.0
DEFAULT_PAUSE = 0.8


@dataclass
class Cue:
    """One subtitle: ``text`` shown from ``start`` to ``end`` (seconds), words ``first_word`` to
    ``last_word`` (indices, inclusive) of the restored transcript."""

    start: float
    end: float
    text: str
    first_word: int
    last_word: int


# ---- reading --------------------------------------------------------------------------------


def whisper_words(data) -> list[dict]:
    """Timed words from parsed Whisper JSON (``{"segments": [{"words": [...]}, ...]}``) or from a list of
    word dicts; each ``{"word": str, "start": float, "end": float, ...}`` with its other fields kept.

    Raises ValueError naming the segment or word at fault: a segment without ``"words"`` (Whisper was
    run without word timestamps), a word without a ``"word"`` string or with a ``start`` / ``end``
    that is not a time in seconds from 0 to :data:`~hf_punctcase.inputs.MAX_SECONDS`, and times that
    run backwards: a word that starts before the word before it (the rule of every front door,
    :class:`~hf_punctcase.inputs.Timeline`; such times would give cues out of order). An ``end``
    before its own ``start`` is taken as the ``start``.
    """
    if isinstance(data, Mapping):
        segments = data.get("segments")
        if not isinstance(segments, list):
            raise ValueError('expected Whisper JSON with a "segments" list, or a list of timed words')
        words = []
        for n, segment in enumerate(segments):
            if not isinstance(segment, Mapping) or not isinstance(segment.get("words"), list):
                raise ValueError(
                    f'segment {n} has no "words" list (transcribe with word timestamps: word_timestamps=True)'
                )
            words.extend(segment["words"])
    elif isinstance(data, list):
        words = data
    else:
        raise ValueError(f"expected Whisper JSON (an object) or a list of timed words, got {type(data).__name__}")
    checked = []
    timeline = Timeline()
    for n, word in enumerate(words):
        if not isinstance(word, Mapping) or not isinstance(word.get("word"), str):
            raise ValueError(f'word {n} is not an object with a "word" string')
        where = f"word {n} ({word['word'].strip()!r:.60})"
        try:
            start, end = (seconds(word.get(key), key, where) for key in TIME_FIELDS)
        except TypeError as error:  # in a file, a time of the wrong type is a fault of its content
            raise ValueError(str(error)) from None
        entry = {**word, "start": start, "end": max(start, end)}
        timeline.check(entry, where)
        checked.append(entry)
    return checked


def parse_json(raw: str | bytes, name: str) -> Any:
    """The parsed JSON of ``raw`` (bytes are UTF-8, a byte-order mark dropped), read from ``name`` (a
    file, "stdin"). Raises ValueError naming it: bytes that are not UTF-8, text that is not JSON (with
    the position), arrays or objects nested deeper than Python's parser follows."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            byte = f"byte 0x{raw[error.start]:02x} at byte {error.start + 1}"
            raise ValueError(f"{name} is not valid UTF-8 ({byte})") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{name} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    except RecursionError:
        # The parser recurses once per level: a file nested thousands deep is not a transcript.
        raise ValueError(
            f"{name} nests arrays or objects too deeply to be read as JSON (Whisper JSON nests five levels)"
        ) from None


def asr_words(words: Sequence[Mapping], keep_punctuation: bool = False) -> list[dict]:
    """Timed words as the pipeline takes them: whitespace around each word dropped (Whisper's leading
    space); words empty after that left out; a word holding whitespace inside split in words sharing
    its times. Without ``keep_punctuation`` each word's letters are lowercased (words an English model
    cannot case, :func:`~hf_punctcase.restoration.is_opaque`, stay as written): the input then looks
    like the transcripts the model learnt from, and the pipeline replaces its marks by predicted ones."""
    result = []
    for word in words:
        for token in word["word"].split():
            if not keep_punctuation and not is_opaque(split_words([token]).words[0]):
                token = token.lower()
            result.append({**word, "word": token})
    return result


# ---- cues -----------------------------------------------------------------------------------


def build_cues(
    words: Sequence[Mapping],
    max_chars: int = DEFAULT_MAX_CHARS,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    pause: float = DEFAULT_PAUSE,
) -> list[Cue]:
    """Restored timed words (the pipeline's ``"words"`` for timed input: ``word``, ``punctuation``,
    ``start``, ``end``) → cues, cut as the module describes. Words ``removed`` from the text
    (``remove_disfluencies``, ``spoken_punctuation``) are in no cue; a dictated break ends one."""
    if max_chars < 1 or not max_seconds > 0 or pause < 0:
        raise ValueError(f"need max_chars ≥ 1, max_seconds > 0, pause ≥ 0; got {max_chars}, {max_seconds}, {pause}")
    cues: list[Cue] = []
    current: list[int] = []

    def overfull() -> bool:
        chars = sum(len(words[i]["word"]) for i in current) + len(current) - 1
        return chars > max_chars or words[current[-1]]["end"] - words[current[0]]["start"] > max_seconds

    def emit(count: int) -> None:
        nonlocal current
        taken, current = current[:count], current[count:]
        start = float(words[taken[0]]["start"])
        end = max(start, float(words[taken[-1]]["end"]))
        cues.append(Cue(start, end, " ".join(words[i]["word"] for i in taken), taken[0], taken[-1]))

    for i, word in enumerate(words):
        if word.get("removed"):  # left out of the text (a disfluency, a dictated command's word)
            continue
        current.append(i)
        while len(current) > 1 and overfull():
            emit(_cut(words, current, pause))
        if is_sentence_end(word) or any(label in BREAK_COMMANDS for label in word.get("dictated", ())):
            emit(len(current))
    if current:
        emit(len(current))
    return cues


def _cut(words: Sequence[Mapping], current: list[int], pause: float) -> int:
    """How many words of an overfull cue to emit (its last word stays for the next cue, at least):
    up to its last mark, else its last pause of at least ``pause`` seconds, else all but the last."""
    for k in range(len(current) - 2, -1, -1):
        if words[current[k]].get("punctuation", "O") != "O":
            return k + 1
    for k in range(len(current) - 2, -1, -1):
        if words[current[k + 1]]["start"] - words[current[k]]["end"] >= pause:
            return k + 1
    return len(current) - 1


# ---- writing --------------------------------------------------------------------------------


def _missing(package: str, error: ImportError) -> ImportError:
    return ImportError(
        f"writing subtitles needs the {package} package: pip install 'hf_punctcase[subtitles]' ({error})"
    )


def to_srt(cues: Sequence[Cue]) -> str:
    """The cues as SubRip (SRT) text, numbered from 1 in order."""
    from datetime import timedelta

    try:
        import srt
    except ImportError as error:
        raise _missing("srt", error) from None
    return srt.compose(
        [
            srt.Subtitle(n, timedelta(seconds=cue.start), timedelta(seconds=cue.end), cue.text)
            for n, cue in enumerate(cues, 1)
        ],
        reindex=False,
    )


def _vtt_time(seconds: float) -> str:
    millis = round(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    return f"{hours:02d}:{minutes:02d}:{millis // 1000:02d}.{millis % 1000:03d}"


def _vtt_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_vtt(cues: Sequence[Cue]) -> str:
    """The cues as WebVTT text (``&``, ``<`` and ``>`` in a cue escaped, as WebVTT requires)."""
    try:
        import webvtt
    except ImportError as error:
        raise _missing("webvtt-py", error) from None
    vtt = webvtt.WebVTT()
    for cue in cues:
        vtt.captions.append(webvtt.Caption(_vtt_time(cue.start), _vtt_time(cue.end), _vtt_escape(cue.text)))
    return vtt.content


def check_writers(fmt: str) -> None:
    """Raise ImportError now, rather than after restoring, when the writer of ``fmt`` is missing."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown subtitle format {fmt!r}; known: {FORMATS}")
    try:
        if fmt == "srt":
            import srt  # noqa: F401
        else:
            import webvtt  # noqa: F401
    except ImportError as error:
        raise _missing("srt" if fmt == "srt" else "webvtt-py", error) from None


def write(cues: Sequence[Cue], fmt: str) -> str:
    """The cues as text in ``fmt`` (``"srt"`` or ``"vtt"``)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown subtitle format {fmt!r}; known: {FORMATS}")
    return to_srt(cues) if fmt == "srt" else to_vtt(cues)


# ---- all together ---------------------------------------------------------------------------


def restore_cues(
    restorer,
    words: Sequence[Mapping],
    keep_punctuation: bool = False,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    pause: float = DEFAULT_PAUSE,
    **pipeline_kwargs,
) -> tuple[list[dict], list[Cue]]:
    """Timed words (:func:`whisper_words`) → restored words (through ``restorer``, a punct-case
    pipeline) and their cues."""
    prepared = asr_words(words, keep_punctuation)
    if not prepared:
        return [], []
    result = restorer(prepared, is_split_into_words=True, keep_punctuation=keep_punctuation, **pipeline_kwargs)
    return result["words"], build_cues(result["words"], max_chars, max_seconds, pause)


def subtitles(restorer, data, fmt: str = "srt", keep_punctuation: bool = False, **kwargs) -> str:
    """Whisper JSON (parsed) or a list of timed words → restored subtitles in ``fmt`` (``"srt"``, ``"vtt"``).
    Other keyword arguments go to :func:`restore_cues`."""
    check_writers(fmt)
    _, cues = restore_cues(restorer, whisper_words(data), keep_punctuation, **kwargs)
    return write(cues, fmt)


__all__ = [
    "Cue",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_PAUSE",
    "FORMATS",
    "asr_words",
    "build_cues",
    "check_writers",
    "parse_json",
    "restore_cues",
    "subtitles",
    "to_srt",
    "to_vtt",
    "whisper_words",
    "write",
]
