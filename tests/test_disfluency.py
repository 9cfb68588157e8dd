"""The disfluency head: config, the three head dependencies, training, the pipeline's ``disfluent``
fields and ``remove_disfluencies``, the CLI switch, and the scores."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
import torch
from conftest import VOCABULARY, run_cli, tiny_config
from transformers import Trainer, TrainingArguments
from transformers.trainer_utils import EvalPrediction

import hf_punctcase
from hf_punctcase.options.disfluency import FILLER_THRESHOLD, is_filler
from hf_punctcase.evaluation import compute_metrics_for, core_words, removal_figures, score_task
from hf_punctcase.options import DISFLUENCY
from hf_punctcase.tasks import tasks_of
from hf_punctcase.labels import DISFLUENCY_LABELS, IGNORE_INDEX, LabelScheme
from hf_punctcase.metrics import PunctCase
from hf_punctcase.models.joint_transformer.configuration import HEAD_DEPENDENCY_CHOICES
from hf_punctcase.options.disfluency import merge_fluent
from hf_punctcase.tokenization import tokenize_and_align_labels
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification

SCHEME = LabelScheme()
FILLERS = ("uh", "um")


def disfluent_config(mode: str = "none", **kwargs):
    return tiny_config(disfluency_labels=list(DISFLUENCY_LABELS), head_dependency=mode, **kwargs)


def filler_examples(rng: random.Random, num: int, num_words: int = 24) -> list[tuple[list[str], list[int], list[int], list[int]]]:
    """Words with "uh"/"um" inserted at random (DISFLUENT), a period every 8 fluent words, lowercase."""
    examples = []
    for _ in range(num):
        words, punct, case, disfl = [], [], [], []
        for i in range(num_words):
            if rng.random() < 0.25:
                words.append(rng.choice(FILLERS))
                punct.append(0), case.append(0), disfl.append(1)
            words.append(rng.choice(VOCABULARY))
            punct.append(SCHEME.punct2id["PERIOD"] if i % 8 == 7 else 0)
            case.append(0)
            disfl.append(0)
        examples.append((words, punct, case, disfl))
    return examples


def batch_of(tokenizer, examples) -> dict[str, torch.Tensor]:
    return DataCollatorForJointTokenClassification(tokenizer)(features_of(tokenizer, examples))


def features_of(tokenizer, examples) -> list[dict]:
    """Tokenised examples with the three label columns (the disfluency labels on first subwords)."""
    encoded = tokenize_and_align_labels(
        tokenizer, [e[0] for e in examples], [e[1] for e in examples], [e[2] for e in examples], 128
    )
    features = []
    for i, example in enumerate(examples):
        row = {key: encoded[key][i] for key in encoded}
        word_ids = encoded.word_ids(i)
        previous, labels = None, []
        for word_id in word_ids:
            labels.append(IGNORE_INDEX if word_id is None or word_id == previous else example[3][word_id])
            previous = word_id
        row["disfl_labels"] = labels
        features.append(row)
    return features


def train_filler_model(tokenizer, mode: str = "punct_to_disfl", steps: int = 120) -> hf_punctcase.JointTokenClassificationModel:
    torch.manual_seed(0)
    rng = random.Random(0)
    model = hf_punctcase.JointTokenClassificationModel(disfluent_config(mode))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        loss = model(**batch_of(tokenizer, filler_examples(rng, 8))).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return model.eval()


@pytest.fixture(scope="module")
def filler_model_dir(tmp_path_factory, tiny_tokenizer) -> str:
    path = tmp_path_factory.mktemp("filler_model")
    train_filler_model(tiny_tokenizer).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def filler_pipeline(filler_model_dir):
    return hf_punctcase.load_pipeline(filler_model_dir, dtype=torch.float32)


# ---- config and model ------------------------------------------------------------------------------


def test_config_checks_the_head_options():
    with pytest.raises(ValueError, match="head_dependency must be one of"):
        disfluent_config("both_ways")
    with pytest.raises(ValueError, match="needs the disfluency head"):
        tiny_config(head_dependency="punct_to_disfl")
    with pytest.raises(ValueError, match="disfluency_labels must be"):
        tiny_config(disfluency_labels=["YES", "NO"])
    with pytest.raises(ValueError, match="disfluency_loss_weight must be ≥ 0"):
        disfluent_config(disfluency_loss_weight=-1)
    assert DISFLUENCY not in tasks_of(tiny_config()) and DISFLUENCY in tasks_of(disfluent_config())


@pytest.mark.parametrize("mode", HEAD_DEPENDENCY_CHOICES)
def test_each_head_dependency_trains(mode, tiny_tokenizer):
    """A few steps of each mode on a tiny model: the loss falls, and every head has its logits."""
    torch.manual_seed(0)
    rng = random.Random(1)
    model = hf_punctcase.JointTokenClassificationModel(disfluent_config(mode))
    batch = batch_of(tiny_tokenizer, filler_examples(rng, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(25):
        output = model(**batch)
        losses.append(output.loss.item())
        output.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert output.disfl_logits.shape == (*batch["input_ids"].shape, 2)
    assert losses[-1] < 0.5 * losses[0]
    assert (model.head_attention is None) == (mode == "none")


def test_disfluency_loss_needs_the_head(tiny_tokenizer):
    model = hf_punctcase.JointTokenClassificationModel(tiny_config())
    batch = batch_of(tiny_tokenizer, filler_examples(random.Random(2), 2))
    with pytest.raises(ValueError, match="no disfluency head"):
        model(**batch)


@pytest.mark.parametrize("mode", ["disfl_to_punct", "punct_to_disfl"])
def test_a_head_added_to_a_checkpoint_starts_from_its_predictions(mode, tiny_model_dir, tiny_model):
    """The attention's final layer starts as the identity on the logits: adding the head does not
    change the punctuation and casing a trained checkpoint predicts."""
    config = hf_punctcase.JointTokenClassificationConfig.from_pretrained(tiny_model_dir)
    config.disfluency_labels, config.head_dependency = list(DISFLUENCY_LABELS), mode
    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(tiny_model_dir, config=config).eval()
    ids = torch.tensor([[2, 17, 40, 33, 3]])
    with torch.no_grad():
        before, after = tiny_model(input_ids=ids), model(input_ids=ids)
    torch.testing.assert_close(after.punct_logits, before.punct_logits)
    torch.testing.assert_close(after.case_logits, before.case_logits)


def test_trainer_default_label_names_leave_out_the_optional_head(tiny_tokenizer, tmp_path):
    """transformers' Trainer takes every *label* argument of forward as a label: disfl_labels is
    keyword-only, so that batches without it still give an eval loss; with label_names it is scored."""
    rng = random.Random(3)
    rows = features_of(tiny_tokenizer, filler_examples(rng, 16))
    model = hf_punctcase.JointTokenClassificationModel(disfluent_config("none"))
    common = dict(output_dir=str(tmp_path), report_to="none", use_cpu=True, per_device_eval_batch_size=8)
    plain = Trainer(model=model, args=TrainingArguments(**common), eval_dataset=rows,
                    data_collator=DataCollatorForJointTokenClassification(tiny_tokenizer), compute_metrics=compute_metrics_for(model.config))
    assert "eval_loss" in plain.evaluate()
    scored = Trainer(
        model=model, args=TrainingArguments(**common, label_names=["punct_labels", "case_labels", "disfl_labels"]),
        eval_dataset=rows, data_collator=DataCollatorForJointTokenClassification(tiny_tokenizer),
        compute_metrics=compute_metrics_for(model.config),
    )
    metrics = scored.evaluate()
    assert "eval_loss" in metrics and "eval_disfl_overall_f1" in metrics


# ---- scores ------------------------------------------------------------------------------------------


def test_metric_scores_disfluent_words():
    scores = score_task(DISFLUENCY, ["FLUENT", "DISFLUENT", "DISFLUENT", "FLUENT"], ["FLUENT", "DISFLUENT", "FLUENT", "DISFLUENT"])
    assert scores["disfl_overall_precision"] == 0.5 and scores["disfl_overall_recall"] == 0.5
    metric = PunctCase(config_name="disfluency")
    result = metric.compute(predictions=[[0, 1, 1]], references=[[0, 1, 0]], label_names=list(DISFLUENCY_LABELS))
    assert result["overall_precision"] == 0.5 and result["overall_recall"] == 1.0
    # FLUENT / DISFLUENT strings pick FLUENT as the null class in the default configuration too.
    assert PunctCase().compute(predictions=[["DISFLUENT", "FLUENT"]], references=[["DISFLUENT", "FLUENT"]])["overall_f1"] == 1.0


def test_compute_metrics_scores_the_third_head():
    punct = np.zeros((1, 4, 4)); case = np.zeros((1, 4, 4)); disfl = np.zeros((1, 4, 2))
    disfl[0, :, 1] = [5, -5, 5, -5]  # predicted DISFLUENT at 0 and 2
    labels = np.array([[0, 0, 0, 0]])
    prediction = EvalPrediction(predictions=(punct, case, disfl), label_ids=(labels, labels, np.array([[1, 0, 0, IGNORE_INDEX]])))
    scores = compute_metrics_for(disfluent_config())(prediction)
    assert scores["disfl_overall_precision"] == 0.5 and scores["disfl_overall_recall"] == 1.0


# ---- pipeline ------------------------------------------------------------------------------------------


def test_words_carry_disfluency_only_with_the_head(filler_pipeline, tiny_pipeline):
    result = filler_pipeline("so uh what are the um risks")
    assert [w["disfluent"] for w in result["words"]] == [False, True, False, False, False, True, False]
    assert all(0.0 <= w["disfluency_score"] <= 1.0 for w in result["words"])
    assert len(result["text"].split()) == 7  # without the switch, one token per input word
    plain = tiny_pipeline("so uh what are the um risks")
    assert "disfluent" not in plain["words"][0]
    with pytest.raises(ValueError, match="needs a model with a disfluency head"):
        tiny_pipeline("so uh what", remove_disfluencies=True)


def test_remove_disfluencies_keeps_every_fluent_word_in_order(filler_pipeline):
    rng = random.Random(4)
    texts = [" ".join(words) for words, *_ in filler_examples(rng, 6, num_words=30)]
    results = filler_pipeline(texts, remove_disfluencies=True, return_sentences=True)
    for text, result in zip(texts, results):
        words = text.split()
        assert len(result["words"]) == len(words)
        kept = [w for w, entry in zip(words, result["words"]) if not entry["removed"]]
        assert [token.rstrip(".,?").lower() for token in result["text"].split()] == kept
        assert all(entry["removed"] == entry["disfluent"] for entry in result["words"])
        assert {w for w, entry in zip(words, result["words"]) if entry["removed"]} <= set(FILLERS)
        assert sum(entry["removed"] for entry in result["words"]) >= 0.9 * sum(w in FILLERS for w in words)
        for entry in result["words"]:
            if not entry["removed"]:
                assert result["text"][entry["start_char"] : entry["end_char"]] == entry["word"]
        for sentence in result["sentences"]:
            assert not result["words"][sentence["first_word"]]["removed"]
            assert not result["words"][sentence["last_word"]]["removed"]
    # The kept words are punctuated and cased as a transcript of their own: the same as restoring them.
    single = filler_pipeline(texts[0], remove_disfluencies=True)
    kept = [w for w, entry in zip(texts[0].split(), single["words"]) if not entry["removed"]]
    assert single["text"] == filler_pipeline(" ".join(kept))["text"] == results[0]["text"]


def test_remove_disfluencies_with_timed_words_and_word_lists(filler_pipeline):
    timed = [{"word": w, "start": i * 0.5, "end": i * 0.5 + 0.4} for i, w in enumerate("uh so we went um home".split())]
    result = filler_pipeline(timed, is_split_into_words=True, remove_disfluencies=True)
    assert [entry["start"] for entry in result["words"]] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    removed = [entry["word"] for entry in result["words"] if entry["removed"]]
    assert removed == ["uh", "um"]
    assert result["words"][0]["start_char"] is None and result["words"][0]["punct_score"] is None
    words = filler_pipeline("uh so we went um home".split(), is_split_into_words=True, remove_disfluencies=True)
    assert words["text"] == result["text"]
    everything = filler_pipeline("uh um uh", remove_disfluencies=True)
    assert everything["text"] == "" and all(entry["removed"] for entry in everything["words"])
    assert filler_pipeline([], remove_disfluencies=True) == []


def test_merge_fluent_maps_sentences_to_input_words():
    first = {"words": [{"word": w, "disfluent": d, "disfluency_score": float(d)} for w, d in
                       (("Uh,", True), ("So.", False), ("Um", True), ("Yes.", False))]}
    fluent = {
        "text": "So. Yes.",
        "words": [{"word": "So.", "punctuation": "PERIOD"}, {"word": "Yes.", "punctuation": "PERIOD"}],
        "sentences": [{"text": "So.", "first_word": 0, "last_word": 0}, {"text": "Yes.", "first_word": 1, "last_word": 1}],
    }
    merged = merge_fluent(first, fluent, [1, 3], ["uh", "so", "um", "yes"])
    assert [s["first_word"] for s in merged["sentences"]] == [1, 3]
    assert [w["word"] for w in merged["words"]] == ["uh", "So.", "um", "Yes."]
    assert [w["removed"] for w in merged["words"]] == [True, False, True, False]


def test_cli_remove_disfluencies(monkeypatch, capsys, filler_model_dir, tiny_model_dir):
    code, out, _ = run_cli(monkeypatch, capsys, ["restore", "--model", filler_model_dir, "--dtype", "float32",
                                                 "--remove-disfluencies", "--json", "so uh we went home"])
    assert code == 0
    result = json.loads(out)
    assert [entry["removed"] for entry in result["words"]] == [False, True, False, False, False]
    assert len(result["text"].split()) == 4
    code, _, err = run_cli(monkeypatch, capsys, ["restore", "--model", tiny_model_dir, "--remove-disfluencies", "so uh"])
    assert code != 0 and "needs a model with a disfluency head" in err


def test_on_device_runtime_refuses_removal_without_the_head():
    from hf_punctcase.runtime import OnDeviceRestorer

    restorer = OnDeviceRestorer()
    assert DISFLUENCY not in restorer.model_tasks
    with pytest.raises(ValueError, match="needs a model with a disfluency head"):
        restorer("so uh we went home", remove_disfluencies=True)


def test_onnx_export_carries_the_head(filler_model_dir, filler_pipeline, tmp_path):
    """The export writes disfl_logits; the pipeline's ONNX backend and the torch-free runtime remove
    the same words as the torch model."""
    pytest.importorskip("onnx")
    from hf_punctcase.export.onnx import export_onnx
    from hf_punctcase.runtime import OnDeviceRestorer

    export_onnx(filler_model_dir, tmp_path / "onnx")
    text = "so uh what are the um risks i am not technical"
    expected = filler_pipeline(text, remove_disfluencies=True)
    runtime = OnDeviceRestorer(tmp_path / "onnx")
    assert DISFLUENCY in runtime.model_tasks
    for restorer in (runtime, hf_punctcase.load_pipeline(str(tmp_path / "onnx"))):
        result = restorer(text, remove_disfluencies=True)
        assert [w["removed"] for w in result["words"]] == [w["removed"] for w in expected["words"]]
        assert result["text"] == expected["text"]


def test_freeze_except_trains_only_the_named_parameters(tiny_tokenizer):
    from hf_punctcase.training.model import freeze_except

    model = hf_punctcase.JointTokenClassificationModel(disfluent_config("punct_to_disfl"))
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    trained = freeze_except(model, ["disfl_classifier", "head_attention"])
    assert trained == sum(p.numel() for n, p in model.named_parameters() if n.startswith(("disfl_classifier", "head_attention")))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    model(**batch_of(tiny_tokenizer, filler_examples(random.Random(5), 4))).loss.backward()
    optimizer.step()
    for name, parameter in model.named_parameters():
        named = name.startswith(("disfl_classifier", "head_attention"))
        assert parameter.requires_grad == named, name
        if not named:
            assert torch.equal(parameter, before[name]), name
    assert not torch.equal(model.disfl_classifier.weight, before["disfl_classifier.weight"])
    with pytest.raises(ValueError, match="names no parameter"):
        freeze_except(model, ["disfl_clasifier"])


def test_card_names_the_disfluency_head():
    from hf_punctcase.cards.facts import architecture_of

    config = disfluent_config("punct_to_disfl").to_dict()
    assert "disfluency head" in architecture_of(config) and "attention between the heads" in architecture_of(config)
    assert "disfluency" not in architecture_of(tiny_config().to_dict())


def test_remove_disfluencies_removes_what_exceeds_the_models_threshold(filler_model_dir, tmp_path):
    text = " ".join(filler_examples(random.Random(9), 1, num_words=60)[0][0])
    scores = [entry["disfluency_score"] for entry in hf_punctcase.load_pipeline(filler_model_dir, dtype=torch.float32)(text)["words"]]
    # A threshold above half the words the model marks disfluent: fewer words go.
    marked = sorted(score for score in scores if score > 0.5)
    threshold = marked[len(marked) // 2]
    assert [score > threshold for score in scores] != [score > 0.5 for score in scores]
    folder = tmp_path / "with_threshold"
    shutil.copytree(filler_model_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "disfluency_threshold": threshold}))
    result = hf_punctcase.load_pipeline(str(folder), dtype=torch.float32)(text, remove_disfluencies=True)
    # A filled pause goes at even odds (FILLER_THRESHOLD) whatever the model's threshold.
    expected = [score > threshold or (is_filler(word) and score > FILLER_THRESHOLD) for word, score in zip(text.split(), scores)]
    assert [entry["removed"] for entry in result["words"]] == expected


def test_core_words_leave_out_fillers_discourse_markers_and_words_said_again_soon():
    words = "um so you know i had very itchy skin very sore skin and uh a fever".split()
    core = dict(enumerate(core_words(words)))
    # The first "very" and "skin" are said again three words on; the second ones are the words kept.
    assert [w for i, w in enumerate(words) if core[i]] == "i had itchy very sore skin and a fever".split()
    figures = removal_figures([words], [[w in ("um", "sore") for w in words]])
    assert figures["core_words"] == 9 and figures["core_words_kept"] == 8 / 9
    assert figures["fillers"] == 2 and figures["fillers_removed"] == 0.5


def test_removal_figures_against_an_annotation_count_only_the_core_words_the_annotators_keep():
    # "i was we went": a restart that repeats no word, so "was" is a core word the annotators remove.
    words = "i was we went home um".split()
    annotated = [w in ("i", "was", "um") for w in words]
    agreeing = removal_figures([words], [annotated], [annotated])
    assert agreeing["core_words_kept"] == 3 / 5 and agreeing["annotated_core_words_kept"] == 1.0
    losing_home = removal_figures([words], [[w in ("was", "home") for w in words]], [annotated])
    assert losing_home["annotated_core_words"] == 3 and losing_home["annotated_core_words_kept"] == 2 / 3
    assert "annotated_core_words_kept" not in removal_figures([words], [annotated])
    with pytest.raises(RuntimeError, match="2 annotated for 6 words"):
        removal_figures([words], [annotated], [[True, False]])
    with pytest.raises(RuntimeError, match="other than the 1 documents"):
        removal_figures([words], [annotated], [annotated, annotated])
