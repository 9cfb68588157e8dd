"""Streaming restoration: the concatenated stream is the pipeline's output, whatever the chunking.

The pipeline is called with ``batch_size=1``: by default it pads up to 16 windows into one batch,
which moves scores by rounding (up to 1e-2 in bf16); the stream runs each window alone, as the
pipeline then does.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hf_punctcase
from hf_punctcase import StreamingRestorer
from hf_punctcase.data import data_dir
from hf_punctcase.evaluation import DEV_SETS, available

from conftest import VOCABULARY

# Words the tiny vocabulary cuts into many subwords (windows over the model's 128 are split in
# pieces), words with marks and quotes, tokens passed through.
ODD_WORDS = [
    "high-functioning", "xylophonically", "3.5", "1,000", "--", "risks?", '"you"', "(what)", "😀", "café", "don't"
]
WORDS = st.sampled_from(VOCABULARY + ODD_WORDS)


def chunks(words, sizes):
    """``words`` cut into chunks of the given sizes (cycled), every word in one chunk."""
    if not any(sizes):
        sizes = [*sizes, max(1, len(words))]
    out, i, k = [], 0, 0
    while i < len(words):
        size = sizes[k % len(sizes)] if sizes else len(words)
        out.append(words[i : i + size])
        i, k = i + size, k + 1
    return out


def stream(restorer, pieces, check=True):
    """Push the pieces, then flush; check after each push that the delay and the words held stay
    within their bounds. Returns the entries and, per push, how many words it emitted."""
    entries, received = [], 0
    for piece in pieces:
        emitted = restorer.push(piece)
        entries += emitted
        received += len(piece)
        if check:
            assert len(entries) >= received - restorer.max_delay_words
            assert len(restorer._items) <= restorer.options.window_words + 1  # only what later windows need
    entries += restorer.flush()
    return entries


def offline(pipe, words, window_words, context_words, **kwargs):
    sizes = dict(window_words=window_words, context_words=context_words)
    return pipe(" ".join(words), batch_size=1, **sizes, **kwargs)["words"]


# ---- the embedded default on TED dev ---------------------------------------------------------------

@pytest.fixture(scope="module")
def default_pipeline():
    return hf_punctcase.load_pipeline("default")


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread: windows of 40 words gain little from two, and two threads on a CPU shared with
    other work can run a window 50 times slower."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def ted_words(default_pipeline):
    ted = DEV_SETS[0]
    if not available(ted):
        pytest.skip(f"{ted.name} is not in the data folder")
    references = ted.load(data_dir(), default_pipeline.scheme)
    return [word.lower() for reference in references for word in reference.words][:3000]


@pytest.mark.parametrize("window_words, context_words, num_words", [(40, 10, 3000), (200, 50, 3000), (13, 4, 1500)])
def test_stream_is_the_pipeline_on_ted(default_pipeline, ted_words, window_words, context_words, num_words):
    ted_words = ted_words[:num_words]
    rng = random.Random(window_words)
    sizes = [rng.choice([0, 0, 1, 1, 2, 3, 5, 8, 21, 60, 250]) for _ in range(500)]
    restorer = StreamingRestorer(default_pipeline, window_words=window_words, context_words=context_words)
    expected = offline(default_pipeline, ted_words, window_words, context_words)
    assert stream(restorer, chunks(ted_words, sizes)) == expected


# ---- the tiny model ----------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(WORDS, max_size=150),
    st.lists(st.integers(0, 12), max_size=30),
    st.sampled_from([(7, 2), (12, 5), (5, 0), (3, 1), (120, 10)]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_any_chunking_gives_the_pipeline(
    tiny_pipeline, words, sizes, sizes_pair, keep_punctuation, consistent_casing, ends_sentence
):
    window_words, context_words = sizes_pair
    options = dict(keep_punctuation=keep_punctuation, consistent_casing=consistent_casing, ends_sentence=ends_sentence)
    restorer = StreamingRestorer(tiny_pipeline, window_words=window_words, context_words=context_words, **options)
    expected = offline(tiny_pipeline, words, window_words, context_words, **options)
    # Every word is emitted once, by one push, and is then the pipeline's word: it never changes.
    emitted = []
    for piece in chunks(words, sizes):
        new = restorer.push(piece)
        assert new == expected[len(emitted) : len(emitted) + len(new)]
        emitted += new
    emitted += restorer.flush()
    assert emitted == expected


def test_windows_over_the_model_length_come_in_pieces(tiny_pipeline):
    from hf_punctcase.restoration import Window, encode_windows

    rng = random.Random(3)
    words = [rng.choice(["high-functioning", *VOCABULARY]) for _ in range(400)]  # 8 subwords each
    window = Window(0, 120, 10, 110)
    pieces = list(encode_windows(tiny_pipeline.tokenizer, words[:120], [window], tiny_pipeline.max_length))
    assert len(pieces) > 1
    restorer = StreamingRestorer(tiny_pipeline, window_words=120, context_words=10)
    assert stream(restorer, chunks(words, [1, 7, 0, 33])) == offline(tiny_pipeline, words, 120, 10)


@pytest.mark.parametrize("tasks", [("punct",), ("case",)])
def test_one_task(tiny_pipeline, tasks):
    words = "So what ARE the risks? i am NOT technical, we think that this is a good idea".split() * 5
    restorer = StreamingRestorer(tiny_pipeline, window_words=9, context_words=3, tasks=tasks)
    assert stream(restorer, chunks(words, [2, 0, 5])) == offline(tiny_pipeline, words, 9, 3, tasks=tasks)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDS, max_size=80), st.lists(st.integers(0, 9), max_size=20), st.integers(0, 3))
def test_short_right_context_is_the_same_for_any_chunking(tiny_pipeline, words, sizes, right):
    def make():
        return StreamingRestorer(tiny_pipeline, window_words=14, context_words=3, right_context_words=right)

    restorer = make()
    assert restorer.max_delay_words == 8 + right
    assert stream(restorer, chunks(words, sizes)) == stream(make(), [words])


def test_delay_is_core_plus_right_context(tiny_pipeline):
    words = random.Random(0).choices(VOCABULARY, k=100)
    for consistent_casing, delay in ((True, 30), (False, 29)):
        restorer = StreamingRestorer(tiny_pipeline, consistent_casing=consistent_casing)
        assert (restorer.core_words, restorer.max_delay_words) == (20, delay)
        emitted_after = []  # for each word, how many words came after it before it was emitted
        for i, word in enumerate(words):
            emitted_after += [i - (len(emitted_after) + k) for k in range(len(restorer.push([word])))]
        assert max(emitted_after) == delay
        assert len(emitted_after) + len(restorer.flush()) == len(words)


def test_dict_words_keep_their_fields_in_order(tiny_pipeline):
    words = "so what are the risks i am not technical we think that".split() * 3
    timed = [
        {"start": 0.5 * i, "word": " " * (i % 2) + word, "end": 0.5 * i + 0.4, "probability": 0.9, "casing": "x"}
        for i, word in enumerate(words)
    ]
    plain = stream(StreamingRestorer(tiny_pipeline, window_words=9, context_words=2), chunks(words, [4]))
    entries = stream(StreamingRestorer(tiny_pipeline, window_words=9, context_words=2), chunks(timed, [3, 0, 1]))
    for entry, item, restored in zip(entries, timed, plain, strict=True):
        # The pipeline's entry, then the input's fields in order ("word" as "input_word"), a field
        # named as one of the entry's own ("casing") left out.
        assert list(entry) == list(restored) + ["start", "input_word", "end", "probability"]
        fields = {"start": item["start"], "input_word": item["word"], "end": item["end"], "probability": 0.9}
        assert entry == {**restored, **fields}
    # As the pipeline gives timed words, less "input_word".
    expected = tiny_pipeline(timed, is_split_into_words=True, window_words=9, context_words=2, batch_size=1)["words"]
    assert [{k: v for k, v in entry.items() if k != "input_word"} for entry in entries] == expected
    assert timed[1]["word"] == " what" and "input_word" not in timed[0]  # inputs untouched


def test_pushed_dicts_are_copied(tiny_pipeline):
    restorer = StreamingRestorer(tiny_pipeline, window_words=5, context_words=1)
    item = {"word": "so", "start": 0.0}
    restorer.push([item])
    item["word"], item["start"] = "what", 9.0  # changed by the caller after the push
    assert [(entry["input_word"], entry["start"]) for entry in restorer.flush()] == [("so", 0.0)]


def test_char_offsets_run_over_the_whole_stream(tiny_pipeline):
    words = random.Random(1).choices(VOCABULARY, k=60)
    entries = stream(StreamingRestorer(tiny_pipeline, window_words=8, context_words=2), chunks(words, [7]))
    text = " ".join(entry["word"] for entry in entries)
    assert all(text[entry["start_char"] : entry["end_char"]] == entry["word"] for entry in entries)


def test_flush_on_empty_stream_and_reuse(tiny_pipeline):
    restorer = StreamingRestorer(tiny_pipeline, window_words=8, context_words=2)
    assert restorer.flush() == []
    assert restorer.push([]) == [] and restorer.flush() == []
    words = random.Random(2).choices(VOCABULARY, k=30)
    first = stream(restorer, chunks(words, [3]))
    assert stream(restorer, chunks(words, [5])) == first  # flush ended the stream; a new one starts
    assert restorer.push(["so"]) == [] and restorer.flush()[0]["start_char"] == 0


@pytest.mark.parametrize(
    "bad, error, message",
    [
        ("so what are", TypeError, "list of words"),
        ({"word": "so"}, TypeError, "list of words"),
        (None, TypeError, "list of words"),
        (["so", 3], TypeError, "word 1 of this push.*int"),
        (["so", b"what"], TypeError, "bytes"),
        (["so", "what are"], ValueError, "whitespace"),
        (["so", ""], ValueError, "empty"),
        (["so", " what"], ValueError, "whitespace"),
        (["so", {"start": 1.0}], ValueError, "without a 'word'"),
        (["so", {"word": None}], TypeError, "'word' of type NoneType"),
        ([{"word": "so what"}], ValueError, "whitespace"),
    ],
)
def test_bad_input_raises_and_changes_nothing(tiny_pipeline, bad, error, message):
    restorer = StreamingRestorer(tiny_pipeline, window_words=5, context_words=1)
    restorer.push(["the", "doctor"])
    with pytest.raises(error, match=message):
        restorer.push(bad)
    assert [entry["word"].lower().rstrip(".,?!") for entry in restorer.flush()] == ["the", "doctor"]


def test_bad_arguments(tiny_pipeline):
    with pytest.raises(ValueError, match="must exceed"):
        StreamingRestorer(tiny_pipeline, window_words=20, context_words=10)
    with pytest.raises(ValueError, match="must not exceed context_words"):
        StreamingRestorer(tiny_pipeline, context_words=5, right_context_words=6)
    with pytest.raises(ValueError, match="right_context_words"):
        StreamingRestorer(tiny_pipeline, right_context_words=-1)
    with pytest.raises(TypeError, match="PunctCasePipeline, an OnDeviceRestorer or a checkpoint"):
        StreamingRestorer(42)
    with pytest.raises(TypeError, match="loading a pipeline"):
        StreamingRestorer(tiny_pipeline, dtype="float32")
    # A restore option the stream does not take is refused, not left as an unused pipeline default.
    with pytest.raises(TypeError, match=r"does not take the restore options \['vote_windows'\]"):
        StreamingRestorer(tiny_pipeline, vote_windows=True)
    with pytest.raises(TypeError, match="does not take the restore options"):
        StreamingRestorer("default", return_sentences=True)


def test_loads_a_checkpoint(tiny_model_dir, tiny_pipeline):
    import torch

    from conftest import TEST_DTYPE

    restorer = StreamingRestorer(tiny_model_dir, window_words=8, context_words=2, dtype=TEST_DTYPE)
    assert isinstance(restorer.pipe, hf_punctcase.PunctCasePipeline)
    words = "so what are the risks i am not technical".split()
    assert stream(restorer, [words]) == offline(tiny_pipeline, words, 8, 2)


def test_a_windows_last_word_waits_for_the_next_word_when_the_stream_may_end_after_it(tiny_pipeline):
    """Without consistent casing and without right context, a push that completes a window would make
    its last word final; but if the stream ends there, ends_sentence gives it a sentence end."""
    words = ["so"] * 5
    options = dict(consistent_casing=False, ends_sentence=True)
    restorer = StreamingRestorer(tiny_pipeline, window_words=5, context_words=0, **options)
    assert restorer.push(words) == offline(tiny_pipeline, words, 5, 0, **options)[:4]
    assert restorer.max_delay_words == 4
    assert stream(StreamingRestorer(tiny_pipeline, window_words=5, context_words=0, **options), [words]) == offline(
        tiny_pipeline, words, 5, 0, **options
    )
