"""Kept means kept: with ``keep_punctuation=True`` a stretch that arrives punctuated and cased leaves as it
came (its marks, its lack of a mark, its casing); only what arrives bare is restored."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_punctcase
from hf_punctcase.inputs import split_words
from hf_punctcase.restoration import BARE_RUN_WORDS, CAPITAL_RUN_WORDS, WrittenStretches, decode, written_words

SCHEME = hf_punctcase.labels.LabelScheme()


def _flags(text: str, bare_run_words: int = BARE_RUN_WORDS) -> list[bool]:
    words = split_words(text.split())
    return written_words(words.words, words.marks, bare_run_words)


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        # Punctuated and cased: every word written, those without a mark included.
        ("Plan: rest, fluids; and follow up.", [True] * 6),
        ("Plan: rest, fluids; and follow up", [True] * 6),
        # A run too long to be a writer's is bare, the written words around it stay.
        ("It works. " + "and then we went " * 6 + "home. Then we slept.", [True, True] + [False] * 24 + [False, True, True, True]),
        # No mark at all: bare throughout, capitals or not.
        ("So what are the risks I am not technical", [False] * 9),
        # Marks without capitals: punctuated but not cased, so its marks stay and the rest is restored.
        ("hello. how so what", [False] * 4),
        # After a sentence end, a stretch without a capital is bare again.
        ("Hello, world. Is it? yes", [True, True, True, True, False]),
        # A written stretch whose first sentence runs on into the bare words before it: written from its
        # first capital, the mark closing the run in time.
        ("It works. " + "and then we went " * 6 + "The young ones are taken away. Then we slept.", [True, True] + [False] * 24 + [True] * 9),
        # A capital with no mark within CAPITAL_RUN_WORDS words of it: the run stays bare.
        ("It works. " + "and then we went " * 6 + "The " + "young ones go " * 10 + "away.", [True, True] + [False] * 55 + [True]),
        # ... and so does a capital's run that the text's end closes.
        ("It works. " + "and then we went " * 6 + "The young ones", [True, True] + [False] * 27),
    ],
)
def test_which_words_arrived_written(text, flags):
    assert _flags(text) == flags


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["and", "the", "the", "we", "We", "I", "so,", "it.", "Then", "fine?", "x"]), max_size=90),
    st.integers(1, 25),
    st.integers(1, 35),
)
def test_a_stream_decides_each_word_as_the_whole_text_does(tokens, bare_run_words, capital_run_words):
    words = split_words(tokens)
    stretches = WrittenStretches(bare_run_words, capital_run_words)
    flags = []
    for pushed, (word, mark) in enumerate(zip(words.words, words.marks), 1):
        flags += stretches.push(word, mark)
        assert len(flags) + stretches.undecided == pushed
        # A word waits for no more than a run's worth of words.
        assert stretches.undecided <= max(bare_run_words, capital_run_words)
    flags += stretches.finish()
    assert flags == written_words(words.words, words.marks, bare_run_words, capital_run_words)
    assert flags == _whole_text_rule(words.words, words.marks, bare_run_words, capital_run_words)


def _whole_text_rule(words, marks, bare_run_words, capital_run_words) -> list[bool]:
    """The rule of WrittenStretches, written over a whole text at once (runs found first, then decided)."""
    def capital(word):
        return any(ch.isupper() for ch in word)

    flags = [False] * len(words)
    marked = False  # a mark before the current run (a run closed by a mark counts it)
    sentence_capital = False  # a capital in the current sentence so far
    start = 0
    while start < len(words):
        end = start  # the run: start .. end-1; words[end] (when there) is the marked word closing it
        while end < len(words) and not marks[end]:
            end += 1
        run = range(start, end)
        closed = end < len(words)
        capitals = [index for index in run if capital(words[index])]
        if len(run) >= bare_run_words:
            first = capitals[0] if capitals else None
            if first is not None and closed and end - first < capital_run_words:
                for index in range(first, end):
                    flags[index] = True
        elif run:
            written = (marked or closed) and (sentence_capital or bool(capitals) or (closed and capital(words[end])))
            for index in run:
                flags[index] = written
        sentence_capital = sentence_capital or bool(capitals)
        if closed:
            marked = True
            sentence_capital = sentence_capital or capital(words[end])
            flags[end] = sentence_capital
            if any(ch in ".?!" for ch in marks[end]):
                sentence_capital = False
        start = end + 1
    return flags


def _probs(num_words: int, comma_everywhere: bool) -> dict[str, np.ndarray]:
    punct = np.full((num_words, len(SCHEME.punct_labels)), 0.02, dtype=np.float32)
    punct[:, SCHEME.punct_labels.index("COMMA" if comma_everywhere else "O")] = 0.9
    case = np.full((num_words, len(SCHEME.case_labels)), 0.02, dtype=np.float32)
    case[:, SCHEME.case_labels.index("UPPER_FIRST")] = 0.9
    return {"punct": punct, "case": case}


def test_written_words_keep_their_lack_of_a_mark_and_their_casing_however_sure_the_model():
    """A model that wants a comma after every word and a capital on every word changes none of the
    written words, and restores the bare run."""
    bare = "and then we went to the shop and we bought some bread and some milk for the kids at home"
    text = f"Plan: rest and fluids. {bare} Then, we Slept well"
    words = split_words(text.split())
    result = decode(words, _probs(len(words), comma_everywhere=True), SCHEME, keep_punctuation=True)
    tokens = result["text"].split(" ")
    assert tokens[:4] == ["Plan:", "rest", "and", "fluids."]
    assert tokens[-4:] == ["Then,", "we", "Slept", "well"]
    assert len(bare.split()) >= BARE_RUN_WORDS
    assert all(token.endswith(",") and token[0].isupper() for token in tokens[4:-4])  # restored as the model says
    # Without keep_punctuation every word is restored.
    assert decode(words, _probs(len(words), comma_everywhere=True), SCHEME)["text"].split(" ")[1] == "Rest,"


def test_the_pipeline_and_a_stream_keep_the_same_words(tiny_pipeline):
    rng = random.Random(3)
    # Each kept stretch opens with a mark: words without one after a bare run cannot be told from it.
    kept = "Well, we think it works. And nobody, so far, said otherwise."
    bare = " ".join(rng.choice(["so", "what", "are", "the", "risks", "i", "am", "not", "technical"]) for _ in range(30))
    tokens = f"{kept} {bare} {kept} {bare}".split()
    whole = tiny_pipeline(tokens, is_split_into_words=True, keep_punctuation=True, window_words=40, context_words=10)
    out = whole["text"].split(" ")
    assert out[: len(kept.split())] == kept.split()
    assert out[len(kept.split()) + 30 : 2 * len(kept.split()) + 30] == kept.split()
    for chunk in (1, 6, 31):
        stream = hf_punctcase.StreamingRestorer(tiny_pipeline, window_words=40, context_words=10, keep_punctuation=True)
        entries = [e for i in range(0, len(tokens), chunk) for e in stream.push(tokens[i : i + chunk])] + stream.flush()
        assert [e["word"] for e in entries] == [e["word"] for e in whole["words"]]
