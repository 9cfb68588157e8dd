import random

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import pipeline

import hf_punctcase
from hf_punctcase.labels import LABELLED_MARKS, split_trailing_marks
from hf_punctcase.hardware import detect_hardware

from conftest import assert_same_restoration
from hf_punctcase.inputs import split_words
from hf_punctcase.restoration import (
    add_char_offsets, capitalisable, consistent_labels, decode, is_opaque, plan_windows, vote_weights,
)

from conftest import VOCABULARY, random_text


def assert_contract(inputs: str, result: dict) -> None:
    """One output token per input word, in order: the word up to case, its trailing marks replaced by
    at most one predicted mark while closing quotes and brackets stay in order; or the word itself
    for tokens passed through."""
    words = inputs.split()
    tokens = result["text"].split(" ") if result["text"] else []
    assert len(tokens) == len(words) == len(result["words"])
    for word, token, entry in zip(words, tokens, result["words"]):
        assert token == entry["word"]
        if token == word:
            continue
        core, trail = split_trailing_marks(word)
        core, trail = (core, trail) if core else (word, "")
        rest = token[len(core) :]
        assert token[: len(core)].lower() == core.lower(), (word, token)
        kept = [ch for ch in rest if ch not in LABELLED_MARKS]
        assert kept == [ch for ch in trail if ch not in LABELLED_MARKS], (word, token)
        assert sum(ch in LABELLED_MARKS for ch in rest) <= 1, (word, token)


def test_closing_quotes_and_brackets_are_kept(tiny_pipeline):
    text = 'so (what) are "you" doing [now]'
    result = tiny_pipeline(text)
    assert_contract(text, result)
    tokens = result["text"].split()
    assert tokens[1].rstrip(".,?").endswith(")") and tokens[3].rstrip(".,?").endswith('"')


def test_registered_task_and_auto_class(tiny_model_dir):
    restorer = pipeline("punct-case", model=tiny_model_dir)
    assert isinstance(restorer, hf_punctcase.PunctCasePipeline)


def test_single_and_batch(tiny_pipeline):
    text = "so what are the risks i am not technical"
    result = tiny_pipeline(text)
    assert set(result) == {"text", "words"}
    assert set(result["words"][0]) == {"word", "punctuation", "casing", "punct_score", "case_score", "start_char", "end_char"}
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


@given(st.integers(0, 2000), st.integers(3, 300), st.integers(0, 60))
def test_voting_windows_are_the_same_windows_answering_for_all_their_words(num_words, window_words, context_words):
    if window_words <= 2 * context_words:
        return
    tiled = list(plan_windows(num_words, window_words, context_words))
    voting = list(plan_windows(num_words, window_words, context_words, vote=True))
    assert [(w.start, w.end) for w in voting] == [(w.start, w.end) for w in tiled]
    assert all((w.core_start, w.core_end) == (w.start, w.end) for w in voting)
    for w in voting:
        weights = vote_weights(w, num_words)
        assert len(weights) == w.end - w.start and weights.min() >= 1
        if w.start > 0:  # a cut edge: the word beside it counts least
            assert weights[0] == 1
        if w.start == 0 and w.end == num_words:  # the whole input: every word counts the same
            assert len(set(weights.tolist())) == 1


def test_voting_windows_average_every_window_that_holds_a_word(tiny_pipeline):
    words = random_text(random.Random(5), 70).split()
    text = " ".join(words)
    voted = tiny_pipeline(text, window_words=20, context_words=5, vote_windows=True, return_probabilities=True)
    assert_contract(text, voted)
    total = {task: np.zeros_like(probs, dtype=np.float64) for task, probs in voted["probabilities"].items()}
    weight = np.zeros(len(words))
    for window in plan_windows(len(words), 20, 5, vote=True):
        # A window's words restored alone are that window: the same subwords, the same probabilities.
        alone = tiny_pipeline(" ".join(words[window.start : window.end]), return_probabilities=True)["probabilities"]
        weights = vote_weights(window, len(words))
        for task in total:
            total[task][window.start : window.end] += weights[:, None] * alone[task]
        weight[window.start : window.end] += weights
    for task, probs in voted["probabilities"].items():
        np.testing.assert_allclose(probs, total[task] / weight[:, None], atol=1e-5)
    tiled = tiny_pipeline(text, window_words=20, context_words=5, return_probabilities=True)
    assert any(not np.allclose(tiled["probabilities"][task], voted["probabilities"][task]) for task in tiled["probabilities"])
    # One window holds the whole input: its one vote is the answer.
    short = " ".join(words[:10])
    assert tiny_pipeline(short, window_words=20, context_words=5, vote_windows=True) == tiny_pipeline(short, window_words=20, context_words=5)


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


