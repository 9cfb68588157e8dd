"""Spoken punctuation (``spoken_punctuation=True``): the commands a dictating speaker says ("chest pain
period", "new paragraph") become the marks and breaks they dictate, where the model's command head
reads them as commands; the same words meant as words ("the sigmoid colon", "a period of two weeks")
stay. This module declares the spoken-command task (:data:`COMMAND`) with this as its option; the pipeline
and the torch-free runtime run it through :func:`hf_punctcase.tasks.option_runner`, which checks that the
model has the head.

One restoration labels every word; then each command's words leave the text and its mark attaches to
the word before it, replacing the mark the model put there (a dictated mark never doubles a predicted
one). NEWLINE writes a line break after that word, PARAGRAPH a blank line. The word after a dictated
sentence end or break starts with a capital. Where nothing was dictated the model's own punctuation
and casing stand.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..inputs import written_word
from ..labels import (
    COMMAND_LABELS,
    MARK_OF_LABEL,
    SENTENCE_END_LABELS,
    SPOKEN_COMMANDS,
    apply_case,
    case_label_of,
    restored_trail,
    split_trailing_marks,
)
from ..restoration.layout import BREAK_COMMANDS, dictated_separator, laid_out_sentences, paragraph_spans, place_words
from ..tasks import Task, TaskOption, finish_each, register_task
#: Every spoken phrase as its words, with its command, the longest first.
_PHRASES = sorted(
    ((phrase.split(), command) for command, phrases in SPOKEN_COMMANDS.items() for phrase in phrases),
    key=lambda item: -len(item[0]),
)


def phrase_words(words: Sequence[str]) -> list[bool]:
    """Which of ``words`` (lowercased, marks split off) spell a phrase of :data:`SPOKEN_COMMANDS`: the
    only words whose command labels :func:`command_spans` reads (the spoken-command task's
    :attr:`~hf_punctcase.tasks.Task.reads`)."""
    read = [False] * len(words)
    for i in range(len(words)):
        for pieces, _ in _PHRASES:
            if list(words[i : i + len(pieces)]) == pieces:
                read[i : i + len(pieces)] = [True] * len(pieces)
    return read


def command_spans(words: Sequence[str], labels: Sequence[str]) -> list[tuple[int, int, str]]:
    """The spoken commands among words with command labels: ``(start, end, command)`` for each phrase
    of :data:`SPOKEN_COMMANDS` whose words the head reads as a command (any label but WORD), in order,
    the longest phrase first. The context decides whether words are a command, the phrase which one:
    "semicolon" read as a command is a SEMICOLON whichever command label it got, so a rare command
    is carried out as reliably as the head tells commands from words. Words that spell no phrase (a
    lone "mark" labelled QUESTION) stay words. A phrase said twice in a row is a command said twice (no
    reading as words exists: "stable period period", "okay question mark question mark"), whatever the
    head reads of it: both are spans of that command, which :func:`carry_out` carries out once. The
    exception: where the head reads the first wholly as words and the second wholly as a command, the
    first stays a word ("not a period period")."""
    lowered = [word.lower() for word in words]
    spans = []
    i = 0
    while i < len(words):
        match = None
        for pieces, command in _PHRASES:
            end = i + len(pieces)
            if lowered[i:end] != pieces:
                continue
            # The same phrase said twice in a row has no reading as words ("stable period period", "new
            # paragraph new paragraph"): the command said twice, whatever the head reads, but where it
            # reads the first wholly as words and the second wholly as a command ("not a period period").
            word = COMMAND_LABELS[0]
            again = end + len(pieces)
            if lowered[end:again] == pieces and not (
                all(label == word for label in labels[i:end]) and all(label != word for label in labels[end:again])
            ):
                match = [(i, end, command), (end, again, command)]
                break
            if all(label != word for label in labels[i:end]):
                match = [(i, end, command)]
                break
        if match:
            spans += match
            i = match[-1][1]
        else:
            i += 1
    return spans


def carry_out(
    entries: Sequence[dict], written: Sequence[str], capitalise_first: bool = False, command_scores: bool = False
) -> tuple[list[dict], bool]:
    """Restored word entries (each with ``command``) with their commands carried out, and whether the
    word after them starts with a capital. ``written``: each word as it was given.
    ``capitalise_first``: the first word kept follows a dictated sentence end or break (a stream's
    earlier words). ``command_scores``: the words that are no command keep their ``command_score``
    (``return_commands=True``); otherwise only a command's words carry one. Entries are copied; their
    text offsets are left to the caller."""
    spans = command_spans(written, [entry["command"] for entry in entries])
    in_command = {i: label for start, end, label in spans for i in range(start, end)}
    null = COMMAND_LABELS[0]
    # Each command attaches to the last word before it that is no command's.
    attached: dict[int, list[str]] = {}
    for start, _, label in spans:
        previous = next((j for j in range(start - 1, -1, -1) if j not in in_command), None)
        if previous is not None:
            attached.setdefault(previous, []).append(label)
    words: list[dict] = []
    # A command with no word before it (the text's first words) is carried out as nothing, and the first
    # word kept starts the text, with a capital: the model cased it after the command's words.
    capitalise = capitalise_first or bool(spans and spans[0][0] == 0)
    for i, entry in enumerate(entries):
        if i in in_command:
            words.append({
                **entry, "word": written[i], "command": in_command[i], "punctuation": "O", "casing": case_label_of(written[i]), "punct_score": None,
                "case_score": None, "start_char": None, "end_char": None, "removed": True,
            })
            continue
        entry = {**entry, "command": null, "removed": False, "dictated": list(attached.get(i, []))}
        if not command_scores:
            entry.pop("command_score", None)
        # The word as restored: its core and what trails it, a mark the model put there or one kept as
        # written (keep_punctuation), closing quotes and brackets included.
        core, trail = split_trailing_marks(entry["word"])
        if capitalise and entry["casing"] == "LOWER":
            entry["casing"] = "UPPER_FIRST"
            core = apply_case(core, "UPPER_FIRST")
        marks = [label for label in entry["dictated"] if label not in BREAK_COMMANDS]
        if marks:
            # The dictated mark takes the place of the marks there: it never doubles one, predicted or
            # written ("Plan: colon rest" → "Plan: rest").
            entry["punctuation"] = marks[-1]
            entry["punct_score"] = None
            mark = MARK_OF_LABEL.get(marks[-1], "")
            trail = restored_trail(trail, "" if mark == "." and core.endswith(".") else mark)
        entry["word"] = core + trail
        capitalise = entry["punctuation"] in SENTENCE_END_LABELS or dictated_separator(entry) != " "
        words.append(entry)
    return words, capitalise


def apply_commands(restored: dict, tokens: Sequence, command_scores: bool = False) -> dict:
    """One result of ``spoken_punctuation``: ``restored`` (a restoration whose words carry ``command``)
    with its commands carried out (:func:`carry_out`). ``tokens``: the input's words as given (str or
    timed dicts). ``command_scores``: every word keeps its ``command_score`` (``return_commands=True``).

    Every input word keeps one entry, in order. A command word's entry is the word as given, punctuation
    "O", the casing it is written in, no scores and no place in the text (``start_char`` and
    ``end_char`` None), ``command`` the command carried out (its phrase's, :func:`command_spans`),
    ``removed`` True, and the other fields its restored entry had (``command_score``, the head's
    probability of the label it gave; a timed word's times). Every other entry is the restored one
    (without ``command_score`` unless ``command_scores``) with ``command`` WORD, ``removed`` False and
    ``dictated``: the commands that attached to it, in order ([] for none); a dictated mark is its
    ``punctuation`` (COLON, SEMICOLON and EXCLAMATION included). ``sentences`` are cut at sentence
    ends and breaks and refer to input word indices."""
    entries = restored["words"]
    if len(entries) != len(tokens):
        raise RuntimeError(f"internal error: {len(entries)} restored words for {len(tokens)} input words")
    if entries and "command" not in entries[0]:
        raise RuntimeError("internal error: the restoration has no command labels")
    written = [written_word(token) for token in tokens]
    words, _ = carry_out(entries, written, command_scores=command_scores)
    text, _ = place_words(words, lambda _, entry: dictated_separator(entry))
    # No space after the last word (a dictated break there stays).
    text = text.removesuffix(" ")
    result = {"text": text, "words": words}
    if "sentences" in restored:
        result["sentences"] = laid_out_sentences(words, text)
    if "paragraphs" in restored:  # return_paragraphs=True: a dictated new paragraph ends one too
        result["paragraphs"] = paragraph_spans(result)
    if "probabilities" in restored:
        result["probabilities"] = restored["probabilities"]
    return result


class CommandStream:
    """Spoken punctuation over a stream of final restored entries (``StreamingRestorer(...,
    spoken_punctuation=True)``): a word is held until the next word that is no command arrives, since a
    command after it changes its mark; the entries come out as :func:`apply_commands` gives them, their
    ``start_char`` and ``end_char`` in the text of the whole stream."""

    def __init__(self) -> None:
        self._held: list[tuple[dict, str]] = []
        self._capitalise = False
        self._chars = 0

    def feed(self, entries: Sequence[dict], written: Sequence[str], last: bool = False) -> list[dict]:
        """Take the stream's next final entries and their words as given; return the entries whose
        commands are settled (all of them when ``last``: the stream ended)."""
        released = []
        for entry, word in zip(entries, written):
            if entry.get("command", "WORD") == "WORD" and self._held:
                released += self._release()
            self._held.append((entry, word))
        if last:
            released += self._release()
            self._capitalise, self._chars = False, 0
        return released

    def _release(self) -> list[dict]:
        held, self._held = self._held, []
        words, self._capitalise = carry_out([entry for entry, _ in held], [word for _, word in held], self._capitalise)
        _, self._chars = place_words(words, lambda _, entry: dictated_separator(entry), self._chars)
        return words


def restore_with_spoken_punctuation(restore, inputs, is_split_into_words: bool, **options):
    """``spoken_punctuation=True`` for a restorer (the pipeline, the torch-free runtime): one
    restoration that runs the spoken-command head, then :func:`apply_commands`.
    ``restore(inputs, is_split_into_words, **options)`` is the restorer's own call.

    The head runs only on the windows that hold a word of a command phrase (:func:`phrase_words`; the
    restoration's ``option_heads``): the labels of no other word are read. With
    ``return_commands=True`` it runs on every window and every word keeps its ``command_score``."""
    scores = bool(options.get("return_commands"))
    if not scores:
        options = {**options, "option_heads": tuple(options.get("option_heads") or ()) + (COMMAND.name,)}
    return finish_each(
        restore, inputs, is_split_into_words, lambda result, words: apply_commands(result, words, command_scores=scores), **options
    )


COMMAND = register_task(
    Task(
        "command", COMMAND_LABELS, config_field="command_labels", word_column="command",
        output_field="command", score_field="command_score", loss_weight_field="command_loss_weight",
        threshold_field="command_threshold", asked_by="return_commands", title="spoken command", description="punctuation and breaks the speaker dictates",
        reads=phrase_words,
        option=TaskOption(
            "spoken_punctuation",
            help="carry out the punctuation the speaker dictates (\"period\", \"comma\", \"question mark\", \"colon\", "
            "\"new line\", \"new paragraph\", ...) where the model reads the words as a command, and punctuate "
            "the rest (models with a spoken-command head; with --json every input word keeps its entry, "
            "\"removed\" for a command's words)",
            label="spoken punctuation (\"period\", \"new paragraph\", ...)",
            run=restore_with_spoken_punctuation,
        ),
    )
)

__all__ = ["BREAK_COMMANDS", "COMMAND", "CommandStream", "apply_commands", "carry_out", "command_spans", "phrase_words", "restore_with_spoken_punctuation"]
