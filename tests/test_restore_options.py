"""One set of restore options, checked in one place, for the pipeline, the torch-free runtime and streams."""

from __future__ import annotations

import pytest

import hf_punctcase
from hf_punctcase.restoration import OPTION_NAMES, RestoreOptions, check_tasks
from hf_punctcase.runtime import OnDeviceRestorer
from hf_punctcase.tasks import CASING, PUNCTUATION

TEXT = "so what are the risks i am not technical " * 8

BAD_OPTIONS = {
    "core of no word": ({"window_words": 20, "context_words": 10}, ValueError, r"window_words \(20\) must exceed 2 × context_words \(10\)"),
    "negative context": ({"context_words": -1}, ValueError, "context_words must be ≥ 0"),
    "float window": ({"window_words": 40.0}, TypeError, "window_words must be an int"),
    "switch as a string": ({"keep_punctuation": "False"}, TypeError, "keep_punctuation must be True or False"),
    "switch as a number": ({"return_sentences": 1}, TypeError, "return_sentences must be True or False"),
    "no task": ({"tasks": ()}, ValueError, "tasks must be a non-empty subset"),
    "unknown task": ({"tasks": ("punct", "disfl")}, ValueError, "tasks must be a non-empty subset"),
}


@pytest.fixture(scope="module")
def pipe():
    return hf_punctcase.load_pipeline("on-device")


@pytest.fixture(scope="module")
def runtime():
    return OnDeviceRestorer("on-device")


def test_options_are_checked_and_frozen():
    options = RestoreOptions(tasks=("case", "punct"))
    assert options.tasks == ("punct", "case")
    assert RestoreOptions(tasks=CASING).tasks == ("case",) and check_tasks([PUNCTUATION, "case"]) == ("punct", "case")
    assert options.updated(window_words=None) is options  # None leaves an option as it is
    changed = options.updated(window_words=60, context_words=20)
    assert (changed.window_words, changed.context_words, changed.core_words) == (60, 20, 20)
    assert options.window_words == 200  # the original is unchanged
    with pytest.raises(AttributeError):
        options.window_words = 10  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"unknown restore options: \['window'\]"):
        options.updated(window=10)
    assert OPTION_NAMES[:2] == ("window_words", "context_words")


@pytest.mark.parametrize("bad", BAD_OPTIONS, ids=list(BAD_OPTIONS))
def test_every_entry_point_refuses_a_bad_option_with_the_same_message(bad, pipe, runtime):
    options, error, message = BAD_OPTIONS[bad]
    with pytest.raises(error, match=message):
        RestoreOptions(**options)
    with pytest.raises(error, match=message):
        pipe(TEXT, **options)
    with pytest.raises(error, match=message):
        runtime(TEXT, **options)
    with pytest.raises(error, match=message):
        OnDeviceRestorer("on-device", **options)
    stream_options = {key: value for key, value in options.items() if not key.startswith("return_")}
    if stream_options:
        with pytest.raises(error, match=message):
            hf_punctcase.StreamingRestorer(pipe, **stream_options)


def test_options_given_at_construction_are_the_defaults_of_each_call(pipe, runtime):
    made_with = hf_punctcase.load_pipeline("on-device", window_words=40, context_words=10, keep_punctuation=True)
    text = "well, " + TEXT
    # A call's window_words alone keeps the context the pipeline was made with (a core of 60 - 20 words).
    assert made_with(text, window_words=60) == pipe(text, window_words=60, context_words=10, keep_punctuation=True)
    assert made_with(text) == pipe(text, window_words=40, context_words=10, keep_punctuation=True)
    with pytest.raises(ValueError, match=r"window_words \(20\) must exceed 2 × context_words \(10\)"):
        made_with(text, window_words=20)
    runtime_made_with = OnDeviceRestorer("on-device", window_words=40, context_words=10, keep_punctuation=True)
    assert runtime_made_with.options == RestoreOptions(window_words=40, context_words=10, keep_punctuation=True)
    assert runtime_made_with(text) == runtime(text, window_words=40, context_words=10, keep_punctuation=True)
    assert made_with(text)["text"] == runtime_made_with(text)["text"]