def test_short_texts_are_whole_sentences_in_turn():
    from hf_punctcase.evaluation import short_texts

    scheme = hf_punctcase.labels.LabelScheme()
    references = [scheme.parse("One two. Three? Four five six. Seven eight. Nine"), scheme.parse("Ten. Eleven twelve.")]
    texts = short_texts(references, (1, 2))
    assert [(t.words, t.punct, t.case) for t in texts] == [
        (["one", "two"], ["O", "PERIOD"], ["UPPER_FIRST", "LOWER"]),
        (["three", "four", "five", "six"], ["QUESTION", "O", "O", "PERIOD"], ["UPPER_FIRST", "UPPER_FIRST", "LOWER", "LOWER"]),
        (["seven", "eight"], ["O", "PERIOD"], ["UPPER_FIRST", "LOWER"]),
        (["ten", "eleven", "twelve"], ["PERIOD", "O", "PERIOD"], ["UPPER_FIRST", "UPPER_FIRST", "LOWER"]),
    ]  # "Nine", after the last sentence end, is no whole sentence
    assert short_texts(references[:1], (9,))[0].words == "one two three four five six seven eight".split()
    with pytest.raises(ValueError, match="counts ≥ 1"):
        short_texts(references, (1, 0))


def test_evaluation_passes_window_options_to_the_pipeline(tiny_pipeline):
    """benchmarks/dev_eval.py --window-words / --context-words score the pipeline as a user would call it."""
    from hf_punctcase.evaluation import restore_references
    from hf_punctcase.labels import LabeledWords

    words = ("so what are the risks i am not technical " * 6).split()
    reference = LabeledWords(words, ["O"] * len(words), ["LOWER"] * len(words))
    predictions, _ = restore_references(tiny_pipeline, [reference], window_words=12, context_words=3)
    assert predictions[0] == tiny_pipeline(" ".join(words), window_words=12, context_words=3)["words"]
    with pytest.raises(ValueError, match=r"window_words \(8\) must exceed 2 × context_words \(4\)"):
        restore_references(tiny_pipeline, [reference], window_words=8, context_words=4)


# ---- dtype and device ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_pipeline_in_a_given_dtype(tiny_model_dir, dtype):
    """``dtype=`` loads the weights in that dtype; fp32 gives what the model object gives in fp32."""
    restorer = pipeline("punct-case", model=tiny_model_dir, dtype=dtype)
    assert restorer.model.dtype == dtype
    text = random_text(random.Random(4), 300)
    result = restorer(text, window_words=40, context_words=10)
    assert_contract(text, result)
    if dtype == torch.float32:
        model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(tiny_model_dir).eval()
        direct = hf_punctcase.PunctCasePipeline(model=model, tokenizer=restorer.tokenizer)
        assert result == direct(text, window_words=40, context_words=10)


def test_default_dtype_as_documented(tiny_model_dir):
    """No dtype: bf16 weights exactly where the CPU has bf16 matrix instructions; a model object is used as it is."""
    expected = torch.bfloat16 if detect_hardware().cpu_bf16 else torch.float32
    assert pipeline("punct-case", model=tiny_model_dir).model.dtype == expected
    assert pipeline("punct-case", model=tiny_model_dir, device="cpu").model.dtype == expected
    assert hf_punctcase.load_pipeline(tiny_model_dir).model.dtype == expected
    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(tiny_model_dir)
    assert pipeline("punct-case", model=model, tokenizer=tiny_model_dir).model.dtype == torch.float32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_pipeline_on_gpu(tiny_model_dir):
    cpu = pipeline("punct-case", model=tiny_model_dir, dtype=torch.float32)
    gpu = pipeline("punct-case", model=tiny_model_dir, dtype=torch.float32, device=0)
    assert gpu.model.device.type == "cuda"
    text = random_text(random.Random(5), 500)
    on_gpu, on_cpu = gpu(text, batch_size=4), cpu(text, batch_size=4)
    assert_contract(text, on_gpu)
    for g, c in zip(on_gpu["words"], on_cpu["words"]):
        assert g["punct_score"] == pytest.approx(c["punct_score"], abs=1e-3)
    assert_contract(text, pipeline("punct-case", model=tiny_model_dir, dtype=torch.bfloat16, device=0)(text))


# ---- pre-split input ------------------------------------------------------------------------------


