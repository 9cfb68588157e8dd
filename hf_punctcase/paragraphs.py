"""Paragraphs (``paragraphs=True``): the restored text cut into paragraphs where the model's paragraph
head ends one, written with a blank line between them, and listed with their words and times. The
paragraph task (:data:`hf_punctcase.tasks.PARAGRAPH`) names this as its option; the pipeline and the
torch-free runtime run it through :func:`hf_punctcase.tasks.option_runner`, which checks that the
model has the head.

A paragraph ends only where a sentence does: a word the head marks ``paragraph_end`` whose punctuation
ends no sentence starts no paragraph. The words, their labels and the sentences are those of one
restoration; only the separators and the character offsets change.
"""

from __future__ import annotations

from collections.abc import Sequence

from .inputs import parse_inputs
from .labels import SENTENCE_END_LABELS
from .layout import dictated_separator, place_words, text_span

#: What separates two paragraphs in the text.
PARAGRAPH_BREAK = "\n\n"


def paragraph_ends(words: Sequence[dict]) -> list[int]:
    """The indices of the words that end a paragraph: those the head marks ``paragraph_end`` that end a
    sentence, and the last word. Words ``removed`` from the text (by another task option) end none."""
    kept = [i for i, entry in enumerate(words) if not entry.get("removed")]
    return [i for i in kept[:-1] if _ends_paragraph(words[i])] + kept[-1:]


def _ends_paragraph(entry: dict) -> bool:
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
    laid_out = _separators(text, words, kept)
    ends = sorted(set(paragraph_ends(words)) | {i for i in kept[:-1] if PARAGRAPH_BREAK in laid_out[i]})
    following = {i: kept[rank + 1] for rank, i in enumerate(kept[:-1])}
    firsts = kept[:1] + [following[end] for end in ends[:-1]]
    return [text_span(words, first, end, text) for first, end in zip(firsts, ends)]


def cut_into_paragraphs(restored: dict) -> dict:
    """``restored`` (a restoration whose words carry ``paragraph_end``) with a blank line between its
    paragraphs, its words' ``start_char`` and ``end_char`` and its sentences' moved to match, and
    ``paragraphs`` (:func:`paragraph_spans`).

    The text's own layout stays: a break another option wrote (a dictated line break, or a dictated
    new paragraph, which ends a paragraph too) is kept, and a blank line replaces whatever followed a
    word where the head ends a paragraph."""
    words = [dict(entry) for entry in restored["words"]]
    if words and "paragraph_end" not in words[0]:
        raise RuntimeError("internal error: the restoration has no paragraph labels")
    kept = [i for i, entry in enumerate(words) if not entry.get("removed")]
    laid_out = _separators(restored["text"], words, kept)
    breaks = set(paragraph_ends(words)[:-1])
    text, _ = place_words(words, lambda i, _: PARAGRAPH_BREAK if i in breaks else laid_out[i])
    result = {**restored, "text": text, "words": words}
    result["paragraphs"] = paragraph_spans(result)
    if "sentences" in restored:
        result["sentences"] = [
            {**sentence, **text_span(words, sentence["first_word"], sentence["last_word"], text)}
            for sentence in restored["sentences"]
        ]
    return result


def _separators(text: str, words: Sequence[dict], kept: Sequence[int]) -> dict[int, str]:
    """What follows each word placed in ``text`` there: the text up to the next placed word (after the
    last, to the end)."""
    starts = [words[i]["start_char"] for i in kept[1:]] + [len(text)]
    return {i: text[words[i]["end_char"]:start] for i, start in zip(kept, starts)}


class ParagraphStream:
    """Paragraphs over a stream of final restored entries (``StreamingRestorer(..., paragraphs=True)``):
    each placed entry's ``start_char`` and ``end_char`` are set in the text of the whole stream, in which
    a blank line follows every word that ends a paragraph (``paragraph_end`` at a sentence end) and the
    break a dictated command wrote after a word stays; the stream's text is then the pipeline's with
    ``paragraphs=True``."""

    def __init__(self) -> None:
        self._chars = 0

    def feed(self, entries: Sequence[dict]) -> list[dict]:
        """Place the stream's next final entries (entries ``removed`` from the text are left as they are)."""
        entries = list(entries)
        _, self._chars = place_words(
            entries, lambda _, entry: PARAGRAPH_BREAK if _ends_paragraph(entry) else dictated_separator(entry), self._chars
        )
        return entries


def restore_in_paragraphs(restore, inputs, is_split_into_words: bool, **options):
    """``paragraphs=True`` for a restorer (the pipeline, the torch-free runtime): one restoration, then
    :func:`cut_into_paragraphs`. ``restore(inputs, is_split_into_words, **options)`` is the restorer's own call."""
    items, single = parse_inputs(inputs, is_split_into_words)
    if not items:
        return []
    first = restore(inputs, is_split_into_words, **options)
    results = [cut_into_paragraphs(result) for result in ([first] if single else first)]
    return results[0] if single else results


__all__ = ["PARAGRAPH_BREAK", "ParagraphStream", "cut_into_paragraphs", "paragraph_ends", "paragraph_spans", "restore_in_paragraphs"]
