"""What every backend is (:class:`Backend`) and what the backends share, with NumPy only."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

#: A graph's inputs, in this order.
INPUT_NAMES = ("input_ids", "attention_mask")
#: Outputs that hold a task head's logits: ``<task>_logits``.
LOGITS_SUFFIX = "_logits"


@runtime_checkable
class Backend(Protocol):
    """Subword ids in, per-task probabilities out: what the restoration engine calls to run a model,
    whichever runtime runs it.

    ``backend(input_ids, attention_mask, tasks=None)`` takes integer arrays (NumPy arrays, lists or
    tensors) of shape ``(batch, sequence)``, padding marked by 0 in the mask and on the right, and
    returns ``{task: probabilities}``: NumPy float32 arrays of shape ``(batch, sequence, labels)``, one
    per task of ``tasks`` (None: every head's), in the model's order of heads. A backend may leave out
    the computation that only other tasks need.

    Every backend keeps three promises:

    - **Batch independence.** A sequence's probabilities do not depend on its batch mates or its
      padding: where a runtime's kernels round by the shape of a product (bf16, fp16) or quantise a
      whole batch with one scale (dynamic int8), each sequence runs alone on its own subwords
      (:func:`run_each_sequence_alone`).
    - **Threads.** One backend may be called from several threads at once, with the results of serial
      calls (an inference request a thread, or a runtime whose sessions are thread-safe).
    - **Heads checked on loading.** :meth:`check_heads` raises ValueError, naming the model, where the
      model lacks a head the config lists or gives it another number of classes.
    """

    def __call__(self, input_ids, attention_mask, tasks: Collection[str] | None = None) -> dict[str, np.ndarray]: ...

    def check_heads(self, label_sets: Mapping[str, Sequence[str]]) -> None: ...


def chosen_outputs(outputs: Sequence[str], tasks: Collection[str] | None) -> tuple[str, ...]:
    """The tasks among a model's ``outputs`` (its tasks, in its order) that a call asking for ``tasks``
    (None: all) runs. Raises ValueError for a task the model has no output for."""
    if tasks is None:
        return tuple(outputs)
    unknown = sorted(set(tasks) - set(outputs))
    if unknown:
        raise ValueError(f"the graph has no output for {', '.join(unknown)} (it has {', '.join(outputs)})")
    return tuple(task for task in outputs if task in tasks)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in float32."""
    logits = np.asarray(logits, dtype=np.float32)
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def run_each_sequence_alone(run_one, input_ids, attention_mask, map_rows=map) -> dict[str, np.ndarray]:
    """A batch's per-task probabilities, each sequence run alone on its own subwords: ``run_one(ids,
    mask)`` on one row cut to its length (padding is on the right), rows mapped with ``map_rows`` (a
    thread pool's ``map`` runs them side by side). Takes NumPy arrays or torch tensors; returns NumPy
    ``(batch, sequence, labels)`` arrays, positions past a sequence's end uniform (nothing reads them).

    For the runtimes whose result would depend on a sequence's batch mates: dynamically quantised
    graphs (one activation scale a batch) and bf16 kernels (which round a product by its shape)."""
    batch, length = input_ids.shape
    sizes = [max(int(size), 1) for size in attention_mask.sum(1).tolist()]
    rows = list(map_rows(lambda row: run_one(input_ids[row : row + 1, : sizes[row]], attention_mask[row : row + 1, : sizes[row]]), range(batch)))
    result: dict[str, np.ndarray] = {}
    for row, (size, probs) in enumerate(zip(sizes, rows)):
        for task, values in probs.items():
            if task not in result:
                result[task] = np.full((batch, length, values.shape[-1]), 1.0 / values.shape[-1], dtype=np.float32)
            result[task][row, :size] = values[0]
    return result


def check_declared_heads(model: str, declared: Mapping[str, int | None], label_sets: Mapping[str, Sequence[str]]) -> None:
    """Raise ValueError unless ``declared`` (task → classes its output gives, None where unknown) has
    each task of ``label_sets`` (task → the labels the config gives it) with that many classes; ``model``
    names the model in the message."""
    for task, labels in label_sets.items():
        if task not in declared:
            raise ValueError(f"{model} has no {task}{LOGITS_SUFFIX} output, but config.json gives the model a {task} head")
        if declared[task] is not None and declared[task] != len(labels):
            raise ValueError(f"{model} gives {declared[task]} {task} classes but config.json has {len(labels)} {task} labels")


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the platform reports it)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # macOS, Windows
        return max(os.cpu_count() or 1, 1)


__all__ = [
    "INPUT_NAMES", "LOGITS_SUFFIX", "Backend", "check_declared_heads", "chosen_outputs", "run_each_sequence_alone", "softmax",
    "usable_cpus",
]