def test_split_into_words(tiny_pipeline):
    words = "so what are the risks i am not technical".split()
    as_text = tiny_pipeline(" ".join(words), return_probabilities=True)
    assert_same_restoration(tiny_pipeline(words, is_split_into_words=True, return_probabilities=True), as_text, atol=0)
    assert_same_restoration(tiny_pipeline(tuple(words), is_split_into_words=True, return_probabilities=True), as_text, atol=0)
    # In a batch the kernels see other shapes: the same probabilities within the tolerance.
    batch = tiny_pipeline(
        [words, ["the", "doctor", "asked"], []], is_split_into_words=True, batch_size=2, return_probabilities=True
    )
    assert_same_restoration(batch[:2], [as_text, tiny_pipeline("the doctor asked", return_probabilities=True)])
    assert batch[2]["text"] == "" and batch[2]["words"] == []
    assert tiny_pipeline([], is_split_into_words=True) == {"text": "", "words": []}


@pytest.mark.parametrize("bad_word", ["two words", " so", "so\n", "", "\t"])
def test_split_into_words_refuses_whitespace(tiny_pipeline, bad_word):
    with pytest.raises(ValueError, match="empty or holds whitespace"):
        tiny_pipeline(["so", bad_word, "what"], is_split_into_words=True)
    with pytest.raises(ValueError, match="empty or holds whitespace"):
        tiny_pipeline([["so", "what"], ["so", bad_word]], is_split_into_words=True)


def test_split_into_words_refuses_other_types(tiny_pipeline):
    with pytest.raises(TypeError, match="list of words"):
        tiny_pipeline("so what", is_split_into_words=True)
    with pytest.raises(TypeError, match="list of words"):
        tiny_pipeline([["so"], "what"], is_split_into_words=True)


# ---- consistent casing ------------------------------------------------------------------------


def _probs(scheme, punct_rows, case_rows):
    """Probability rows from {label: probability} dicts (the rest spread over the other labels)."""

    def rows(labels, dicts):
        out = np.zeros((len(dicts), len(labels)))
        for i, given in enumerate(dicts):
            rest = (1.0 - sum(given.values())) / max(1, len(labels) - len(given))
            out[i] = [given.get(label, rest) for label in labels]
        return out

    return {"punct": rows(scheme.punct_labels, punct_rows), "case": rows(scheme.case_labels, case_rows)}


@pytest.mark.parametrize(
    "comma, period, upper_first, expected",
    [
        (0.55, 0.4, 0.7, "Hello. How"),  # the heads together favour a sentence start: a period
        (0.8, 0.2, 0.55, "Hello, how"),  # they favour one sentence: the capital is dropped
        (0.9, 0.05, 0.97, "Hello, How"),  # a confident capital after a comma: a name, kept
        (0.1, 0.85, 0.4, "Hello. How"),  # a sentence end is followed by a capital
        (0.3, 0.7, 0.2, "Hello, how"),  # ... or dropped, where the casing head is surer than the end
        (0.9, 0.05, 0.2, "Hello, how"),
    ],
)
def test_consistent_casing_decides_each_boundary_jointly(comma, period, upper_first, expected):
    scheme = hf_punctcase.labels.LabelScheme()
    probs = _probs(
        scheme,
        [{"COMMA": comma, "PERIOD": period}, {"O": 0.997}],
        [{"UPPER_FIRST": 0.99, "LOWER": 0.007}, {"UPPER_FIRST": upper_first, "LOWER": 1 - upper_first - 0.001}],
    )
    words = split_words(["hello", "how"])
    # a piece of a text: the boundary inside it is decided, its end left as the model has it
    argmax = decode(words, probs, scheme, consistent_casing=False, ends_sentence=False)
    consistent = decode(words, probs, scheme, consistent_casing=True, ends_sentence=False)
    assert consistent["text"] == expected
    assert argmax["text"] == ("Hello," if comma > period else "Hello.") + (" How" if upper_first > 0.5 else " how")
    chosen = consistent["words"][0]["punctuation"]
    assert consistent["words"][0]["punct_score"] == pytest.approx(probs["punct"][0, scheme.punct_labels.index(chosen)])


