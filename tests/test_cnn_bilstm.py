"""The CNN-BiLSTM family: its tokenizer, the model (masking, shifted heads, loss), save/load through the
auto classes and without the plugin, the pipeline, and training from scratch with the finetuning recipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline

import hf_punctcase
from hf_punctcase import AutoModelForJointTokenClassification, CnnBiLstmConfig, CnnBiLstmForJointTokenClassification
from hf_punctcase.export.remote_code import bundle_files
from hf_punctcase.labels import IGNORE_INDEX
from hf_punctcase.models.cnn_bilstm import train_tokenizer
from hf_punctcase.models.common.modeling import JointTokenClassifierOutput
from hf_punctcase.tokenization import first_subword_positions, tokenize_and_align_labels

from conftest import tiny_cnn_config, tiny_corpus_texts, write_punctuated_corpus

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
sys.path.insert(0, str(RECIPES))

import finetune  # noqa: E402
import train_tokenizer as train_tokenizer_recipe  # noqa: E402


# ---- tokenizer ---------------------------------------------------------------------------------


def test_tokenizer_trains_round_trips_and_gives_word_ids(tiny_cnn_tokenizer, tmp_path):
    assert 3 <= len(tiny_cnn_tokenizer) <= 150
    assert tiny_cnn_tokenizer.pad_token_id == 0 and tiny_cnn_tokenizer.convert_ids_to_tokens(1) == "<unk>"
    tiny_cnn_tokenizer.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded.padding_side == "right" and loaded.model_input_names == ["input_ids", "attention_mask"]
    words = [["so", "What", "are", "the", "RISKS"], ["café", "3.5", "zzzq"]]
    for tokenizer in (tiny_cnn_tokenizer, loaded):
        encoding = tokenizer(words, is_split_into_words=True)
        for row, row_words in enumerate(words):
            word_ids = encoding.word_ids(row)
            # no special tokens: every subword belongs to a word, words in order, each at least one subword
            assert None not in word_ids and sorted(word_ids) == word_ids
            assert set(word_ids) == set(range(len(row_words)))
            pieces = tokenizer.convert_ids_to_tokens(encoding["input_ids"][row])
            for index, word in enumerate(row_words):
                word_pieces = [p for p, w in zip(pieces, word_ids) if w == index]
                assert word_pieces[0].startswith("▁")  # SentencePiece-style word start, wherever the word stands
                if "<unk>" not in word_pieces:  # lowercased by the tokenizer itself
                    assert "".join(word_pieces).lstrip("▁") == word.lower()
    assert loaded(words, is_split_into_words=True)["input_ids"] == tiny_cnn_tokenizer(words, is_split_into_words=True)["input_ids"]
    # unseen characters are unknown, not dropped: the word keeps a first subword for its labels
    assert first_subword_positions(loaded([["zzzq"]], is_split_into_words=True).word_ids(0), 1) == [0]


def test_tokenizer_is_trained_on_the_words_the_model_sees(tiny_cnn_tokenizer):
    vocabulary = tiny_cnn_tokenizer.get_vocab()
    # marks were stripped (the labels carry them) and words lowercased before training: no "?" and no
    # capital in any piece; internal marks stay in words ("3.5", "1,000", "don't")
    assert not any("?" in piece or piece != piece.lower() for piece in vocabulary)
    assert "'" in "".join(vocabulary)
    assert "▁the" in vocabulary  # the commonest word of the corpus is one piece


def test_character_coverage_leaves_rare_characters_to_unk_and_changes_nothing_else():
    """The trainer keeps every character it sees as a piece: with character_coverage, the words of
    characters too rare to cover are left out, and their characters come back as <unk>."""
    texts = tiny_corpus_texts()
    rare = ["日本 語", "∑ ¶ ß"]
    every = train_tokenizer(texts + rare, vocab_size=150)
    covered = train_tokenizer(texts + rare, vocab_size=150, character_coverage=0.999)
    assert "日" in every.get_vocab() and "日" not in covered.get_vocab()
    assert covered("日本")["input_ids"][-1] == covered.unk_token_id
    # Without rare characters the same pieces and the same tokens, though the words reach the trainer
    # counted, not in order (pieces of equal score may then take other ids).
    streamed = train_tokenizer(texts, vocab_size=150)
    counted = train_tokenizer(texts, vocab_size=150, character_coverage=0.99999)
    assert set(streamed.get_vocab()) == set(counted.get_vocab())
    assert [streamed.tokenize(text) for text in texts[:50]] == [counted.tokenize(text) for text in texts[:50]]
    with pytest.raises(ValueError, match="character_coverage"):
        train_tokenizer(texts, vocab_size=150, character_coverage=0.0)


def test_tokenizer_recipe_writes_a_folder_auto_tokenizer_loads(tmp_path):
    corpus = write_punctuated_corpus(tmp_path / "corpus.jsonl")
    output = train_tokenizer_recipe.main([
        "--output_dir", str(tmp_path / "tok"), "--train_corpora", f"text:{corpus}", "--vocab_size", "120",
    ])
    tokenizer = AutoTokenizer.from_pretrained(output)
    assert len(tokenizer) <= 120 and tokenizer.pad_token == "<pad>"
    # beside it, the text it was trained on, for the cards of the models made on it
    record = json.loads((output / "tokenizer_training.json").read_text())
    (row,) = record["training_data"]
    assert row["corpus"] == "text" and row["words"] > 0 and record["options"]["vocab_size"] == 120
    with pytest.raises(FileExistsError):  # never written over
        train_tokenizer_recipe.main(["--output_dir", str(output), "--train_corpora", f"text:{corpus}"])


# ---- model -------------------------------------------------------------------------------------


def _batch(tokenizer, texts: list[list[str]]):
    return tokenizer(texts, is_split_into_words=True, padding=True, return_tensors="pt")


def test_outputs_are_the_joint_output_with_a_logits_alias(tiny_cnn_model, tiny_cnn_tokenizer):
    batch = _batch(tiny_cnn_tokenizer, [["so", "what", "are", "the", "risks"], ["i", "am"]])
    with torch.no_grad():
        output = tiny_cnn_model(**batch)
    assert isinstance(output, JointTokenClassifierOutput)
    length = batch["input_ids"].shape[1]
    assert output.punct_logits.shape == (2, length, 4) and output.case_logits.shape == (2, length, 4)
    assert torch.equal(output.logits, output.punct_logits)
    assert tiny_cnn_model.config.id2label == dict(enumerate(tiny_cnn_model.config.punct_labels))


@pytest.fixture(scope="module")
def tiny_subword_model(tiny_cnn_tokenizer) -> CnnBiLstmForJointTokenClassification:
    """The family's earlier form: LSTMs and heads over every subword."""
    torch.manual_seed(0)
    return CnnBiLstmForJointTokenClassification(tiny_cnn_config(len(tiny_cnn_tokenizer), **CnnBiLstmConfig.EARLIER_FORM)).eval()


