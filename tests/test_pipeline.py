import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import pipeline

import hf_punctcase
from hf_punctcase.labels import split_trailing_marks
from hf_punctcase.restoration import plan_windows

from conftest import VOCABULARY, random_text


def assert_contract(inputs: str, result: dict) -> None:
    """One output token per input word, in order: the word (its trailing marks replaced by the
    predicted one) up to case, or the word itself for tokens passed through."""
    words = inputs.split()
    tokens = result["text"].split(" ") if result["text"] else []
    assert len(tokens) == len(words) == len(result["words"])
    for word, token, entry in zip(words, tokens, result["words"]):
        assert token == entry["word"]
        if token == word:
            continue
        core = split_trailing_marks(word)[0] or word
        assert token.lower() in {core.lower() + mark for mark in ("", ".", ",", "?")}, (word, token)


def test_registered_task_and_auto_class(tiny_model_dir):
    restorer = pipeline("punct-case", model=tiny_model_dir)
    assert isinstance(restorer, hf_punctcase.PunctCasePipeline)


def test_single_and_batch(tiny_pipeline):
    text = "so what are the risks i am not technical"
    result = tiny_pipeline(text)
    assert set(result) == {"text", "words"}
    assert set(result["words"][0]) == {"word", "punctuation", "casing", "punct_score", "case_score"}
    assert_contract(text, result)
    results = tiny_pipeline([text, "the doctor asked", text], batch_size=2)
    assert [r["text"] for r in results] == [result["text"], tiny_pipeline("the doctor asked")["text"], result["text"]]


def test_progress_bar_changes_nothing(tiny_pipeline, capsys):
    texts = [random_text(random.Random(i), 30 + i) for i in range(25)]
    quiet = tiny_pipeline(texts, batch_size=4, progress=False)
    shown = tiny_pipeline(texts, batch_size=4, progress=True)
    assert [r["text"] for r in shown] == [r["text"] for r in quiet]
    assert "25/25" in capsys.readouterr().err
    long_text = random_text(random.Random(0), 3000)
    assert tiny_pipeline(long_text, progress=True)["text"] == tiny_pipeline(long_text)["text"]
    assert "30/30" in capsys.readouterr().err


def test_batch_equals_one_by_one(tiny_pipeline):
    rng = random.Random(1)
    texts = [random_text(rng, n) for n in (0, 1, 7, 150, 420, 33)]
    batched = tiny_pipeline(texts, batch_size=8)
    single = [tiny_pipeline(t, batch_size=1) for t in texts]
    assert [r["text"] for r in batched] == [r["text"] for r in single]
    for b, s in zip(batched, single):
        for wb, ws in zip(b["words"], s["words"]):
            assert wb["punct_score"] == pytest.approx(ws["punct_score"], abs=1e-5)


any_token = st.text(min_size=1, max_size=12).filter(lambda t: t.split() == [t])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(5000, 6000), st.integers(0, 2**32), st.lists(any_token, max_size=40))
def test_long_input_keeps_every_word(tiny_pipeline, num_words, seed, odd_tokens):
    """≥ 5,000 words with arbitrary tokens spliced in: every word comes back, in order."""
    rng = random.Random(seed)
    words = [rng.choice(VOCABULARY + ["3.5", "1,000", "don't", "x-ray", "a", "I"]) for _ in range(num_words)]
    for token in odd_tokens:
        words.insert(rng.randrange(len(words) + 1), token)
    text = " ".join(words)
    assert_contract(text, tiny_pipeline(text, batch_size=16))


@given(st.integers(0, 2000), st.integers(3, 300), st.integers(0, 60))
def test_windows_tile_the_input(num_words, window_words, context_words):
    if window_words <= 2 * context_words:
        with pytest.raises(ValueError):
            list(plan_windows(num_words, window_words, context_words))
        return
    windows = list(plan_windows(num_words, window_words, context_words))
    covered = [i for w in windows for i in range(w.core_start, w.core_end)]
    assert covered == list(range(num_words))
    for w in windows:
        assert w.start <= w.core_start < w.core_end <= w.end <= num_words
        assert w.end - w.start <= window_words


def test_window_settings_change_nothing_structural(tiny_pipeline):
    text = random_text(random.Random(2), 500)
    for window_words, context_words in [(200, 50), (40, 10), (10, 0)]:
        assert_contract(text, tiny_pipeline(text, window_words=window_words, context_words=context_words))


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_input(tiny_pipeline, text):
    assert tiny_pipeline(text) == {"text": "", "words": []}
    assert tiny_pipeline([text, "so what"], batch_size=4)[0] == {"text": "", "words": []}


