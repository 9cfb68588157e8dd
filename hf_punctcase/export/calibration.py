"""Calibration windows for static int8: training documents as an ASR gives them (lowercased, no marks),
cut and tokenised as the pipeline cuts them, so that fixed activation scales are set on the inputs a
quantised graph will run on. Used by ``benchmarks/static_int8.py`` (ONNX Runtime's ``quantize_static``)
and ``benchmarks/openvino_int8.py`` (NNCF's post-training quantisation)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

#: The most calibration windows taken from one document, so that many speakers and topics set the scales.
WINDOWS_PER_DOCUMENT = 4


def corpus_texts(corpus: str, data_dir: str | Path | None = None) -> Iterator[list[str]]:
    """A corpus's training documents as word lists: TED talks through their reader, any other corpus
    through the builder's train split (examples of up to 200 words). Never a dev or test document."""
    from ..data import data_dir as corpus_dir
    from ..data import load_punct_case_dataset, read_ted_talks
    from ..labels import LabelScheme

    if corpus == "ted":
        scheme = LabelScheme()
        for _, text in read_ted_talks(corpus_dir(data_dir) / "ted" / "talks.jsonl"):
            yield scheme.parse(text).words
        return
    for example in load_punct_case_dataset(corpus, data_dir, splits=["train"])["train"]:
        yield example["words"]


def calibration_windows(
    engine, count: int, corpora: Sequence[str], data_dir: str | Path | None = None
) -> list[dict[str, np.ndarray]]:
    """``count`` windows (``input_ids`` and ``attention_mask``, int64, a batch of one each), an equal share
    from each corpus's training documents, as ``engine`` (the pipeline's restoration engine for the model)
    cuts and tokenises them, at most :data:`WINDOWS_PER_DOCUMENT` a document."""
    from ..inputs import transcript
    from ..restoration import RestoreOptions

    options = RestoreOptions()
    windows: list[dict[str, np.ndarray]] = []
    for number, corpus in enumerate(corpora):
        share = count * (number + 1) // len(corpora) - len(windows)
        taken = 0
        for document in corpus_texts(corpus, data_dir):
            if taken == share:
                break
            source = transcript(" ".join(word.lower() for word in document))
            for window, _ in itertools.islice(engine.windows(source, options), WINDOWS_PER_DOCUMENT):
                windows.append({
                    "input_ids": np.asarray([window.input_ids], dtype=np.int64),
                    "attention_mask": np.asarray([window.attention_mask], dtype=np.int64),
                })
                taken += 1
                if taken == share:
                    break
    return windows