@pytest.mark.parametrize("form", ["word", "subword"])
def test_padding_changes_nothing_of_a_sequence(form, tiny_cnn_model, tiny_subword_model, tiny_cnn_tokenizer):
    model = tiny_cnn_model if form == "word" else tiny_subword_model
    assert model.config.recurrent_unit == form
    words = ["the", "doctor", "asked", "whether", "the", "patient", "had", "pain"]
    alone = _batch(tiny_cnn_tokenizer, [words])
    padded = _batch(tiny_cnn_tokenizer, [words, words * 3])
    n = alone["input_ids"].shape[1]
    assert padded["attention_mask"][0, n:].sum() == 0 and padded["input_ids"].shape[1] > n
    with torch.no_grad():
        single = model(**alone)
        batched = model(**padded)
        # whatever the padding holds
        garbage = padded["input_ids"].clone()
        garbage[0, n:] = 7
        noisy = model(input_ids=garbage, attention_mask=padded["attention_mask"])
    for name in ("punct_logits", "case_logits"):
        torch.testing.assert_close(batched[name][0, :n], single[name][0], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(noisy[name][0, :n], batched[name][0, :n], rtol=0, atol=0)


def test_subword_heads_read_shifted_states_zero_beyond_the_ends(tiny_subword_model, tiny_cnn_tokenizer):
    model = tiny_subword_model
    batch = _batch(tiny_cnn_tokenizer, [["so", "what", "are", "the", "risks"], ["i", "am"]])
    with torch.no_grad():
        states = model.states(batch["input_ids"], batch["attention_mask"])
        output = model(**batch)
    last = int(batch["attention_mask"][1].sum()) - 1
    zeros = torch.zeros_like(states[1, 0])
    punct, case = model.punct_classifier, model.case_classifier
    # punctuation of t reads [s_t ; s_t+1]; casing of t reads [s_t-1 ; s_t]
    torch.testing.assert_close(output.punct_logits[0, 1], punct(torch.cat([states[0, 1], states[0, 2]])))
    torch.testing.assert_close(output.case_logits[0, 1], case(torch.cat([states[0, 0], states[0, 1]])))
    # zero past the last real subword (not the padding's state) and before the first
    torch.testing.assert_close(output.punct_logits[1, last], punct(torch.cat([states[1, last], zeros])))
    torch.testing.assert_close(output.case_logits[1, 0], case(torch.cat([zeros, states[1, 0]])))
    assert states[1, last + 1 :].abs().sum() == 0


def test_word_heads_read_the_next_and_previous_word_between_edge_tokens(tiny_cnn_model, tiny_cnn_tokenizer):
    model = tiny_cnn_model
    texts = [["so", "whatsoever", "unbelievably", "risks"], ["i", "am"]]
    batch = _batch(tiny_cnn_tokenizer, texts)
    with torch.no_grad():
        states, origin, counts = model.word_states(batch["input_ids"], batch["attention_mask"])
        output = model(**batch)
    # <s> w_1 … w_n </s>: two slots more than words, each gathered from its word's first subword
    assert counts.tolist() == [len(texts[0]) + 2, len(texts[1]) + 2]
    for row, words in enumerate(texts):
        word_ids = batch.word_ids(row)
        first = [word_ids.index(index) for index in range(len(words))]
        assert [position - 1 for position in origin[row, 1 : len(words) + 1].tolist()] == first
        punct, case = model.punct_classifier, model.case_classifier
        for index, position in enumerate(first):
            # the mark after word t reads [s_t ; s_t+1] (</s> after the last); its casing [s_t-1 ; s_t] (<s> first)
            slot = index + 1
            torch.testing.assert_close(output.punct_logits[row, position], punct(torch.cat([states[row, slot], states[row, slot + 1]])))
            torch.testing.assert_close(output.case_logits[row, position], case(torch.cat([states[row, slot - 1], states[row, slot]])))
        # the other subwords and the padding read nothing
        others = [position for position in range(batch["input_ids"].shape[1]) if position not in first]
        assert others and output.punct_logits[row, others].abs().sum() == 0 and output.case_logits[row, others].abs().sum() == 0
    # a sequence's states stop at its </s>
    assert states[1, counts[1] :].abs().sum() == 0
    # words split into several subwords, so the LSTMs run over fewer steps than subwords
    assert int(counts[0]) - 2 < int(batch["attention_mask"][0].sum())


def test_word_initial_pieces_come_from_the_tokenizer(tiny_cnn_tokenizer, tiny_cnn_model):
    initial = tiny_cnn_model.word_initial
    for piece, index in tiny_cnn_tokenizer.get_vocab().items():
        assert bool(initial[index]) == (piece.startswith("▁") or piece == "<unk>"), piece
    with pytest.raises(ValueError, match="recurrent_unit='word'"):
        CnnBiLstmForJointTokenClassification(tiny_cnn_config(99, recurrent_unit="subword")).mark_word_initial_pieces(tiny_cnn_tokenizer)
    with pytest.raises(ValueError, match="pieces"):
        CnnBiLstmForJointTokenClassification(tiny_cnn_config(10)).mark_word_initial_pieces(tiny_cnn_tokenizer)


def test_configs_written_before_the_word_model_load_as_the_subword_model(tmp_path):
    CnnBiLstmConfig(vocab_size=50).save_pretrained(tmp_path / "earlier")
    written = json.loads((tmp_path / "earlier" / "config.json").read_text())
    for field in ("recurrent_unit", "dropout_scope", "initialization"):  # what configs written before them lack
        del written[field]
    (tmp_path / "earlier" / "config.json").write_text(json.dumps(written))
    earlier = CnnBiLstmConfig.from_pretrained(tmp_path / "earlier")
    assert (earlier.recurrent_unit, earlier.dropout_scope, earlier.initialization) == ("subword", "all_layers", "normal")
    fresh = CnnBiLstmConfig(vocab_size=50)
    assert (fresh.recurrent_unit, fresh.dropout_scope, fresh.initialization) == ("word", "heads", "kaiming_uniform")
    fresh.save_pretrained(tmp_path)
    assert CnnBiLstmConfig.from_pretrained(tmp_path).recurrent_unit == "word"
    with pytest.raises(ValueError, match="recurrent_unit must be one of word, subword"):
        CnnBiLstmConfig(recurrent_unit="character")


def test_loss_is_casing_plus_alpha_punctuation(tiny_cnn_tokenizer):
    config = tiny_cnn_config(len(tiny_cnn_tokenizer))
    assert config.punct_loss_weight == 0.7 and config.dropout == 0.5 and config.embedding_size == 16
    assert CnnBiLstmConfig().hidden_size == 384 and CnnBiLstmConfig().embedding_size == 100
    torch.manual_seed(0)
    model = CnnBiLstmForJointTokenClassification(config).eval()
    encoding = tokenize_and_align_labels(
        tiny_cnn_tokenizer, [["so", "what", "are", "the", "risks"]], [[0, 0, 0, 0, 3]], [[1, 0, 0, 0, 0]], 64
    )
    batch = {name: torch.tensor(values) for name, values in encoding.items()}
    with torch.no_grad():
        output = model(**batch)
    ce = torch.nn.functional.cross_entropy
    expected = ce(output.case_logits[0], batch["case_labels"][0], ignore_index=IGNORE_INDEX) + 0.7 * ce(
        output.punct_logits[0], batch["punct_labels"][0], ignore_index=IGNORE_INDEX
    )
    torch.testing.assert_close(output.loss, expected)
    # a batch without any casing label (a lowercase source) has a finite loss
    with torch.no_grad():
        unlabelled = model(**{**batch, "case_labels": torch.full_like(batch["case_labels"], IGNORE_INDEX)})
    assert torch.isfinite(unlabelled.loss)


def test_config_refuses_bad_sizes():
    with pytest.raises(ValueError, match="odd"):
        CnnBiLstmConfig(cnn_kernel_size=4)
    with pytest.raises(ValueError, match="dropout"):
        CnnBiLstmConfig(dropout=1.0)
    with pytest.raises(ValueError, match="dropout_scope"):
        CnnBiLstmConfig(dropout_scope="embeddings")
    with pytest.raises(ValueError, match="punct_class_weights"):
        CnnBiLstmConfig(punct_class_weights=[1.0, 2.0])


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_keeps_each_value_with_probability_one_minus_p_and_scales_it(p):
    from hf_punctcase.models.cnn_bilstm.modeling import Dropout

    dropout = Dropout(p).train()
    x = torch.full((400, 500), 3.0)
    torch.manual_seed(0)
    y = dropout(x)
    kept = y != 0
    assert abs(kept.float().mean().item() - (1 - p)) < 0.005
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 3.0 / (1 - p)))
    assert not torch.equal(dropout(x), y)  # a new mask each call
    torch.manual_seed(0)
    assert torch.equal(dropout(x), y)  # drawn from torch's generator: seeded runs repeat
    for dtype in (torch.bfloat16, torch.float32):
        assert dropout(x.to(dtype)).dtype == dtype
    x.requires_grad_(True)
    dropout(x).sum().backward()
    # The gradient passes where the value was kept, scaled alike, and nowhere else.
    torch.testing.assert_close(x.grad.unique(), torch.tensor([0.0, 1 / (1 - p)]))
    assert torch.equal(dropout.eval()(x), x)
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros_like(x))


