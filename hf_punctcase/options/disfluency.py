"""Disfluency removal (``remove_disfluencies=True``): the words a first restoration marks disfluent are
left out, and the words kept are restored again as a transcript of their own. This module declares
the disfluency task (:data:`DISFLUENCY`) with this as its option; the pipeline and the torch-free
runtime run it through :func:`hf_punctcase.tasks.option_runner`, which checks that the model has the head."""

from __future__ import annotations

from collections.abc import Sequence

from ..inputs import parse_inputs, written_word
from ..labels import COMMAND_LABELS, DISFLUENCY_LABELS, LEADING_PUNCTUATION, SENTENCE_END_LABELS, case_label_of, split_trailing_marks
from ..restoration.layout import laid_out_sentences, paragraph_spans, place_words, separators_in
from ..restoration.windows import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS
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
    its first restoration serves as the second, so it takes one restoration. An input that keeps more
    words than a window holds has only the sentences that lost a word restored again, with the kept
    words around them as context (:func:`spliced_fluent`); the others are restored again whole."""
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
    again = [i for i, (kept, _) in enumerate(plans) if len(kept) != len(tokens[i])]
    second = {k: v for k, v in options.items() if k != "return_probabilities"}
    window = DEFAULT_WINDOW_WORDS if options.get("window_words") is None else options["window_words"]
    context = DEFAULT_CONTEXT_WORDS if options.get("context_words") is None else options["context_words"]
    # Long inputs whose lost stretches, with their context, hold at most half the kept words. Written
    # stretches that keep_punctuation keeps are told from bare ones over the whole text: a text with a
    # written mark is restored again whole; one without any is bare throughout, as each piece of it is.
    keeps = bool(options.get("keep_punctuation"))
    spliced = {
        i: pieces for i in again
        if len(plans[i][0]) > window and not (keeps and any(split_trailing_marks(written_word(token))[1] for token in tokens[i]))
        and (pieces := splice_pieces(first[i], plans[i][0], context)) is not None
    }
    pieces = [(i, stretch, words) for i, mine in spliced.items() for stretch, words in mine]
    wholes = [i for i in again if i not in spliced]
    inputs_again = [[tokens[i][j] for j in words] for i, _, words in pieces] + [plans[i][1] for i in wholes]
    restored = restore(inputs_again, True, **second) if inputs_again else []
    fluent = list(first)
    for i, result in zip(wholes, restored[len(pieces):]):
        fluent[i] = result
    for i in spliced:
        mine = [(stretch, words, result) for (j, stretch, words), result in zip(pieces, restored) if j == i]
        fluent[i] = spliced_fluent(first[i], plans[i][0], mine)
        if fluent[i] is None:  # the second pass disagrees at a seam: the kept words restored whole
            fluent[i] = restore(plans[i][1], True, **second)
    merged = [merge_fluent(a, b, kept, words) for a, b, (kept, _), words in zip(first, fluent, plans, tokens)]
    return merged[0] if single else merged


def lost_stretches(first: dict, kept: Sequence[int]) -> list[tuple[int, int]] | None:
    """The stretches of a first restoration that lost words: ``(start, end)`` input word ranges, each
    whole sentences of it in a row that hold a word not ``kept`` (a sentence runs to its end's mark
    and the command words after it), the sentences between them none. None where no sentence ends
    (the text is one sentence: nothing to splice)."""
    words = first["words"]
    placed = [i for i, entry in enumerate(words) if not entry.get("removed")]
    ends = [i for i in placed if words[i]["punctuation"] in SENTENCE_END_LABELS]
    # A sentence ends before the next placed word, so that the commands carried out after its last
    # word go with it.
    following = {i: nxt for i, nxt in zip(placed, placed[1:])}
    cuts = sorted({following[i] for i in ends if i in following} | {len(words)})
    if len(cuts) < 2:
        return None
    lost = set(range(len(words))) - set(kept)
    stretches: list[tuple[int, int]] = []
    start = 0
    for end in cuts:
        if any(start <= i < end for i in lost):
            if stretches and stretches[-1][1] == start:
                stretches[-1] = (stretches[-1][0], end)
            else:
                stretches.append((start, end))
        start = end
    return stretches


#: The most of an input's kept words that its lost stretches and their context may hold for them to be
#: restored again alone: above it, restoring the kept words whole costs less.
SPLICE_SHARE = 0.5


def splice_pieces(first: dict, kept: Sequence[int], context: int) -> list[tuple[tuple[int, int], list[int]]] | None:
    """The lost stretches of a first restoration (:func:`lost_stretches`), each with the input words to
    restore again for it (:func:`piece_words`); None where there are none to splice or they would hold
    more than :data:`SPLICE_SHARE` of the kept words."""
    stretches = lost_stretches(first, kept)
    if stretches is None:
        return None
    pieces = [(stretch, piece_words(stretch, kept, context)) for stretch in stretches]
    return pieces if sum(len(words) for _, words in pieces) <= SPLICE_SHARE * len(kept) else None


def piece_words(stretch: tuple[int, int], kept: Sequence[int], context: int) -> list[int]:
    """The input words restored again for a stretch that lost words: its kept words, with up to
    ``context`` kept words on each side of it."""
    start, end = stretch
    before = [i for i in kept if i < start][-context:] if context else []
    after = [i for i in kept if i >= end][:context]
    return before + [i for i in kept if start <= i < end] + after


def spliced_fluent(first: dict, kept: Sequence[int], pieces: Sequence[tuple[tuple[int, int], list[int], dict]]) -> dict | None:
    """The restoration of the kept words (``kept``, input indices) from a first restoration and each
    lost stretch's own (``pieces``: the stretch, the input indices of the words restored for it, its
    restoration), laid out with what followed each word where it comes from.

    A piece gives the words from a seam before its stretch to a seam after it; the first restoration
    every other word. A seam is a word both end a sentence after, the nearest to the stretch on each side
    among the piece's context words (none at the text's start or end), so that the two agree on the
    capital after it; where a piece's context holds none, or two pieces would give one word, None."""
    position = {index: rank for rank, index in enumerate(kept)}
    words_first = first["words"]
    first_placed = [i for i, entry in enumerate(words_first) if not entry.get("removed")]
    first_after = separators_in(first["text"], words_first, first_placed)
    entries = [dict(words_first[i]) for i in kept]
    after = {position[i]: first_after[i] for i in kept if i in first_after}
    taken_to = -1  # the last input word a piece gave
    for (start, end), words, result in pieces:
        inside = [rank for rank, i in enumerate(words) if start <= i < end]
        if not inside:
            continue
        piece = result["words"]
        placed = [rank for rank, entry in enumerate(piece) if not entry.get("removed")]
        piece_after = separators_in(result["text"], piece, placed)
        seams = [
            rank for rank in placed[:-1]
            if piece[rank]["punctuation"] in SENTENCE_END_LABELS and words_first[words[rank]]["punctuation"] in SENTENCE_END_LABELS
            and not words_first[words[rank]].get("removed")
        ]
        left = [rank for rank in seams if rank < inside[0]]
        stretch_end = max((rank for rank in placed if rank <= inside[-1]), default=inside[-1])
        right = [rank for rank in seams if rank >= stretch_end]
        has_before, has_after = inside[0] > 0, any(rank > inside[-1] for rank in placed)
        if (has_before and not left) or (has_after and not right):
            return None
        # From the word after the left seam to the right seam and the commands carried out after it.
        first_rank = left[-1] + 1 if has_before else 0
        last_rank = (next(rank for rank in placed if rank > right[0]) - 1) if has_after else len(words) - 1
        if words[first_rank] <= taken_to:
            return None
        taken_to = words[last_rank]
        for rank in range(first_rank, last_rank + 1):
            entries[position[words[rank]]] = dict(piece[rank])
            after.pop(position[words[rank]], None)
            if rank in piece_after:
                after[position[words[rank]]] = piece_after[rank]
    text, _ = place_words(entries, lambda rank, _: after[rank])
    fluent = {"text": text, "words": entries}
    if "sentences" in first:
        fluent["sentences"] = laid_out_sentences(entries, text)
    if "paragraphs" in first:
        fluent["paragraphs"] = paragraph_spans(fluent)
    return fluent


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
    "DISFLUENCY", "FILLERS", "FILLER_THRESHOLD", "fluent_inputs", "is_filler", "lost_stretches", "merge_fluent", "piece_words",
    "removes_filler", "restore_without_disfluencies", "spliced_fluent",
]
