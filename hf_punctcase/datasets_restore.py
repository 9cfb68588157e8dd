"""Restore a column of transcripts in a 🤗 ``datasets.Dataset`` or ``IterableDataset`` (and in a Ray
Data dataset): the datasets' own engines (``Dataset.map``, its worker processes, streaming) do the
batching, the parallelism and the ordering; one pipeline per process restores."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Records per batch handed to the pipeline (and per ``Dataset.map`` batch) unless asked otherwise.
DEFAULT_BATCH_SIZE = 32

# One pipeline per (process, model, load options): a worker that ``Dataset.map`` forks loads its own
# the first time it restores (a parent's torch threads and ONNX Runtime InferenceSessions are not shared across a fork).
_PIPELINES: dict[tuple, Any] = {}
_IMPORT_PID = os.getpid()


def cached_pipeline(model: str | os.PathLike | None, load_options: Mapping[str, Any] | None = None):
    """``hf_punctcase.load_pipeline(model, **load_options)``, loaded once per process."""
    from .registry import load_pipeline

    options = dict(load_options or {})
    key = (os.getpid(), str(model if model is not None else "default"), tuple(sorted((k, repr(v)) for k, v in options.items())))
    if key not in _PIPELINES:
        if os.getpid() != _IMPORT_PID:
            _one_torch_thread_after_fork()
        _PIPELINES[key] = load_pipeline(model, **options)
    return _PIPELINES[key]


def _one_torch_thread_after_fork() -> None:
    """In a forked worker, torch computes on one thread: GNU OpenMP's thread pool does not survive a
    fork (a parallel region in the child hangs once the parent has used one), and the workers are
    the parallelism."""
    import torch

    torch.set_num_threads(1)


def model_signature(model: str | os.PathLike | None) -> list:
    """What the model's files are (names, sizes, modification times) for a local folder or an embedded
    model: part of a map's fingerprint, so that datasets' cache never serves restorations by an older
    model saved to the same folder. A Hub repo id is its name."""
    from .embedded import embedded_model_dir

    folder = embedded_model_dir(model)
    if folder is None and model is not None and Path(model).expanduser().is_dir():
        folder = Path(model).expanduser()
    if folder is None:
        return [str(model)]
    return sorted(
        (str(path.relative_to(folder)), path.stat().st_size, path.stat().st_mtime_ns)
        for path in Path(folder).rglob("*")
        if path.is_file()
    )


class Restorer:
    """A batch of records → the same records with the restored text in ``output_column`` (and the
    per-word labels in ``words_column`` when it is set). Callable on a column batch (a mapping of
    column name → list, as ``Dataset.map(batched=True)`` and Ray Data's ``map_batches(batch_format=
    "numpy")`` give), it loads its pipeline on first use, once per process: hand the class itself to
    ``ray.data.Dataset.map_batches(Restorer, fn_constructor_kwargs=..., concurrency=N)`` and each actor
    loads the model once.

    ``pipeline_options`` are the pipeline's call options (``remove_disfluencies=True``,
    ``keep_punctuation``, ``tasks``, ``window_words``, …); ``load_options`` go to
    :func:`hf_punctcase.load_pipeline` (``device``, ``dtype``)."""

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        column: str = "text",
        output_column: str = "restored",
        words_column: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        load_options: Mapping[str, Any] | None = None,
        **pipeline_options: Any,
    ) -> None:
        self.model = None if model is None else str(model)
        self.column = column
        self.output_column = output_column
        self.words_column = words_column
        self.batch_size = batch_size
        self.load_options = dict(load_options or {})
        self.pipeline_options = pipeline_options
        self.model_signature = model_signature(self.model)

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        texts = ["" if text is None else str(text) for text in batch[self.column]]
        restorer = cached_pipeline(self.model, self.load_options)
        results = restorer(texts, batch_size=self.batch_size, progress=False, **self.pipeline_options) if texts else []
        restored = dict(batch)
        restored[self.output_column] = [result["text"] for result in results]
        if self.words_column is not None:
            restored[self.words_column] = [result["words"] for result in results]
        return restored


def restore_dataset(
    dataset,
    column: str = "text",
    output_column: str = "restored",
    model: str | os.PathLike | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    num_proc: int | None = None,
    words_column: str | None = None,
    load_options: Mapping[str, Any] | None = None,
    **pipeline_options: Any,
):
    """``dataset`` with the restored text of ``column`` in ``output_column``: a ``datasets.Dataset``
    through ``Dataset.map(batched=True, num_proc=num_proc)`` (each worker process loads the model
    once; the order is kept), an ``IterableDataset`` lazily as it is iterated (streaming; the model is
    loaded on the first batch).

    ``model``: None / ``"default"``, ``"accurate"``, ``"on-device"``, ``"open"``, a checkpoint folder or a Hub repo
    id, loaded with :func:`hf_punctcase.load_pipeline` (``load_options``: its keyword arguments, e.g.
    ``device``).
    ``words_column``: also keep the per-word labels and scores there. ``pipeline_options``: the
    pipeline's call options, e.g. ``remove_disfluencies=True`` for the fluent text."""
    import datasets

    if not isinstance(dataset, (datasets.Dataset, datasets.IterableDataset)):
        raise TypeError(f"dataset must be a datasets.Dataset or datasets.IterableDataset, not {type(dataset).__name__}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
    names = dataset.column_names
    if names is not None and column not in names:
        raise ValueError(f"column {column!r} is not in the dataset; its columns are {', '.join(names)}")
    restorer = Restorer(model, column, output_column, words_column, batch_size, load_options, **pipeline_options)
    if isinstance(dataset, datasets.IterableDataset):
        if num_proc not in (None, 1):
            raise ValueError(
                "num_proc applies to a datasets.Dataset; an IterableDataset is restored as it is iterated "
                "(give each process its shard with datasets.distributed.split_dataset_by_node)"
            )
        return dataset.map(restorer, batched=True, batch_size=batch_size)
    return dataset.map(
        restorer, batched=True, batch_size=batch_size, num_proc=num_proc, desc="Restoring punctuation and casing"
    )


__all__ = ["DEFAULT_BATCH_SIZE", "Restorer", "cached_pipeline", "restore_dataset"]