def test_bf16_autocast_keeps_the_states_bf16_and_the_logits_of_fp32_masking(tiny_cnn_tokenizer):
    """The masks take the LSTMs' dtype under autocast: the same logits as masking in fp32 (a 0/1 mask
    changes no value), with no state turned to fp32 and back between the layers."""
    torch.manual_seed(0)
    model = CnnBiLstmForJointTokenClassification(tiny_cnn_config(len(tiny_cnn_tokenizer))).eval()
    model.mark_word_initial_pieces(tiny_cnn_tokenizer)
    encoding = tiny_cnn_tokenizer(["so what are the risks i am not technical", "ok"], padding=True, return_tensors="pt")
    seen = []
    hooks = [lstm.register_forward_hook(lambda module, inputs, output: seen.append((inputs[0].dtype, output[0].dtype)))
             for lstm in model.modules() if isinstance(lstm, torch.nn.LSTM)]
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(**encoding).punct_logits
    for hook in hooks:
        hook.remove()
    assert seen[0][1] == torch.bfloat16 and all(dtypes == (torch.bfloat16, torch.bfloat16) for dtypes in seen[2:])

    def fp32_masking(self, x, lengths, mask):
        for layer in self.bilstm:
            x = self.layer_dropout(layer(x, lengths)) * mask
        states, _ = self.lstm(x)
        return self.layer_dropout(states) * mask

    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        model._recurrent = fp32_masking.__get__(model)
        assert torch.equal(model(**encoding).punct_logits, logits)


