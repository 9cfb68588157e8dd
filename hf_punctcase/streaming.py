"""Streaming restoration: words in as an ASR system gives them, restored words out as soon as they are final.

    restorer = StreamingRestorer("default")
    for chunk in asr_words():                # lists of words: str, or dicts with "word" (and "start", "end", ...)
        for entry in restorer.push(chunk):   # the words that became final with this chunk
            show(entry["word"])
    for entry in restorer.flush():           # the rest, at the end of the stream
        show(entry["word"])

The stream is cut into the same windows as the ``"punct-case"`` pipeline
(:func:`~hf_punctcase.restoration.plan_windows`): cores of ``window_words − 2 × context_words`` words
tiling the stream, each seen with ``context_words`` words of context on each side. A window is run
as soon as its last word of right context has arrived, through the pipeline's backend and the
functions of :mod:`hf_punctcase.restoration`, and its words are decoded with
:func:`~hf_punctcase.restoration.decode`. Called with the same sizes, the concatenated stream is the
pipeline's output for the whole text, word for word, label for label and score for score (the
pipeline with ``batch_size=1``: it otherwise pads up to 16 windows into one batch, which moves
scores by rounding, up to 1e-2 in bf16).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from itertools import dropwhile
from typing import TYPE_CHECKING, Any

import numpy as np

from .inputs import InputWords, Timeline, parse_word, split_words, written_word
from .restoration import (
    OPTION_NAMES,
    RESTORED_TASKS,
    RestoreOptions,
    Window,
    WrittenStretches,
    add_char_offsets,
    decode,
    encode_windows,
    encoder_words,
    plan_windows,
)
from .options.dictation import COMMAND, CommandStream
from .options.paragraphs import PARAGRAPH, ParagraphStream
from .tasks import CASING, TASKS, option_runner, tasks_to_run

if TYPE_CHECKING:
    from .pipelines import PunctCasePipeline
    from .runtime import OnDeviceRestorer

#: Default sizes for live captions: cores of 20 words with 10 words of context on each side. On TED
#: dev this costs 0.1 point of punctuation F1 and 0.2 of casing F1 against the pipeline's 200/50
#: (docs/streaming.md); a word waits for at most 30 words.
STREAM_WINDOW_WORDS = 40
STREAM_CONTEXT_WORDS = 10

#: The field of an emitted entry that holds the input word as pushed, when the input was a dict
#: (``"word"`` holds the restored word).
INPUT_WORD = "input_word"


class StreamingRestorer:
    """Restore punctuation and casing in a stream of words, emitting each word once, when it is final.

    Args:
        pipe_or_checkpoint: a :class:`~hf_punctcase.PunctCasePipeline`, the torch-free
            :class:`~hf_punctcase.runtime.OnDeviceRestorer` (the stream then imports neither torch nor
            transformers), or what :func:`~hf_punctcase.load_pipeline` loads a pipeline from (a
            checkpoint folder, a Hub repo id, ``"default"`` or None for the embedded default;
            ``load_kwargs`` go to it, e.g. ``device``, ``dtype``). The stream drives their
            :class:`~hf_punctcase.restoration.RestorationEngine` (``engine``).
        window_words (`int`, defaults to 40): words per window, as in the pipeline.
        context_words (`int`, defaults to 10): words of context on each side of a window's core; the
            core is ``window_words − 2 × context_words`` words (20 by default).
        right_context_words (`int`, *optional*): words of right context a window waits for, at most
            ``context_words`` (the default): fewer cuts the delay at some accuracy cost, and the output
            is then no longer the pipeline's.
        keep_punctuation, consistent_casing, tasks: as in the pipeline.
        ends_sentence (`bool`, defaults to `True`): the stream's end ends a sentence, as the
            pipeline's ``ends_sentence``: the last word :meth:`flush` returns gets a sentence end
            where the model gives it none. `False` where a stream may stop mid-sentence.
        spoken_punctuation (`bool`, defaults to `False`): carry out dictated punctuation, as the
            pipeline's ``spoken_punctuation`` (models with a spoken-command head;
            :class:`~hf_punctcase.options.dictation.CommandStream`): each word then waits for the next word that
            is no command, since a command after it sets its mark, and entries are those the pipeline
            gives with the option (``removed``, ``dictated``; offsets in the text with its breaks).
        paragraphs (`bool`, defaults to `False`): the entries' offsets are those of the text with a
            blank line after each word that ends a paragraph, as the pipeline's ``paragraphs=True``
            writes it (models with a paragraph head; :class:`~hf_punctcase.options.paragraphs.ParagraphStream`;
            every entry of such a model carries ``paragraph_end`` in any case).

    :meth:`push` takes a list of words and returns the entries of the words that became final;
    :meth:`flush` ends the stream and returns the rest (the restorer is then ready for a new stream).
    Each word is emitted exactly once, in order, and never changes. A word is a ``str`` of one token
    (no whitespace), or a dict with at least ``"word"`` (whitespace around it is dropped, as for the
    pipeline's timed words) and any other fields (``"start"``, ``"end"``, ...). Times are checked as
    the pipeline checks them (:class:`~hf_punctcase.inputs.Timeline`), across pushes: a word that
    starts before the timed word before it in the stream is refused, and a push with a fault takes
    none of its words.

    An entry is the pipeline's word entry: ``"word"`` (the restored word), ``"punctuation"``,
    ``"casing"``, ``"punct_score"``, ``"case_score"``, and ``"start_char"`` / ``"end_char"``, where the
    word lies in the restored text of the whole stream (every emitted word joined by one space). For a
    dict input the input's fields follow in their order, its ``"word"`` as ``"input_word"`` (the word
    as pushed); a field named as one of the entry's own is left out, as in the pipeline.

    Delay: a word is final when the window that answers for it has all its right context and, with
    ``consistent_casing`` (the mark after a word is decided together with the casing of the next),
    when the next word's window has too. A word is therefore emitted by the push that brings the
    ``core + right_context_words``-th word after it, at the latest (:attr:`max_delay_words`): 30
    words with the defaults (20.5 on average; 12 s at 150 words a minute), one fewer without
    ``consistent_casing``. With ``ends_sentence`` the last word received is never final before the
    next arrives (the stream may end after it, and then it ends a sentence). The words still held are
    returned by :meth:`flush`.

    Cost: a push runs the model once per window it completes (one window of ``window_words`` words
    every ``core`` words; more only when a push brings more than a core), decodes the words that
    became final and keeps only the words later windows and decisions need, so its time is bounded
    by the window, not by the length of the stream.
    """

    def __init__(
        self,
        pipe_or_checkpoint: PunctCasePipeline | OnDeviceRestorer | str | os.PathLike | None = "default",
        window_words: int = STREAM_WINDOW_WORDS,
        context_words: int = STREAM_CONTEXT_WORDS,
        right_context_words: int | None = None,
        keep_punctuation: bool = False,
        consistent_casing: bool = True,
        tasks: Sequence[str] = RESTORED_TASKS,
        ends_sentence: bool = True,
        spoken_punctuation: bool = False,
        paragraphs: bool = False,
        **load_kwargs: Any,
    ):
        #: How the stream is restored (:class:`~hf_punctcase.restoration.RestoreOptions`).
        self.options = RestoreOptions(
            window_words=window_words, context_words=context_words, keep_punctuation=keep_punctuation,
            consistent_casing=consistent_casing, ends_sentence=ends_sentence, tasks=tasks,
            return_commands=spoken_punctuation,
        )
        # A restore option the stream does not take would become the loaded pipeline's default and be
        # silently left unused here: the stream's windows do not vote, and it returns entries, not results.
        ignored = sorted(set(load_kwargs) & set(OPTION_NAMES))
        if ignored:
            raise TypeError(f"StreamingRestorer does not take the restore options {ignored}")
        # Nor the task options it has no stream for: disfluency removal restores the kept words again.
        unstreamed = sorted(set(load_kwargs) & {task.option.name for task in TASKS.values() if task.option is not None})
        if unstreamed:
            raise TypeError(
                f"StreamingRestorer does not take {unstreamed}: a stream takes spoken_punctuation and paragraphs; "
                "restore whole transcripts with the pipeline for the others"
            )
        if right_context_words is None:
            right_context_words = context_words
        if isinstance(right_context_words, bool) or not isinstance(right_context_words, int):
            raise TypeError(f"right_context_words must be an int, got {type(right_context_words).__name__}")
        if not 0 <= right_context_words <= context_words:
            raise ValueError(
                f"right_context_words ({right_context_words}) must be ≥ 0 and must not exceed "
                f"context_words ({context_words})"
            )
        # A pipeline or an OnDeviceRestorer (or the pipeline class a checkpoint carries, whose engine is
        # its own copy of the class): anything with an engine.
        if callable(getattr(getattr(pipe_or_checkpoint, "engine", None), "run_windows", None)):
            if load_kwargs:
                raise TypeError(f"arguments for loading a pipeline given with a pipeline: {sorted(load_kwargs)}")
            self.pipe = pipe_or_checkpoint
        elif pipe_or_checkpoint is None or isinstance(pipe_or_checkpoint, (str, os.PathLike)):
            from .registry import load_pipeline

            self.pipe = load_pipeline(pipe_or_checkpoint, **load_kwargs)
        else:
            raise TypeError(
                "StreamingRestorer takes a PunctCasePipeline, an OnDeviceRestorer or a checkpoint path (or 'default'), "
                f"got {type(pipe_or_checkpoint).__name__}"
            )
        #: The restoration engine the stream drives (the pipeline's or the runtime's): its windows run
        #: through it and its words are decoded with its scheme, lexicon and heads.
        self.engine = self.pipe.engine
        self.right_context_words = right_context_words
        self._commands = None
        if spoken_punctuation:
            option_runner({COMMAND.option.name: True}, self.engine.model_tasks)  # refuses a model without the head
            self._commands = CommandStream()
        self._paragraphs = None
        if paragraphs:
            option_runner({PARAGRAPH.option.name: True}, self.engine.model_tasks)  # refuses a model without the head
            self._paragraphs = ParagraphStream()
        # With consistent casing the mark after word i is decided with the casing of word i + 1.
        self._lookahead = 1 if self.options.consistent_casing and CASING.name in self.options.tasks else 0
        self._tasks = tasks_to_run(self.engine.model_tasks, self.options)
        self._reset()

    @property
    def core_words(self) -> int:
        """Words each window answers for."""
        return self.options.core_words

    @property
    def max_delay_words(self) -> int:
        """The most words after a word that the stream needs before the word is final (a push may
        bring more along with them)."""
        delay = self.core_words + self.right_context_words - 1 + self._lookahead
        return max(delay, 1) if self.options.ends_sentence else delay

    # ---- the stream ------------------------------------------------------------------------------
    def push(self, words: Iterable[str | Mapping[str, Any]]) -> list[dict]:
        """Add words to the stream; return the entries of the words that became final, in order."""
        items, checked_words = self._checked(words)  # dicts copied: a change to the caller's dict changes nothing here
        if items:
            source = split_words(checked_words)
            self._items += items
            self._words += source.words
            self._marks += source.marks
            self._encoded += encoder_words(source, self.engine.lowercase_input, self.engine.tokenizer.unk_token)
            self._received += len(items)
            if self.options.keep_punctuation:
                for word, mark in zip(source.words, source.marks):
                    self._written += self._stretches.push(word, mark)
        # Windows of the unbounded plan are the final plan's once their right context has arrived.
        while self._received >= self._cut(self._next).end:
            self._run(self._cut(self._next))
            self._next = next(self._plan)
        # Word i is final once word i + 1 has its probabilities (the boundary between them is decided
        # jointly); every word before the next window's core has them. With ends_sentence the last word
        # received also waits for the next: it ends a sentence if the stream ends after it.
        stop = self._next.core_start - self._lookahead
        if self.options.ends_sentence:
            stop = min(stop, self._received - 1)
        if self.options.keep_punctuation:
            # A word of a run whose end has not arrived may yet turn out written or bare.
            stop = min(stop, self._received - self._stretches.undecided)
        entries, written = self._emit(stop, last=False)
        self._forget()
        return self._laid_out(entries, written, last=False)

    def flush(self) -> list[dict]:
        """End the stream: run the remaining windows (cut by the end of the stream, as the pipeline's
        last windows are) and return the entries of every word not yet emitted. The restorer then
        starts a new stream (also when the model raises)."""
        try:
            if self._received:
                final_plan = plan_windows(self._received, self.options.window_words, self.options.context_words)
                for window in dropwhile(lambda w: w.core_start < self._next.core_start, final_plan):
                    self._run(self._cut(window))
            if self.options.keep_punctuation:
                self._written += self._stretches.finish()
            entries, written = self._emit(self._received, last=True)
            return self._laid_out(entries, written, last=True)
        finally:
            self._reset()

    # ---- internals -------------------------------------------------------------------------------
    def _reset(self) -> None:
        # Words [_base, _received) are held: the inputs, their words and marks, the encoder's words,
        # and the per-task probabilities of those whose window has run ([_base, _next.core_start)).
        self._base = 0
        # With keep_punctuation: which held words arrived written, for those decided so far.
        self._stretches = WrittenStretches()
        self._written: list[bool] = []
        self._received = 0
        self._emitted = 0
        self._chars = 0  # characters of the restored text emitted, with the space after them
        self._items: list = []
        self._words: list[str] = []
        self._marks: list[str] = []
        self._encoded: list[str] = []
        self._probs: dict[str, np.ndarray] = {}
        self._timeline = Timeline()  # the stream's times, checked in order across pushes
        # The plan of a stream of unbounded length: windows not cut by an end, in order.
        self._plan = plan_windows(sys.maxsize, self.options.window_words, self.options.context_words)
        self._next: Window = next(self._plan)
        if self._commands is not None:
            self._commands = CommandStream()
        if self._paragraphs is not None:
            self._paragraphs = ParagraphStream()

    def _laid_out(self, entries: list[dict], written: list[str], last: bool) -> list[dict]:
        """Final entries with the stream's task options carried out: dictated commands, then paragraphs."""
        if self._commands is not None:
            entries = self._commands.feed(entries, written, last=last)
        if self._paragraphs is not None:
            entries = self._paragraphs.feed(entries)
        return entries

    def _cut(self, window: Window) -> Window:
        """A window of the plan with at most ``right_context_words`` words of right context."""
        end = min(window.end, window.core_end + self.right_context_words)
        return Window(window.start, end, window.core_start, window.core_end)

    def _run(self, window: Window) -> None:
        """Run the model on one window and keep the probabilities of its core's words."""
        offset = window.start
        words = self._encoded[offset - self._base : window.end - self._base]
        local = Window(0, window.end - offset, window.core_start - offset, window.core_end - offset)
        # A window with more subwords than the model takes comes in pieces, as in the pipeline.
        pieces = list(encode_windows(self.engine.tokenizer, words, [local], self.engine.max_length))
        rows = [self.engine.run_windows([piece], self._tasks)[0].probs for piece in pieces]
        for task in rows[0]:
            held = [self._probs[task]] if task in self._probs else []
            self._probs[task] = np.concatenate(held + [piece[task] for piece in rows])

    def _emit(self, stop: int, last: bool) -> tuple[list[dict], list[str]]:
        """Decode words [_emitted, stop) with their neighbours (the words before and after them are
        decoded too, for the joint decision at each boundary, and left out) and return their entries
        and the words as given."""
        start = self._emitted
        if stop <= start:
            return [], []
        lo = max(start - 1, 0)
        hi = stop if last else stop + self._lookahead
        held = slice(lo - self._base, hi - self._base)
        result = decode(
            InputWords(self._words[held], self._marks[held]),
            {task: probs[held] for task, probs in self._probs.items()},
            self.engine.scheme,
            self.engine.lexicon,
            self.options.keep_punctuation,
            self.options.consistent_casing,
            self.options.tasks,
            heads=self.engine.heads,
            thresholds=self.engine.head_thresholds,
            # Only the stream's end is known to end a sentence; a push's last word has words to come.
            ends_sentence=last and self.options.ends_sentence,
            # Words past the decided ones are decided later; here they only neighbour the words emitted.
            written=(self._written[held] + [False] * (hi - lo))[: hi - lo] if self.options.keep_punctuation else None,
        )
        restored = add_char_offsets(result["words"][start - lo : stop - lo])
        for entry in restored:  # offsets in the text of the whole stream
            entry["start_char"] += self._chars
            entry["end_char"] += self._chars
        self._chars = restored[-1]["end_char"] + 1
        items = self._items[start - self._base : stop - self._base]
        self._emitted = stop
        written = [written_word(item) for item in items]
        return [_entry(item, labels) for item, labels in zip(items, restored)], written

    def _forget(self) -> None:
        """Drop what no later window or decision needs: words before the next window and before the
        last word emitted (the left neighbour of the next word to emit)."""
        keep_from = max(0, min(self._emitted - 1, self._next.start))
        drop = keep_from - self._base
        if drop <= 0:
            return
        del self._items[:drop], self._words[:drop], self._marks[:drop], self._encoded[:drop], self._written[:drop]
        self._probs = {task: probs[drop:] for task, probs in self._probs.items()}
        self._base = keep_from

    def _checked(self, words) -> tuple[list, list[str]]:
        """The pushed items as a list and their words (:func:`~hf_punctcase.inputs.parse_word`), every
        one checked before any is taken."""
        if isinstance(words, (str, bytes, Mapping)):
            raise TypeError(
                f"push takes a list of words, got one {type(words).__name__}; "
                "pass a list (text.split() for a string of words, [word] for one word)"
            )
        try:
            items = list(words)
        except TypeError:
            raise TypeError(f"push takes a list of words, got {type(words).__name__}") from None
        checked_words = []
        timeline = Timeline(self._timeline.last_start)  # taken only when every word passes
        for i, item in enumerate(items):
            if isinstance(item, Mapping):
                items[i] = dict(item)
            word, _ = parse_word(item, f"word {i} of this push (word {self._received + i} of the stream)", timeline)
            checked_words.append(word)
        self._timeline = timeline
        return items, checked_words


def _entry(item: str | Mapping[str, Any], restored: dict) -> dict:
    """The emitted entry: the pipeline's word entry; for a dict input, followed by the input's fields
    in their order, its ``"word"`` as ``"input_word"`` (a field named as a restored one is left out)."""
    if isinstance(item, str):
        return restored
    for key, value in item.items():
        if key == "word":
            restored[INPUT_WORD] = value
        elif key not in restored and key != INPUT_WORD:
            restored[key] = value
    return restored


__all__ = ["INPUT_WORD", "STREAM_CONTEXT_WORDS", "STREAM_WINDOW_WORDS", "StreamingRestorer"]