def test_consistent_casing_keeps_given_marks_and_passes_symbols():
    scheme = hf_punctcase.labels.LabelScheme()
    words = split_words("hello. how 😀 so 3.5 what".split())
    probs = _probs(scheme, [{"O": 0.9}] * 6, [{"LOWER": 0.9}] * 6)
    probs["punct"][3] = [0.05, 0.05, 0.85, 0.05]  # a period after "so", then a number
    kept = decode(words, probs, scheme, keep_punctuation=True)
    assert kept["text"] == "Hello. How 😀 so. 3.5 what."
    assert decode(words, probs, scheme)["text"] == "Hello how 😀 so. 3.5 what."


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 60), st.sampled_from([1.0, 2.0, 4.0, 16.0]), st.booleans())
def test_consistent_labels_invariants(seed, num_words, name_odds, keep):
    """Every sentence end before a word with a letter to capitalise is followed by a capital; a
    capital inside a sentence has the odds asked for; output tokens keep the decode contract."""
    scheme = hf_punctcase.labels.LabelScheme()
    rng = np.random.default_rng(seed)
    vocabulary = VOCABULARY + ["3.5", "😀", "i", "nasa", "--", "x-ray"]
    marks = ["", "", ".", ",", "?"] if keep else [""]
    tokens = [str(rng.choice(vocabulary)) + str(rng.choice(marks)) for _ in range(num_words)]
    words = split_words(tokens)
    probs = {
        "punct": rng.dirichlet(np.full(len(scheme.punct_labels), 0.5), num_words),
        "case": rng.dirichlet(np.full(len(scheme.case_labels), 0.5), num_words),
    }
    opaque = [is_opaque(word) for word in words.words]
    fixed = [
        scheme.label_of_marks(mark) if dark or keep and mark else None  # a word passed through keeps its marks
        for mark, dark in zip(words.marks, opaque)
    ]
    capitals = capitalisable(words.words, opaque)
    punct_ids, case_ids = consistent_labels(probs["punct"], probs["case"], scheme, capitals, fixed, name_odds)
    lower, upper_first = scheme.case_labels.index("LOWER"), scheme.case_labels.index("UPPER_FIRST")
    ends = {scheme.punct_labels.index(label) for label in ("PERIOD", "QUESTION")}
    for i in range(num_words):
        if fixed[i] is not None:
            assert scheme.punct_labels[punct_ids[i]] == fixed[i]
        if not capitals[i]:
            continue
        if i == 0 or punct_ids[i - 1] in ends:
            assert case_ids[i] != lower
        elif case_ids[i] == upper_first:
            assert probs["case"][i, upper_first] >= name_odds * probs["case"][i, lower]
    result = decode(words, probs, scheme, keep_punctuation=keep, ends_sentence=False)  # at the default odds
    default_punct, default_case = consistent_labels(probs["punct"], probs["case"], scheme, capitals, fixed)
    assert [w["punctuation"] for w in result["words"]] == [scheme.punct_labels[i] for i in default_punct]
    # A whole text: the same labels, but for the last word's mark, a sentence end unless kept as written.
    closed = decode(words, probs, scheme, keep_punctuation=keep)
    assert closed["words"][:-1] == result["words"][:-1]
    assert closed["words"][-1]["casing"] == result["words"][-1]["casing"]
    last = closed["words"][-1]["punctuation"]
    assert (last == fixed[-1]) if fixed[-1] is not None else (last in ("PERIOD", "QUESTION"))
    assert [w["casing"] for w in result["words"]] == [
        "LOWER" if dark else scheme.case_labels[i] for i, dark in zip(default_case, opaque)
    ]
    if not keep:
        assert_contract(" ".join(tokens), result)


def test_consistent_labels_keep_consistent_argmax_at_odds_one():
    scheme = hf_punctcase.labels.LabelScheme()
    rng = np.random.default_rng(0)
    words = split_words(random_text(random.Random(0), 400).split())
    probs = {"punct": rng.dirichlet(np.ones(4), 400), "case": rng.dirichlet(np.ones(4), 400)}
    can_capitalise = capitalisable(words.words)
    punct_ids, case_ids = consistent_labels(probs["punct"], probs["case"], scheme, can_capitalise, name_odds=1.0)
    argmax_p, argmax_c = probs["punct"].argmax(-1), probs["case"].argmax(-1)
    clash = np.concatenate([[True], np.isin(argmax_p[:-1], [2, 3])]) & (argmax_c == 0)
    untouched = ~(clash | np.concatenate([clash[1:], [False]]))
    assert clash.any() and untouched.any()
    assert (punct_ids[untouched] == argmax_p[untouched]).all() and (case_ids[untouched] == argmax_c[untouched]).all()