def test_trains_a_few_steps_and_save_load_gives_the_same_outputs(tiny_cnn_tokenizer, tmp_path):
    torch.manual_seed(0)
    model = CnnBiLstmForJointTokenClassification(tiny_cnn_config(len(tiny_cnn_tokenizer), dropout=0.1))
    model.mark_word_initial_pieces(tiny_cnn_tokenizer)
    words = [["so", "what", "are", "the", "risks", "i", "am", "not", "technical"]] * 4
    encoding = tokenize_and_align_labels(tiny_cnn_tokenizer, words, [[0, 0, 0, 0, 3, 0, 0, 0, 2]] * 4, [[1, 0, 0, 0, 0, 1, 0, 0, 0]] * 4, 64)
    batch = {name: torch.tensor(values) for name, values in encoding.items()}
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    model.train()
    for _ in range(8):
        loss = model(**batch).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    model.eval()
    model.save_pretrained(tmp_path)
    tiny_cnn_tokenizer.save_pretrained(tmp_path)
    inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
    for auto_class in (AutoModelForJointTokenClassification, AutoModelForTokenClassification):
        loaded = auto_class.from_pretrained(tmp_path).eval()
        assert isinstance(loaded, CnnBiLstmForJointTokenClassification)
        with torch.no_grad():
            torch.testing.assert_close(loaded(**inputs).punct_logits, model(**inputs).punct_logits, rtol=0, atol=0)
            torch.testing.assert_close(loaded(**inputs).case_logits, model(**inputs).case_logits, rtol=0, atol=0)
    assert hf_punctcase.checkpoints.check_model_dir(tmp_path) == str(tmp_path)


