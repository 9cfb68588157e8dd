"""The restoration engine: text → windows → a model run → decoded words, for any runtime.

:class:`RestorationEngine` holds what restoring with one model needs besides running it (the tokenizer,
the label scheme and MIXED-case lexicon, the model's tasks and heads, the longest input) and the one
call that runs it (``run_batch``). The pipeline, the torch-free
:class:`~hf_punctcase.runtime.OnDeviceRestorer` and :class:`~hf_punctcase.StreamingRestorer` each drive
one: the pipeline's preprocess, forward and postprocess call :meth:`~RestorationEngine.windows`,
``run_batch`` and :meth:`~RestorationEngine.result`; the runtime calls :meth:`~RestorationEngine.restore`;
a stream runs windows as words arrive through :meth:`~RestorationEngine.run_windows` and decodes with
the engine's scheme, lexicon and heads. Only NumPy and a tokenizer are needed here.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..inputs import InputWords
from ..labels import LabelScheme
from ..tasks import Task, tasks_to_run, tasks_together, window_tasks, words_read
from .decoding import restore_from_windows
from .options import RestoreOptions
from .windows import EncodedWindow, Window, WindowRows, batch_rows, encode_windows, padded_windows, plan_windows
from .words import encoder_words

#: ``run_batch(input_ids, attention_mask, tasks)``: a runtime's call over a batch of windows, padded on
#: the right (int64 NumPy arrays), giving each task's probabilities ``(batch, seq_len, classes)``.
RunBatch = Callable[[np.ndarray, np.ndarray, tuple[str, ...]], Mapping[str, np.ndarray]]


def weakly_bound(method: Callable) -> Callable:
    """A bound method called through a weak reference to its object: what a restorer gives its own
    engine as ``run_batch``, so that the restorer and its engine form no reference cycle. With one, a
    dropped restorer (its ONNX Runtime session, its compiled graph) waits for the cyclic garbage
    collector, which may first run in a process forked in the meantime (``datasets.map`` with
    ``num_proc``), where a runtime's destructor waits forever on its threads' locks."""
    reference = weakref.WeakMethod(method)

    def call(*args: Any, **kwargs: Any) -> Any:
        bound = reference()
        if bound is None:
            raise ReferenceError("the restorer that this restoration engine runs through has been freed")
        return bound(*args, **kwargs)

    return call


class RestorationEngine:
    """Restoration with one model, whatever runs it.

    Args:
        tokenizer: the model's tokenizer (transformers' fast tokenizer, or the runtime's own).
        scheme: the model's punctuation and casing labels.
        lexicon: its MIXED-case lexicon (lowercased word → written form).
        lowercase_input: whether words are lowercased for the model.
        max_length: the longest window in subwords.
        model_tasks: the model's tasks (:func:`~hf_punctcase.tasks.tasks_of`).
        heads: its head tasks and their labels (:func:`~hf_punctcase.tasks.head_labels`).
        head_thresholds: the decision thresholds its config sets (:func:`~hf_punctcase.tasks.head_thresholds`).
        run_batch: the runtime's call (:data:`RunBatch`); a restorer's own method goes in through
            :func:`weakly_bound`.
    """

    def __init__(
        self,
        *,
        tokenizer: Any,
        scheme: LabelScheme,
        lexicon: Mapping[str, str],
        lowercase_input: bool,
        max_length: int,
        model_tasks: Sequence[Task],
        heads: Mapping[Task, Sequence[str]],
        head_thresholds: Mapping[Task, float],
        run_batch: RunBatch,
    ):
        self.tokenizer = tokenizer
        self.scheme = scheme
        self.lexicon = dict(lexicon)
        self.lowercase_input = lowercase_input
        self.max_length = max_length
        self.model_tasks = tuple(model_tasks)
        self.heads = dict(heads)
        self.head_thresholds = dict(head_thresholds)
        self.run_batch = run_batch

    @property
    def pad_id(self) -> int:
        return self.tokenizer.pad_token_id or 0

    def plan(self, source: InputWords, options: RestoreOptions) -> list[Window]:
        """An input's windows, planned (:func:`~hf_punctcase.restoration.plan_windows`)."""
        return list(plan_windows(len(source), options.window_words, options.context_words, options.vote_windows))

    def windows(
        self,
        source: InputWords,
        options: RestoreOptions,
        planned: Sequence[Window] | None = None,
        each_planned: Callable[[], None] | None = None,
    ) -> Iterator[tuple[EncodedWindow, tuple[str, ...]]]:
        """An input's windows as the model sees them (``planned``, by default :meth:`plan`'s, each
        tokenised, in pieces where it has more subwords than the model takes; one empty window for an
        input without words), each with the tasks it runs: the call's
        (:func:`~hf_punctcase.tasks.tasks_to_run`), less a head that the call runs for its option alone
        where the window's core holds no word the option reads (:func:`~hf_punctcase.tasks.window_tasks`).
        Tokenised one planned window at a time, as they are asked for; ``each_planned`` is called once
        each planned window's pieces are out (a progress bar)."""
        words = encoder_words(source, self.lowercase_input, self.tokenizer.unk_token)
        tasks = tasks_to_run(self.model_tasks, options)
        read = words_read(self.model_tasks, options, source.words)
        planned = self.plan(source, options) if planned is None else planned
        for window in planned or [None]:
            for encoded in encode_windows(self.tokenizer, words, [] if window is None else [window], self.max_length):
                yield encoded, window_tasks(tasks, read, encoded.core_start, len(encoded.core_positions))
            if each_planned is not None and window is not None:
                each_planned()

    def run_windows(self, windows: Sequence[EncodedWindow], tasks: tuple[str, ...]) -> list[WindowRows]:
        """Run the model on windows in one call, padded on the right (pad id, mask 0): each window's
        rows of its core words."""
        ids, mask = padded_windows(windows, self.pad_id)
        return batch_rows(self.run_batch(ids, mask, tasks), windows)

    def result(self, source: InputWords, rows: Sequence[WindowRows], options: RestoreOptions) -> dict:
        """One input's result from its windows' rows, in order
        (:func:`~hf_punctcase.restoration.restore_from_windows`)."""
        return restore_from_windows(source, rows, self.scheme, self.lexicon, options, self.heads, self.head_thresholds)

    def restore(self, sources: Iterable[InputWords], options: RestoreOptions, batch_size: int) -> Iterator[dict]:
        """Results in input order; each input is decoded as soon as its last window has run, and the
        windows of consecutive inputs share calls of ``batch_size`` windows, which run the tasks that
        any of their windows runs (:func:`~hf_punctcase.tasks.tasks_together`)."""
        sources = list(sources)
        done: list[list[WindowRows]] = [[] for _ in sources]
        expected = [0] * len(sources)
        batch: list[tuple[int, EncodedWindow, tuple[str, ...]]] = []
        next_result = 0

        def run() -> None:
            tasks = tasks_together(tasks_of_window for _, _, tasks_of_window in batch)
            for (index, _, _), rows in zip(batch, self.run_windows([window for _, window, _ in batch], tasks)):
                done[index].append(rows)
            batch.clear()

        def ready(planned: int) -> Iterator[dict]:
            # Inputs before `planned` have all their windows planned; each is done once they have run.
            nonlocal next_result
            while next_result < planned and len(done[next_result]) == expected[next_result]:
                yield self.result(sources[next_result], done[next_result], options)
                done[next_result] = []
                next_result += 1

        for index, source in enumerate(sources):
            for window, tasks in self.windows(source, options):
                expected[index] += 1
                batch.append((index, window, tasks))
                if len(batch) == batch_size:
                    run()
                    yield from ready(index)
            yield from ready(index + 1)
        if batch:
            run()
        yield from ready(len(sources))


__all__ = ["RestorationEngine", "RunBatch", "weakly_bound"]
