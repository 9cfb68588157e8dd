"""Disfluency removal (``remove_disfluencies=True``): the words a first restoration marks disfluent are
left out, and the words kept are restored again as a transcript of their own. This module declares
the disfluency task (:data:`DISFLUENCY`) with this as its option; the pipeline and the torch-free
runtime run it through :func:`hf_punctcase.tasks.option_runner`, which checks that the model has the head."""

from __future__ import annotations

from collections.abc import Sequence

from ..inputs import parse_inputs, written_word
from ..labels import COMMAND_LABELS, DISFLUENCY_LABELS, LEADING_PUNCTUATION, case_label_of, split_trailing_marks
from ..tasks import Task, TaskOption, register_task


def fluent_inputs(first: dict, tokens: Sequence) -> tuple[list[int], list]:
    """The words a fluent transcript keeps, from a first restoration with the disfluency head:
    the indices of the input words not marked ``disfluent``, and those input words (``tokens``: the
    input's words as given, str or timed dicts) in order.

    With spoken punctuation, the words of a command the first restoration carried out and the words a
    dictated mark or break attaches to are kept whatever the disfluency head says: a speaker dictates a
    mark after words they mean, and the head learnt disfluency from speech without dictated commands
    (it takes the word before "period" for an abandoned one). A filler (:data:`FILLERS`) is no word
    anyone means: it goes where the head's score for it exceeds :data:`FILLER_THRESHOLD` (beside a
    command too: the command's mark then attaches to the word before it in the second restoration),
    and an input of fillers only ("um", "uh uh") keeps no word."""
    entries = first["words"]
    if len(entries) != len(tokens):
        raise RuntimeError(f"internal error: {len(entries)} restored words for {len(tokens)} input words")
    if entries and "disfluent" not in entries[0]:
        raise RuntimeError("internal error: the restoration has no disfluency labels")
    written = [written_word(token) for token in tokens]
    if written and all(is_filler(word) for word in written):
        return [], []
    kept = []
    for i, entry in enumerate(entries):
        filler = is_filler(written[i])
        disfluent = entry["disfluent"] or removes_filler(written[i], entry["disfluency_score"])
        if not disfluent or (_dictated(entry) and not filler):
            kept.append(i)
    return kept, [tokens[i] for i in kept]


#: Filled pauses: words that say nothing but that the speaker is thinking, in their spoken spellings.
#: Not "er" (the ER, in medical talk), "mm" (millimetres) or "ah" (an interjection that says something).
FILLERS = frozenset({"um", "umm", "uh", "uhm", "uhh", "erm", "hmm", "hm"})

#: The disfluency score above which a filled pause (:data:`FILLERS`) is removed. A model's own threshold
#: (``disfluency_threshold``: 0.9 for the default) is set high to keep every word a reader needs; a
#: filled pause is none, and the head's even odds suffice for it (removal of um/uh, one input an
#: utterance: SwDA val 86.2% → 100%, ACI-BENCH valid 96.8% → 100%, core words kept as before;
#: docs/disfluency.md).
FILLER_THRESHOLD = 0.5


def is_filler(word: str) -> bool:
    """Whether a word as written is a filled pause (:data:`FILLERS`), whatever its case and marks."""
    return split_trailing_marks(word.lstrip(LEADING_PUNCTUATION))[0].lower() in FILLERS


def removes_filler(word: str, disfluency_score: float) -> bool:
    """Whether removal takes ``word`` as a filled pause, whatever the model's threshold for other words:
    a filler the disfluency head scores above :data:`FILLER_THRESHOLD`."""
    return disfluency_score > FILLER_THRESHOLD and is_filler(word)