@pytest.mark.parametrize("bad", [None, 3, b"bytes", ["ok", None], {"text": "x"}])
def test_non_string_input(tiny_pipeline, bad):
    with pytest.raises(TypeError, match="str or a list of str"):
        tiny_pipeline(bad)


def test_strange_tokens_pass_through_in_place(tiny_pipeline):
    long_token = "abc" * 3400
    words = ["so", long_token, "what", "😀", "are\x01", "\x07", "привет", "мир", "你好", "the", "risks"]
    result = tiny_pipeline(" ".join(words))
    tokens = result["text"].split(" ")
    assert len(tokens) == len(words)
    for word, token in zip(words, tokens):
        if word in (long_token, "😀", "\x07", "привет", "мир", "你好"):
            assert token == word  # unchanged, in place
        else:
            assert token.lower().rstrip(".,?") == word.lower()  # control characters stay inside the word


def test_already_punctuated_input(tiny_pipeline):
    text = "Hello, world. Is it? yes"
    stripped = tiny_pipeline(text)
    assert [w.lower().rstrip(".,?") for w in stripped["text"].split()] == ["hello", "world", "is", "it", "yes"]
    kept = tiny_pipeline(text, keep_punctuation=True)
    tokens = kept["text"].split()
    assert tokens[0].endswith(",") and tokens[1].endswith(".") and tokens[3].endswith("?")
    assert [w["punctuation"] for w in kept["words"][:4]] == ["COMMA", "PERIOD", "O", "QUESTION"][:2] + [
        kept["words"][2]["punctuation"], "QUESTION"]


def test_mixed_case_uses_the_lexicon(tiny_pipeline):
    result = tiny_pipeline("iphone")
    entry = result["words"][0]
    if entry["casing"] == "MIXED":
        assert entry["word"].rstrip(".,?") == "iPhone"


def test_million_words(tiny_pipeline):
    """A 1,000,000-word input completes; results are gathered per word, not per subword logits."""
    rng = random.Random(3)
    text = " ".join(rng.choice(VOCABULARY) for _ in range(1_000_000))
    result = tiny_pipeline(text, batch_size=64)
    assert len(result["words"]) == 1_000_000
    assert len(result["text"].split()) == 1_000_000


def test_bad_model_paths(tmp_path, tiny_model_dir):
    with pytest.raises(FileNotFoundError, match=r"/does/not/exist does not exist"):
        hf_punctcase.load_pipeline("/does/not/exist")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=rf"{tmp_path} lacks tokenizer_config.json, model weights"):
        hf_punctcase.load_pipeline(tmp_path)
    with pytest.raises(FileNotFoundError, match="not a folder"):
        hf_punctcase.load_pipeline(tmp_path / "config.json")


def test_evaluation_refuses_misaligned_references(tiny_pipeline):
    """A reference word that whitespace splitting does not see as a word would shift every label after it."""
    from hf_punctcase.evaluation import restore_references
    from hf_punctcase.labels import LabeledWords

    aligned = LabeledWords(["so", "what"], ["O", "QUESTION"], ["UPPER_FIRST", "LOWER"])
    predictions, _ = restore_references(tiny_pipeline, [aligned])
    assert len(predictions[0]) == 2
    shifted = LabeledWords(["so", "\u00a0", "what"], ["O", "COMMA", "QUESTION"], ["UPPER_FIRST", "LOWER", "LOWER"])
    with pytest.raises(RuntimeError, match="document 0: 3 reference words but 2 restored"):
        restore_references(tiny_pipeline, [shifted])


def test_evaluation_passes_window_options_to_the_pipeline(tiny_pipeline):
    """benchmarks/evaluate.py --window-words / --context-words score the pipeline as a user would call it."""
    from hf_punctcase.evaluation import restore_references
    from hf_punctcase.labels import LabeledWords

    words = ("so what are the risks i am not technical " * 6).split()
    reference = LabeledWords(words, ["O"] * len(words), ["LOWER"] * len(words))
    predictions, _ = restore_references(tiny_pipeline, [reference], window_words=12, context_words=3)
    assert predictions[0] == tiny_pipeline(" ".join(words), window_words=12, context_words=3)["words"]
    with pytest.raises(ValueError, match=r"window_words \(8\) must exceed 2 × context_words \(4\)"):
        restore_references(tiny_pipeline, [reference], window_words=8, context_words=4)
