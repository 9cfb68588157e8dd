"""Timed words in and out of the pipeline, character offsets, sentences and the task switches."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hf_punctcase.labels import LabelScheme, split_trailing_marks
from hf_punctcase.restoration import (
    add_char_offsets,
    char_offsets,
    check_tasks,
    decode,
    sentences,
)
from hf_punctcase.inputs import split_words

from conftest import random_text


def _timed(words, start=0.0, step=0.25):
    return [
        {"word": f" {word}", "start": start + i * step, "end": start + i * step + 0.2, "probability": 0.5 + i / 1000, "id": i}
        for i, word in enumerate(words)
    ]


def _strip(word: str) -> str:
    return split_trailing_marks(word)[0] or word


def _check_offsets(result):
    for entry in result["words"]:
        assert result["text"][entry["start_char"] : entry["end_char"]] == entry["word"]


def _check_sentences(result):
    spans = result["sentences"]
    covered = [i for sentence in spans for i in range(sentence["first_word"], sentence["last_word"] + 1)]
    assert covered == list(range(len(result["words"])))
    for sentence in spans:
        assert result["text"][sentence["start_char"] : sentence["end_char"]] == sentence["text"]
        words = result["words"][sentence["first_word"] : sentence["last_word"] + 1]
        assert sentence["text"] == " ".join(w["word"] for w in words)
        assert all(w["punctuation"] not in ("PERIOD", "QUESTION", "EXCLAMATION") for w in words[:-1])
    assert " ".join(s["text"] for s in spans) == result["text"]


# ---- torch-free helpers -------------------------------------------------------------------------


def test_char_offsets_and_sentences_helpers():
    words = [
        {"word": "Hello.", "punctuation": "PERIOD", "start": 0.0, "end": 0.5},
        {"word": "How", "punctuation": "O", "start": 0.6, "end": 0.8},
        {"word": "are", "punctuation": "O", "start": 0.8, "end": 0.9},
        {"word": "you?", "punctuation": "QUESTION", "start": 0.9, "end": 1.2},
        {"word": "Fine", "punctuation": "O", "start": 1.5, "end": 1.9},
    ]
    text = " ".join(w["word"] for w in words)
    assert char_offsets(words) == [(0, 6), (7, 10), (11, 14), (15, 19), (20, 24)]
    add_char_offsets(words)
    assert all(text[w["start_char"] : w["end_char"]] == w["word"] for w in words)
    assert sentences(words) == [
        {"text": "Hello.", "first_word": 0, "last_word": 0, "start": 0.0, "end": 0.5, "start_char": 0, "end_char": 6},
        {"text": "How are you?", "first_word": 1, "last_word": 3, "start": 0.6, "end": 1.2, "start_char": 7, "end_char": 19},
        {"text": "Fine", "first_word": 4, "last_word": 4, "start": 1.5, "end": 1.9, "start_char": 20, "end_char": 24},
    ]
    untimed = [{"word": w["word"], "punctuation": w["punctuation"]} for w in words]
    assert [(s["start"], s["end"]) for s in sentences(untimed)] == [(None, None)] * 3
    assert sentences([]) == [] and char_offsets([]) == []


def test_check_tasks():
    assert check_tasks(("case", "punct")) == ("punct", "case")
    assert check_tasks("case") == ("case",)
    for bad in ((), ("punct", "spelling"), ["truecase"]):
        with pytest.raises(ValueError):
            check_tasks(bad)
    with pytest.raises(TypeError):
        check_tasks(3)


def _probs(num_words, scheme, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for task, labels in (("punct", scheme.punct_labels), ("case", scheme.case_labels)):
        raw = rng.random((num_words, len(labels)))
        out[task] = (raw / raw.sum(-1, keepdims=True)).astype(np.float32)
    return out


@pytest.mark.parametrize("consistent", [True, False])
def test_decode_tasks(consistent):
    scheme = LabelScheme()
    tokens = "so What are the RISKS? i am, not technical. iPhone nasa 😀".split()
    words = split_words(tokens)
    probs = _probs(len(tokens), scheme)
    both = decode(words, probs, scheme, consistent_casing=consistent)
    assert decode(words, probs, scheme, consistent_casing=consistent, tasks=("punct", "case")) == both
    punct_only = decode(words, probs, scheme, consistent_casing=consistent, tasks=("punct",))
    # casing exactly as written, marks predicted as with both tasks when casing does not take part
    assert [_strip(w["word"]) for w in punct_only["words"]] == [_strip(t) for t in tokens]
    assert [w["casing"] for w in punct_only["words"][:5]] == ["LOWER", "UPPER_FIRST", "LOWER", "LOWER", "ALL_UPPER"]
    assert [w["punctuation"] for w in punct_only["words"][:-1]] == [
        scheme.punct_labels[i] for i in probs["punct"].argmax(-1)[:-1]
    ]
    case_only = decode(words, probs, scheme, consistent_casing=consistent, tasks=("case",))
    # marks exactly as written, none added; words the input up to case
    assert [w["word"].lower() for w in case_only["words"]] == [t.lower() for t in tokens]
    assert [w["punctuation"] for w in case_only["words"]] == [scheme.label_of_marks(m) for m in words.marks]
    # a head whose task is not restored may be missing
    alone = decode(words, {"case": probs["case"]}, scheme, consistent_casing=consistent, tasks=("case",))
    assert alone["text"] == case_only["text"]
    if consistent:  # a capital after every sentence end written in the input
        assert case_only["words"][5]["word"] == "I" and case_only["words"][10]["word"][0].isupper()
    with pytest.raises(KeyError):
        decode(words, {"case": probs["case"]}, scheme, tasks=("punct", "case"))


def test_decode_punct_only_with_keep_punctuation():
    scheme = LabelScheme()
    tokens = "So what are the risks? i AM not technical".split()
    words = split_words(tokens)
    probs = _probs(len(tokens), scheme, seed=1)
    result = decode(words, probs, scheme, keep_punctuation=True, tasks=("punct",))
    assert result["words"][4]["word"] == "risks?" and result["words"][4]["punctuation"] == "QUESTION"
    assert [_strip(w["word"]) for w in result["words"]] == [_strip(t) for t in tokens]


# ---- the pipeline -------------------------------------------------------------------------------


def test_offsets_for_every_input_kind(tiny_pipeline):
    text = "so what are the risks i am not technical we think that this is a good idea"
    for result in (
        tiny_pipeline(text),
        tiny_pipeline(text.split(), is_split_into_words=True),
        tiny_pipeline(_timed(text.split()), is_split_into_words=True),
        *tiny_pipeline([text, "the doctor asked"], batch_size=3),
    ):
        _check_offsets(result)
        assert [k for k in result["words"][0]][:7] == [
            "word", "punctuation", "casing", "punct_score", "case_score", "start_char", "end_char"
        ]


def test_string_output_unchanged_but_offsets(tiny_pipeline):
    text = "so what are the risks i am not technical"
    result = tiny_pipeline(text)
    assert set(result) == {"text", "words"}
    words = split_words(text.split())
    assert result["text"] == tiny_pipeline(words.words, is_split_into_words=True)["text"]
    for entry in result["words"]:
        assert set(entry) == {"word", "punctuation", "casing", "punct_score", "case_score", "start_char", "end_char"}


@pytest.mark.parametrize("window_words,context_words,batch_size", [(200, 50, 16), (12, 3, 1), (12, 3, 5)])
def test_timestamps_survive_in_order(tiny_pipeline, window_words, context_words, batch_size):
    rng = random.Random(3)
    words = random_text(rng, 137).split()
    timed = _timed(words)
    result = tiny_pipeline(
        timed, is_split_into_words=True, window_words=window_words, context_words=context_words, batch_size=batch_size
    )
    assert len(result["words"]) == len(timed)
    for given, entry in zip(timed, result["words"]):
        extras = [(k, v) for k, v in entry.items() if k in ("start", "end", "probability", "id")]
        assert extras == [(k, v) for k, v in given.items() if k != "word"]
        assert _strip(entry["word"]).lower() == given["word"].strip()
    _check_offsets(result)
    assert timed[0]["word"] == f" {words[0]}"  # the input is not changed


def test_timed_batch_and_mixed_batch(tiny_pipeline):
    first, second = _timed("so what are the risks".split()), _timed("i am not technical".split(), start=10.0)
    results = tiny_pipeline([first, second, "the doctor asked".split()], is_split_into_words=True, batch_size=2)
    assert [[w["start"] for w in r["words"]] for r in results[:2]] == [
        [w["start"] for w in first], [w["start"] for w in second]
    ]
    assert "start" not in results[2]["words"][0]


def test_return_sentences(tiny_pipeline):
    rng = random.Random(5)
    timed = _timed(random_text(rng, 300).split())
    result = tiny_pipeline(timed, is_split_into_words=True, return_sentences=True, window_words=40, context_words=10)
    _check_sentences(result)
    for sentence in result["sentences"]:
        assert sentence["start"] == timed[sentence["first_word"]]["start"]
        assert sentence["end"] == timed[sentence["last_word"]]["end"]
    plain = tiny_pipeline(random_text(rng, 80), return_sentences=True, keep_punctuation=True)
    _check_sentences(plain)
    assert all(s["start"] is None and s["end"] is None for s in plain["sentences"])
    kept = tiny_pipeline("hello there. how are you? fine", return_sentences=True, tasks=("case",))
    assert [s["text"].lower() for s in kept["sentences"]] == ["hello there.", "how are you?", "fine"]
    assert tiny_pipeline("", return_sentences=True) == {"text": "", "words": [], "sentences": []}


def test_pipeline_tasks(tiny_pipeline):
    text = "So What are the RISKS? i am, not technical. nasa bought an iPhone"
    tokens = text.split()
    punct_only = tiny_pipeline(text, tasks=("punct",))
    assert [_strip(w["word"]) for w in punct_only["words"]] == [_strip(t) for t in tokens]
    case_only = tiny_pipeline(text, tasks=("case",))
    assert [w["word"].lower() for w in case_only["words"]] == [t.lower() for t in tokens]
    both = tiny_pipeline(text)
    assert both == tiny_pipeline(text, tasks=["case", "punct"])
    with pytest.raises(ValueError):
        tiny_pipeline(text, tasks=("spelling",))
    with pytest.raises(ValueError):
        tiny_pipeline(text, tasks=())


def test_bad_timed_words(tiny_pipeline):
    with pytest.raises(ValueError, match="word 0 is a dict without a 'word' field"):
        tiny_pipeline([{"start": 0.0, "end": 1.0}], is_split_into_words=True)
    with pytest.raises(TypeError, match="word 1 has a 'word' of type int"):
        tiny_pipeline([{"word": "so"}, {"word": 3}], is_split_into_words=True)
    with pytest.raises(ValueError):
        tiny_pipeline([{"word": "two words", "start": 0.0, "end": 1.0}], is_split_into_words=True)
    with pytest.raises(ValueError):
        tiny_pipeline([{"word": "  ", "start": 0.0, "end": 1.0}], is_split_into_words=True)
    mixed = tiny_pipeline([{"word": "so", "start": 0.0}, "what"], is_split_into_words=True)  # as the stream takes them
    assert [w["word"].lower().rstrip(",.?") for w in mixed["words"]] == ["so", "what"]
    assert mixed["words"][0]["start"] == 0.0 and "start" not in mixed["words"][1]


def test_default_model_timed_sentences():
    import hf_punctcase

    restorer = hf_punctcase.load_pipeline()
    words = "so what are the risks i am not technical".split()
    result = restorer(_timed(words), is_split_into_words=True, return_sentences=True)
    assert [s["text"] for s in result["sentences"]] == ["So what are the risks?", "I am not technical."]
    assert [(s["start"], s["end"]) for s in result["sentences"]] == [(0.0, 1.2), (1.25, 2.2)]
    _check_offsets(result)
    punct_only = restorer(" ".join(words), tasks=("punct",))
    assert punct_only["text"] == "so what are the risks? i am not technical."
