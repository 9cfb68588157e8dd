"""Restored words laid out as text: their character offsets, what separates them where a task option
changed it (a dictated break, a paragraph's end), and the spans sentences and paragraphs are given as.

The paragraphs of a restoration (``return_paragraphs=True``) are listed here, in the core, from the
``paragraph_end`` field its words carry; the options that lay a text out in paragraphs or carry out a
dictated break (:mod:`hf_punctcase.options`) use these functions and are not needed by them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..labels import SENTENCE_END_LABELS, TEXT_OF_COMMAND

#: Commands that write a break rather than a mark.
BREAK_COMMANDS = ("NEWLINE", "PARAGRAPH")

#: What separates two paragraphs in the text.
PARAGRAPH_BREAK = "\n\n"


def dictated_separator(entry: dict) -> str:
    """What follows a kept word in the text: the break its last dictated break command writes (its
    ``dictated``, :func:`hf_punctcase.options.dictation.carry_out`), else a space."""
    breaks = [label for label in entry.get("dictated", ()) if label in BREAK_COMMANDS]
    return TEXT_OF_COMMAND[breaks[-1]] if breaks else " "


def place_words(words: Sequence[dict], separator: Callable[[int, dict], str], start: int = 0) -> tuple[str, int]:
    """Lay restored word entries out as text where entry ``i`` is followed by ``separator(i, entry)``
    (a space, a line break, ...), from character ``start``, setting each entry's ``start_char`` and
    ``end_char`` in place; entries ``removed`` from the text (by a task option) are left out. Returns
    the text, every separator included, and the character after it (where a next word would start)."""
    parts, position = [], start
    for i, entry in enumerate(words):
        if entry.get("removed"):
            continue
        following = separator(i, entry)
        entry["start_char"], entry["end_char"] = position, position + len(entry["word"])
        parts.append(entry["word"] + following)
        position = entry["end_char"] + len(following)
    return "".join(parts), position


def text_span(words: Sequence[dict], first: int, last: int, text: str) -> dict:
    """Words ``first`` to ``last`` (inclusive, placed in ``text``) as a sentence or a paragraph is given:
    ``{"text", "first_word", "last_word", "start", "end", "start_char", "end_char"}``."""
    start_char, end_char = words[first]["start_char"], words[last]["end_char"]
    return {
        "text": text[start_char:end_char],
        "first_word": first,
        "last_word": last,
        "start": words[first].get("start"),
        "end": words[last].get("end"),
        "start_char": start_char,
        "end_char": end_char,
    }


def paragraph_ends(words: Sequence[dict]) -> list[int]:
    """The indices of the words that end a paragraph: those the head marks ``paragraph_end`` that end a
    sentence, and the last word. Words ``removed`` from the text (by another task option) end none."""
    kept = [i for i, entry in enumerate(words) if not entry.get("removed")]
    return [i for i in kept[:-1] if ends_paragraph(words[i])] + kept[-1:]


def ends_paragraph(entry: dict) -> bool:
    """Whether the head ends a paragraph after a word: it marks it ``paragraph_end`` and the word ends
    a sentence."""
    return bool(entry.get("paragraph_end")) and entry.get("punctuation") in SENTENCE_END_LABELS


def paragraph_spans(restored: dict) -> list[dict]:
    """The paragraphs of a restoration whose words carry ``paragraph_end``, in its text as it stands
    (``return_paragraphs=True``): ``{"text", "first_word", "last_word", "start", "end", "start_char",
    "end_char"}`` each, as sentences are given. A paragraph ends where the head ends one at a sentence
    end (:func:`paragraph_ends`), where the text already has a blank line after a word (a dictated new
    paragraph), and at the last word."""
    words, text = restored["words"], restored["text"]
    if words and "paragraph_end" not in words[0]:
        raise ValueError("return_paragraphs=True needs a model with a paragraph head (paragraph_labels)")
    kept = [i for i, entry in enumerate(words) if not entry.get("removed")]
    laid_out = separators_in(text, words, kept)
    ends = sorted(set(paragraph_ends(words)) | {i for i in kept[:-1] if PARAGRAPH_BREAK in laid_out[i]})
    following = {i: kept[rank + 1] for rank, i in enumerate(kept[:-1])}
    firsts = kept[:1] + [following[end] for end in ends[:-1]]
    return [text_span(words, first, end, text) for first, end in zip(firsts, ends)]


def laid_out_sentences(words: Sequence[dict], text: str) -> list[dict]:
    """The sentences of restored words placed in ``text`` (:func:`text_span` each, with input word
    indices): a placed word ends one where it ends a sentence or a line break follows it in the text (a
    dictated break, a paragraph's end), and the last placed word ends the last; removed words end none."""
    kept = [i for i, entry in enumerate(words) if not entry.get("removed")]
    following = separators_in(text, words, kept)
    spans, first = [], None
    for rank, i in enumerate(kept):
        first = i if first is None else first
        if words[i]["punctuation"] in SENTENCE_END_LABELS or "\n" in following[i] or rank == len(kept) - 1:
            spans.append(text_span(words, first, i, text))
            first = None
    return spans


def separators_in(text: str, words: Sequence[dict], kept: Sequence[int]) -> dict[int, str]:
    """What follows each word placed in ``text`` there (``kept``: the placed words' indices): the text
    up to the next placed word (after the last, to the end)."""
    starts = [words[i]["start_char"] for i in kept[1:]] + [len(text)]
    return {i: text[words[i]["end_char"]:start] for i, start in zip(kept, starts)}


__all__ = [
    "BREAK_COMMANDS", "PARAGRAPH_BREAK", "dictated_separator", "ends_paragraph", "laid_out_sentences", "paragraph_ends", "paragraph_spans",
    "place_words", "separators_in", "text_span",
]
