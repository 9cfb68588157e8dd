"""Restored words laid out as text by the task options that change what separates them (dictated
breaks, paragraphs): their character offsets, and the spans sentences and paragraphs are given as."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .labels import TEXT_OF_COMMAND

#: Commands that write a break rather than a mark.
BREAK_COMMANDS = ("NEWLINE", "PARAGRAPH")


def dictated_separator(entry: dict) -> str:
    """What follows a kept word in the text: the break its last dictated break command writes (its
    ``dictated``, :func:`hf_punctcase.dictation.carry_out`), else a space."""
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


__all__ = ["BREAK_COMMANDS", "dictated_separator", "place_words", "text_span"]
