"""Paragraphs (``paragraphs=True``): the restored text cut into paragraphs where the model's paragraph
head ends one, written with a blank line between them, and listed with their words and times. This
module declares the paragraph task (:data:`PARAGRAPH`) with this as its option; the pipeline and the
torch-free runtime run it through :func:`hf_punctcase.tasks.option_runner`, which checks that the
model has the head. The paragraphs of a restoration that is not laid out again
(``return_paragraphs=True``) are listed by the core (:func:`hf_punctcase.restoration.layout.paragraph_spans`).

A paragraph ends only where a sentence does: a word the head marks ``paragraph_end`` whose punctuation
ends no sentence starts no paragraph. The words, their labels and the sentences are those of one
restoration; only the separators and the character offsets change.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..labels import PARAGRAPH_LABELS
from ..restoration.layout import (
    PARAGRAPH_BREAK,
    dictated_separator,
    ends_paragraph,
    paragraph_ends,
    paragraph_spans,
    place_words,
    separators_in,
    text_span,
)
from ..tasks import Task, TaskOption, finish_each, register_task

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
    laid_out = separators_in(restored["text"], words, kept)
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
            entries, lambda _, entry: PARAGRAPH_BREAK if ends_paragraph(entry) else dictated_separator(entry), self._chars
        )
        return entries


def restore_in_paragraphs(restore, inputs, is_split_into_words: bool, **options):
    """``paragraphs=True`` for a restorer (the pipeline, the torch-free runtime): one restoration, then
    :func:`cut_into_paragraphs`. ``restore(inputs, is_split_into_words, **options)`` is the restorer's own call."""
    return finish_each(restore, inputs, is_split_into_words, lambda result, _: cut_into_paragraphs(result), **options)


PARAGRAPH = register_task(
    Task(
        "paragraph", PARAGRAPH_LABELS, config_field="paragraph_labels", word_column="paragraph",
        output_field="paragraph_end", score_field="paragraph_end_score", loss_weight_field="paragraph_loss_weight",
        positive_label="END", threshold_field="paragraph_threshold", title="paragraph", description="where a paragraph ends",
        option=TaskOption(
            "paragraphs",
            help="write a blank line between paragraphs where the model ends one (models with a paragraph head; "
            "with --json the result lists the paragraphs with their first and last word and times)",
            label="paragraphs",
            run=restore_in_paragraphs,
            rank=1,
        ),
    )
)

__all__ = [
    "PARAGRAPH", "PARAGRAPH_BREAK", "ParagraphStream", "cut_into_paragraphs", "paragraph_ends", "paragraph_spans",
    "restore_in_paragraphs",
]