def test_pipeline_consistent_casing_option_and_probabilities(tiny_pipeline):
    text = random_text(random.Random(6), 300)
    default = tiny_pipeline(text, return_probabilities=True)
    argmax = tiny_pipeline(text, consistent_casing=False, ends_sentence=False)
    assert set(default) == {"text", "words", "probabilities"}
    probs = default["probabilities"]
    assert probs["punct"].shape == (300, 4) and probs["case"].shape == (300, 4)
    labels = tiny_pipeline.scheme.punct_labels
    assert [w["punctuation"] for w in argmax["words"]] == [labels[i] for i in probs["punct"].argmax(-1)]
    source = split_words(text.split())
    # the pipeline adds each word's character offsets after decoding
    decoded = decode(source, probs, tiny_pipeline.scheme, tiny_pipeline.lexicon)
    add_char_offsets(decoded["words"])
    assert decoded == {key: default[key] for key in ("text", "words")}
    argmax_decoded = decode(
        source, probs, tiny_pipeline.scheme, tiny_pipeline.lexicon, consistent_casing=False, ends_sentence=False
    )
    add_char_offsets(argmax_decoded["words"])
    assert argmax_decoded == argmax
    assert_contract(text, default)


# ---- the end of a text ----------------------------------------------------------------------------


@pytest.mark.parametrize("period, question", [(0.1, 0.25), (0.25, 0.1)])
@pytest.mark.parametrize("consistent_casing", [True, False])
def test_a_text_ends_with_the_likeliest_sentence_end(period, question, consistent_casing):
    """The last word, which the model leaves without a mark here, gets the sentence end it finds likelier;
    a piece of a text (ends_sentence=False) keeps the model's choice."""
    scheme = hf_punctcase.labels.LabelScheme()
    words = split_words(["hello", "so"])
    probs = _probs(scheme, [{"O": 0.9}, {"O": 0.6, "PERIOD": period, "QUESTION": question}], [{"LOWER": 0.9}] * 2)
    closed = decode(words, probs, scheme, consistent_casing=consistent_casing)["words"]
    expected = "QUESTION" if question > period else "PERIOD"
    assert closed[-1]["punctuation"] == expected and closed[-1]["word"] == "so" + ("?" if question > period else ".")
    assert closed[-1]["punct_score"] == pytest.approx(max(period, question))
    assert closed[0]["punctuation"] == "O"
    piece = decode(words, probs, scheme, consistent_casing=consistent_casing, ends_sentence=False)["words"]
    assert piece[-1]["punctuation"] == "O" and piece[-1]["word"] == "so" and piece[:-1] == closed[:-1]


def test_a_text_end_keeps_marks_written_and_what_is_not_restored():
    scheme = hf_punctcase.labels.LabelScheme()
    probs = _probs(scheme, [{"O": 0.9}] * 3, [{"LOWER": 0.9}] * 3)

    def last(tokens, **options):
        return decode(split_words(tokens), probs, scheme, **options)["words"][-1]["word"]

    assert last(["hello", "so", "what"]) == "what."
    assert last(["hello", "so", "what,"], keep_punctuation=True) == "what,"  # a mark kept as written
    assert last(["hello", "so", "what"], keep_punctuation=True) == "what."  # none written: restored
    assert last(["hello", "so", "😀"]) == "😀"  # passed through as written
    assert last(["hello", "so", "what"], tasks=("case",)) == "what"  # marks are not restored
    assert last(["Hello", "so", "what"], tasks=("punct",)) == "what."
    assert decode(split_words([]), {"punct": np.zeros((0, 4)), "case": np.zeros((0, 4))}, scheme)["text"] == ""
    commas_only = hf_punctcase.labels.LabelScheme(punct_labels=("O", "COMMA"))
    rows = {"punct": np.array([[0.9, 0.1]] * 2), "case": _probs(scheme, [{}] * 2, [{"LOWER": 0.9}] * 2)["case"]}
    assert decode(split_words(["hello", "so"]), rows, commas_only)["text"] == "hello so"  # no sentence end to give


def test_pipeline_ends_sentence_option(tiny_pipeline):
    rng = random.Random(11)
    texts = [" ".join(rng.choice(VOCABULARY) for _ in range(n)) for n in (1, 7, 300)]
    closed = tiny_pipeline(texts, return_probabilities=True)
    pieces = tiny_pipeline(texts, ends_sentence=False, return_probabilities=True)
    labels = tiny_pipeline.scheme.punct_labels
    for text, whole, piece in zip(texts, closed, pieces):
        assert whole["words"][:-1] == piece["words"][:-1]
        assert whole["words"][-1]["punctuation"] in ("PERIOD", "QUESTION")
        assert piece["words"][-1]["punctuation"] == labels[int(piece["probabilities"]["punct"][-1].argmax())]
        assert_contract(text, whole)
        assert_contract(text, piece)
    words = texts[1].split()
    assert tiny_pipeline(words, is_split_into_words=True, ends_sentence=False)["text"] == pieces[1]["text"]
