"""hf_punctcase.restore_dataset on a tiny model: the same texts as the pipeline's own, in memory (one
process and two worker processes) and streaming."""

from __future__ import annotations

import datasets
import pytest

import hf_punctcase

from conftest import TEST_DTYPE

TEXTS = [f"so what are the risks number {i} i am not technical we think" for i in range(7)] + ["", "we think so"]


@pytest.fixture(scope="module")
def expected(tiny_pipeline):
    return [result["text"] for result in tiny_pipeline(TEXTS, batch_size=4)]


def records() -> dict:
    return {"id": list(range(len(TEXTS))), "text": TEXTS}


@pytest.mark.parametrize("num_proc", [None, 2])
def test_restores_a_dataset_in_order_as_the_pipeline_does(tiny_model_dir, expected, num_proc):
    dataset = datasets.Dataset.from_dict(records())
    restored = hf_punctcase.restore_dataset(
        dataset, model=tiny_model_dir, batch_size=3, num_proc=num_proc, load_options={"dtype": TEST_DTYPE}
    )
    assert isinstance(restored, datasets.Dataset)
    assert restored["restored"] == expected
    assert restored["id"] == list(range(len(TEXTS))) and restored["text"] == TEXTS


def test_restores_a_streaming_dataset_lazily(tiny_model_dir, expected):
    stream = datasets.Dataset.from_dict(records()).to_iterable_dataset(num_shards=2)
    restored = hf_punctcase.restore_dataset(
        stream, model=tiny_model_dir, batch_size=4, words_column="words", load_options={"dtype": TEST_DTYPE}
    )
    assert isinstance(restored, datasets.IterableDataset)
    rows = list(restored)
    assert [row["restored"] for row in rows] == expected
    assert [row["id"] for row in rows] == list(range(len(TEXTS)))
    # the per-word labels: one entry per input word, their words joined give the text
    assert [" ".join(word["word"] for word in row["words"]) for row in rows] == expected
    assert {"punctuation", "casing"} <= set(rows[0]["words"][0])


def test_passes_call_options_to_the_pipeline(tiny_model_dir, tiny_pipeline):
    dataset = datasets.Dataset.from_dict({"text": TEXTS[:3]})
    restored = hf_punctcase.restore_dataset(
        dataset, model=tiny_model_dir, tasks=["punct"], load_options={"dtype": TEST_DTYPE}
    )
    assert restored["restored"] == [r["text"] for r in tiny_pipeline(TEXTS[:3], tasks=["punct"])]


def test_on_device_model_in_two_worker_processes():
    dataset = datasets.Dataset.from_dict({"text": TEXTS[:4]})
    expected = [r["text"] for r in hf_punctcase.load_pipeline("on-device")(TEXTS[:4])]
    assert hf_punctcase.restore_dataset(dataset, model="on-device", batch_size=2, num_proc=2)["restored"] == expected


def test_refuses_a_missing_column_and_workers_for_a_stream(tiny_model_dir):
    dataset = datasets.Dataset.from_dict({"transcript": ["we think"]})
    with pytest.raises(ValueError, match="column 'text' is not in the dataset; its columns are transcript"):
        hf_punctcase.restore_dataset(dataset, model=tiny_model_dir)
    with pytest.raises(ValueError, match="num_proc applies to a datasets.Dataset"):
        hf_punctcase.restore_dataset(dataset.to_iterable_dataset(), column="transcript", model=tiny_model_dir, num_proc=2)


def test_a_dropped_restorer_is_freed_at_once_so_that_no_forked_worker_finalises_its_runtime(tiny_model_dir):
    """A restorer and its engine form no reference cycle: dropped, a pipeline or an OnDeviceRestorer (its
    ONNX Runtime session) is freed at once. Left to the cyclic collector, it was finalised in a worker
    that datasets.map forked, where ONNX Runtime's destructor waited forever on its thread pool's lock."""
    import gc
    import weakref

    from hf_punctcase.runtime import OnDeviceRestorer

    gc.collect()
    gc.disable()
    try:
        for make in (lambda: OnDeviceRestorer("on-device"), lambda: hf_punctcase.load_pipeline(tiny_model_dir)):
            restorer = make()
            assert restorer("so what are the risks")["text"]
            freed = weakref.ref(restorer)
            del restorer
            assert freed() is None
    finally:
        gc.enable()
