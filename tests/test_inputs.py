"""One front door: the pipeline, the torch-free runtime and the stream accept the same words and refuse
the same faults, with the same error (hf_punctcase.inputs)."""

from __future__ import annotations

import pytest

from hf_punctcase import StreamingRestorer
from hf_punctcase.inputs import parse_inputs
from hf_punctcase.runtime import OnDeviceRestorer

# Each message names the word (and, in a batch, its transcript; in a stream, its push) and the fault.
BAD_WORDS = [
    ([{"start": 0.0}], ValueError, r"word 0\b.* is a dict without a 'word' field"),
    (["so", {"word": 3}], TypeError, r"word 1\b.* has a 'word' of type int"),
    (["so", 3.5], TypeError, r"word 1\b.* is float; a word is a str or a dict"),
    (["so", "two words"], ValueError, r"word 1\b.* is empty or holds whitespace"),
    ([{"word": "  "}], ValueError, r"word 0\b.* is empty or holds whitespace"),
]


@pytest.fixture(scope="module")
def on_device():
    return OnDeviceRestorer("on-device")


@pytest.mark.parametrize("words, error, message", BAD_WORDS)
def test_every_front_door_refuses_a_bad_word_alike(words, error, message, tiny_pipeline, on_device):
    for restore in (tiny_pipeline, on_device):
        with pytest.raises(error, match=message):
            restore(words, is_split_into_words=True)
        with pytest.raises(error, match=message):
            restore([["fine"], words], is_split_into_words=True)
    with pytest.raises(error, match=message):
        StreamingRestorer(tiny_pipeline).push(words)


def test_timed_words_keep_their_fields_through_the_runtime_as_through_the_pipeline(tiny_pipeline, on_device):
    words = [{"word": " so", "start": 0.0, "end": 0.2}, {"word": "what", "start": 0.2, "end": 0.5, "probability": 0.9}, "now"]
    for restore in (tiny_pipeline, on_device):
        result = restore(words, is_split_into_words=True)
        assert [entry.get("start") for entry in result["words"]] == [0.0, 0.2, None]
        assert result["words"][1]["probability"] == 0.9 and len(result["text"].split()) == 3
        batch = restore([words, ["hello"]], is_split_into_words=True)
        assert batch[0]["text"] == result["text"] and batch[1]["words"][0]["word"].lower().startswith("hello")


def test_what_is_one_transcript_and_what_is_many():
    assert parse_inputs("so what", False)[1] is True
    assert parse_inputs(["so what", "hello"], False)[1] is False
    assert parse_inputs(["so", "what"], True)[1] is True
    assert parse_inputs([["so"], [{"word": "what"}]], True)[1] is False
    assert parse_inputs([], True)[1] is True
    for inputs, split in (("so what", True), ([["so"], "what"], True), (["so", ["what"]], False), (3, False)):
        with pytest.raises(TypeError):
            parse_inputs(inputs, split)