def merge_fluent(first: dict, fluent: dict, kept: Sequence[int], tokens: Sequence) -> dict:
    """One result of ``remove_disfluencies``: the text of ``fluent`` (the kept words restored again on
    their own, so that punctuation and casing are those of the fluent sentence), and one word entry
    per input word, in order.

    A kept word's entry is its entry in ``fluent`` with ``disfluent`` False, its ``disfluency_score``
    and ``removed`` False (True where the second pass carried it out as a spoken command); a removed
    word's entry is the input word as given (``word``), punctuation "O", the casing class it is written
    in, ``punct_score`` and ``case_score`` None, no place in the text (``start_char`` and ``end_char``
    None), ``disfluent`` True, its score and ``removed`` True, plus the other fields of its first-pass
    entry (a timed input word's times, the other heads' labels), ``command`` WORD where it has one (a
    word left out carries out no command). Sentences and paragraphs refer to input word indices;
    probabilities, when asked for, are the first restoration's (one row per input word)."""
    position = {index: rank for rank, index in enumerate(kept)}
    words = []
    for i, entry in enumerate(first["words"]):
        if i in position:
            merged = dict(fluent["words"][position[i]])
            merged.update(disfluent=False, disfluency_score=entry["disfluency_score"], removed=merged.get("removed", False))
        else:
            written = written_word(tokens[i])
            merged = {
                "word": written,
                "punctuation": "O",
                "casing": case_label_of(written),
                "punct_score": None,
                "case_score": None,
                "start_char": None,
                "end_char": None,
                "disfluent": True,
                "disfluency_score": entry["disfluency_score"],
                "removed": True,
            }
            merged.update((key, value) for key, value in entry.items() if key not in merged and key not in _RESTORED_FIELDS)
            if "command" in merged:
                merged["command"] = COMMAND_LABELS[0]
        words.append(merged)
    result = {"text": fluent["text"], "words": words}
    for spans in ("sentences", "paragraphs"):
        if spans in fluent:
            result[spans] = [
                {**span, "first_word": kept[span["first_word"]], "last_word": kept[span["last_word"]]}
                for span in fluent[spans]
            ]
    if "probabilities" in first:
        result["probabilities"] = first["probabilities"]
    return result


def _dictated(entry: dict) -> bool:
    """Whether a first-pass entry is a carried-out command's word or a word a dictated mark attaches to."""
    return bool(entry.get("dictated")) or (entry.get("removed", False) and entry.get("command", COMMAND_LABELS[0]) != COMMAND_LABELS[0])


# Fields of a restored word entry that a removed word's entry does not take from its first-pass entry
# (``dictated``: the commands a kept word carries out).
_RESTORED_FIELDS = frozenset(
    {"word", "punctuation", "casing", "punct_score", "case_score", "start_char", "end_char", "disfluent", "disfluency_score",
     "dictated"}
)


def restore_without_disfluencies(restore, inputs, is_split_into_words: bool, **options):
    """``remove_disfluencies=True`` for a restorer (the pipeline, the torch-free runtime): one pass
    finds the disfluent words, a second restores punctuation and casing of the words kept, as a
    transcript of their own; :func:`merge_fluent` joins the two. ``restore(inputs, is_split_into_words,
    **options)`` is the restorer's own call. An input that loses no word is its own fluent transcript:
    its first restoration serves as the second, so it takes one restoration; the others take two."""
    # Checked here to tell one transcript from many; the restorer's own first pass parses them again.
    items, single = parse_inputs(inputs, is_split_into_words)
    if not items:
        return []
    batch = [inputs] if single else list(inputs)
    # With the call's own options, so that the first restoration of an input that loses no word is the
    # restoration of its kept words (the same words, the same options).
    first = restore(inputs, is_split_into_words, **options)
    first = [first] if single else first
    tokens = [item.split() if isinstance(item, str) else list(item) for item in batch]
    plans = [fluent_inputs(result, words) for result, words in zip(first, tokens)]
    fluent = list(first)
    again = [i for i, (kept, _) in enumerate(plans) if len(kept) != len(tokens[i])]
    if again:
        second = restore([plans[i][1] for i in again], True, **{k: v for k, v in options.items() if k != "return_probabilities"})
        for i, result in zip(again, second):
            fluent[i] = result
    merged = [merge_fluent(a, b, kept, words) for a, b, (kept, _), words in zip(first, fluent, plans, tokens)]
    return merged[0] if single else merged


DISFLUENCY = register_task(
    Task(
        "disfl", DISFLUENCY_LABELS, config_field="disfluency_labels", word_column="disfluency",
        output_field="disfluent", score_field="disfluency_score", loss_weight_field="disfluency_loss_weight",
        positive_label="DISFLUENT", threshold_field="disfluency_threshold", title="disfluency", description="fillers, edit terms and reparanda",
        option=TaskOption(
            "remove_disfluencies",
            help="leave out fillers, edit terms and the first copy of repeated or restarted words, and punctuate "
            "what is left (models with a disfluency head; with --json every input word keeps its entry, "
            "\"removed\" for those left out)",
            label="remove disfluencies (um, uh, repetitions, restarts)",
            run=restore_without_disfluencies,
            rank=2,
        ),
    )
)

__all__ = [
    "DISFLUENCY", "FILLERS", "FILLER_THRESHOLD", "fluent_inputs", "is_filler", "merge_fluent", "removes_filler", "restore_without_disfluencies",
]