def test_checkpoint_carries_the_remote_code_bundle(tiny_cnn_dir):
    files = set(os.listdir(tiny_cnn_dir))
    config = json.loads(Path(tiny_cnn_dir, "config.json").read_text())
    bundle = bundle_files(CnnBiLstmForJointTokenClassification, config)
    # the shared model pieces come along, flat; no other family's modules do
    assert "common.py" in bundle
    assert not any("joint_transformer" in module for modules in bundle.values() for module in modules)
    assert set(bundle) <= files
    config = json.loads(Path(tiny_cnn_dir, "config.json").read_text())
    assert config["model_type"] == "cnn_bilstm_punct_case"
    assert config["auto_map"]["AutoModelForJointTokenClassification"] == "modeling.CnnBiLstmForJointTokenClassification"


def test_loads_and_restores_without_the_plugin(tiny_cnn_dir, tiny_cnn_model, tmp_path):
    script = f"""
import json, sys, torch
from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline
assert "hf_punctcase" not in sys.modules
model = AutoModelForTokenClassification.from_pretrained({tiny_cnn_dir!r}, trust_remote_code=True).eval()
assert "hf_punctcase" not in sys.modules
ids = torch.tensor([[3, 4, 5, 6, 7]])
with torch.no_grad():
    out = model(input_ids=ids, attention_mask=torch.ones_like(ids))
p = pipeline("punct-case-remote-code", model={tiny_cnn_dir!r}, trust_remote_code=True, dtype=torch.float32)
print(json.dumps({{"type": type(model).__name__, "punct": out.punct_logits.tolist(),
                  "text": p("so what are the risks i am not technical")["text"]}}))
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["type"] == "CnnBiLstmForJointTokenClassification"
    ids = torch.tensor([[3, 4, 5, 6, 7]])
    with torch.no_grad():
        expected = tiny_cnn_model(input_ids=ids, attention_mask=torch.ones_like(ids)).punct_logits
    torch.testing.assert_close(torch.tensor(found["punct"]), expected, rtol=1e-5, atol=1e-6)
    restored = hf_punctcase.load_pipeline(tiny_cnn_dir, dtype=torch.float32)("so what are the risks i am not technical")
    assert found["text"] == restored["text"]


# ---- pipeline ----------------------------------------------------------------------------------


def test_pipeline_restores_text_with_the_family(tiny_cnn_dir):
    p = pipeline("punct-case", model=tiny_cnn_dir, dtype=torch.float32)
    assert isinstance(p.model, CnnBiLstmForJointTokenClassification)
    texts = [
        "so what are the risks i am not technical",
        " ".join(["the doctor asked whether the patient had any pain"] * 30),  # several windows
        "emoji 😀 and a café and ünïcode",
        "",
    ]
    results = p(texts, window_words=40, context_words=10, batch_size=3)
    for text, result in zip(texts, results):
        tokens = result["text"].split()
        assert len(tokens) == len(text.split())
        for given, restored in zip(text.split(), tokens):
            assert restored.rstrip(".,?").lower() == given.lower() or restored.rstrip(".,?") == given
    one = p(["so", "what", "are", "the", "risks"], is_split_into_words=True)
    assert len(one["words"]) == 5


def test_finetune_recipe_trains_the_family_from_scratch(tmp_path):
    corpus = write_punctuated_corpus(tmp_path / "corpus.jsonl")
    tokenizer_dir = train_tokenizer_recipe.main([
        "--output_dir", str(tmp_path / "tok"), "--train_corpora", f"text:{corpus}", "--vocab_size", "150",
    ])

    def train(max_steps: int, *options: str, output: str = "run"):
        return finetune.main([
            "--model_family", "cnn_bilstm", "--tokenizer_name_or_path", str(tokenizer_dir),
            "--config_overrides", "embedding_size=16,hidden_size=16",
            "--output_dir", str(tmp_path / output), "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}",
            "--per_device_train_batch_size", "4", "--learning_rate", "1e-3", "--max_steps", str(max_steps),
            "--eval_strategy", "steps", "--eval_steps", "2", "--save_steps", "2", "--save_total_limit", "1",
            "--load_best_model_at_end", "--metric_for_best_model", "punct_overall_f1",
            "--report_to", "none", "--use_cpu", "--seed", "0", "--disable_tqdm", "true",
            "--window_words", "40", "--max_seq_length", "96", *options,
        ])

    # bf16 as the recipes ask: autocast where the CPU computes in bf16, fp32 (with a warning) where it
    # would be emulated and oneDNN has no bf16 LSTM
    final = train(4, "--bf16", "true")
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["global_step"] == 4 and summary["init"].startswith("none")
    # a model made from scratch carries its tokenizer's training text, which its card lists
    assert summary["tokenizer"]["name"] == "tok" and summary["tokenizer"]["training_data"][0]["corpus"] == "text"
    assert "the user's own text — the tokenizer's training text" in (final / "README.md").read_text()
    # the same command with resume_from_checkpoint "latest" goes on from the newest checkpoint kept
    newest = max(int(path.name.split("-")[1]) for path in (tmp_path / "run").glob("checkpoint-*"))
    resumed = json.loads((train(6, "--resume_from_checkpoint", "latest") / "training_summary.json").read_text())
    assert resumed["global_step"] == 6 and resumed["resumed_from_step"] == newest
    config = json.loads((final / "config.json").read_text())
    assert config["model_type"] == "cnn_bilstm_punct_case" and config["hidden_size"] == 16
    assert config["punct_loss_weight"] == 0.7  # the family's α
    assert config["vocab_size"] == len(AutoTokenizer.from_pretrained(tokenizer_dir))
    assert "CNN-BiLSTM" in (final / "README.md").read_text()
    assert 0.0 <= summary["pipeline_dev"]["text"]["punct_overall_f1"] <= 1.0
    # the paper's model: word-level, its word-initial pieces taken from the tokenizer and saved with it
    assert config["recurrent_unit"] == "word"
    loaded = CnnBiLstmForJointTokenClassification.from_pretrained(final)
    pieces = AutoTokenizer.from_pretrained(tokenizer_dir).get_vocab()
    assert int(loaded.word_initial.sum()) == sum(piece.startswith("▁") or piece == "<unk>" for piece in pieces)
    # the authors' optimiser and schedule: Adam with L2 weight decay, the rate cut on a dev-loss plateau
    authors = train(
        4, "--weight_decay_as_l2", "--weight_decay", "2.5e-5", "--lr_scheduler_type", "reduce_lr_on_plateau",
        "--metric_for_best_model", "loss", output="authors",
    )
    checkpoint = max((tmp_path / "authors").glob("checkpoint-*"), key=lambda path: int(path.name.split("-")[1]))
    group = torch.load(checkpoint / "optimizer.pt", weights_only=True)["param_groups"][0]
    assert group["weight_decay"] == 2.5e-5 and not group.get("decoupled_weight_decay", False)
    # ReduceLROnPlateau's state, not a LambdaLR's
    assert {"patience", "num_bad_epochs", "best"} <= set(torch.load(checkpoint / "scheduler.pt", weights_only=False))
    assert (authors / "config.json").is_file()
    # and it goes on training as a checkpoint of its family
    with pytest.raises(ValueError, match="cnn_bilstm_punct_case checkpoint"):
        finetune.main([
            "--model_name_or_path", str(final), "--model_family", "joint_transformer", "--output_dir", str(tmp_path / "x"),
            "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}", "--max_steps", "1",
            "--report_to", "none", "--use_cpu",
        ])


def test_training_arguments_check_the_family():
    from hf_punctcase.training import ModelArguments

    with pytest.raises(ValueError, match="tokenizer_name_or_path"):
        ModelArguments(model_family="cnn_bilstm")
    with pytest.raises(ValueError, match="joint transformer"):
        ModelArguments(model_family="cnn_bilstm", tokenizer_name_or_path="tok", lora_r=8)
    with pytest.raises(ValueError, match="model_family"):
        ModelArguments(model_family="rnn")
    assert tiny_corpus_texts()[0][0].isupper()
