"""Every recipe config parses with the recipe its usage line names, so a renamed or removed flag breaks a
test rather than the one command that reproduces a published model: the configs a user starts from
(recipes/configs/) and the experiments' configs beside the research record (docs/research/configs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import yaml
from transformers import HfArgumentParser, TrainingArguments

from hf_punctcase.training import (
    DataArguments,
    DistillationArguments,
    MlmArguments,
    ModelArguments,
    load_config,
    parse_recipe_args,
    two_stage,
)

ROOT = Path(__file__).resolve().parents[1]

SINGLE_RUN_ARGUMENTS = {
    "finetune": (ModelArguments, DataArguments, TrainingArguments),
    "distill": (ModelArguments, DataArguments, DistillationArguments, TrainingArguments),
    "mlm_adapt": (MlmArguments, TrainingArguments),
}
# Configs of a recipe are those with an output_dir; the accelerate config is accelerate's own.
CONFIG_DIRS = (ROOT / "recipes" / "configs", ROOT / "docs" / "research" / "configs")
CONFIGS = sorted(
    p for folder in CONFIG_DIRS for p in folder.rglob("*.yaml") if "output_dir" in yaml.safe_load(p.read_text())
)


def test_the_published_models_have_configs():
    recipes = CONFIG_DIRS[0]
    # A user's starting points, each alone at the top; the shipped models' stages in a folder each.
    assert {p.stem for p in CONFIGS if p.parent == recipes} == {"finetune_own_data", "mlm_speech", "two_stage_swda"}
    assert {p.stem for p in CONFIGS if p.parent == recipes / "default"} >= {"teacher_mpnet6", "default_cpu_pass"}
    assert {p.stem for p in CONFIGS if p.parent == recipes / "on_device"} >= {"on_device_cnn_bilstm_h256"}
    assert {p.stem for p in CONFIGS if p.parent == CONFIG_DIRS[1]} >= {"default", "student_distill", "default_mlm2k"}


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_config_parses_with_the_recipe_its_usage_line_names(config: Path):
    path = config.relative_to(ROOT).as_posix()
    usage = re.search(rf"python recipes/(\w+)\.py {re.escape(path)}", config.read_text())
    assert usage, f"{path} has no '# python recipes/RECIPE.py {path}' line"
    recipe = usage.group(1)
    if recipe == "two_stage":
        values = load_config(config)
        stages = [key for key in values if re.fullmatch(r"stage\d+", key)]
        assert {"stage1", "stage2"} <= set(stages)
        for stage in stages:
            *_, training_args = two_stage.stage_arguments(values, stage, Path(values["output_dir"]), None)
            assert training_args.output_dir == str(Path(values["output_dir"]) / stage)
        return
    values = yaml.safe_load(config.read_text())
    merged = load_config(config)
    if merged.get("bf16") and merged.get("use_cpu") is False and not torch.cuda.is_available():
        # A GPU config in bf16: TrainingArguments refuses bf16 on a machine without one when it parses,
        # so here it is parsed for the CPU; every other value is checked as written.
        parsed = HfArgumentParser(SINGLE_RUN_ARGUMENTS[recipe]).parse_dict({**merged, "use_cpu": True})
    else:
        parsed = parse_recipe_args(SINGLE_RUN_ARGUMENTS[recipe], [str(config)])
    assert parsed[-1].output_dir == values["output_dir"]


def test_a_config_that_extends_another_changes_only_what_it_names(tmp_path: Path):
    (tmp_path / "base.yaml").write_text(
        "output_dir: runs/base\ncommon: {learning_rate: 1.0e-4, seed: 1}\n"
        "stage1: {encoder: minilm, max_steps: 10}\nstage2: {max_steps: 5}\n"
    )
    (tmp_path / "child.yaml").write_text("extends: base.yaml\noutput_dir: runs/child\nstage1: {encoder: runs/mlm/final}\n")
    assert load_config(tmp_path / "child.yaml") == {
        "output_dir": "runs/child",
        "common": {"learning_rate": 1.0e-4, "seed": 1},
        "stage1": {"encoder": "runs/mlm/final", "max_steps": 10},
        "stage2": {"max_steps": 5},
    }


def test_a_single_run_config_that_extends_another_parses_with_the_others_values(tmp_path: Path):
    (tmp_path / "base.yaml").write_text("output_dir: runs/base\nmodel_family: cnn_bilstm\ntokenizer_name_or_path: tok\nmax_steps: 10\nseed: 1\n")
    (tmp_path / "child.yaml").write_text("extends: base.yaml\noutput_dir: runs/child\nconfig_overrides: hidden_size=256\n")
    model_args, _, training_args = parse_recipe_args(SINGLE_RUN_ARGUMENTS["finetune"], [str(tmp_path / "child.yaml")])
    assert (model_args.model_family, model_args.config_overrides) == ("cnn_bilstm", "hidden_size=256")
    assert (training_args.output_dir, training_args.max_steps, training_args.seed) == ("runs/child", 10, 1)


def test_recipes_are_command_lines_over_the_package():
    """The training library lives in hf_punctcase.training: no recipe reaches into another by sys.path."""
    for recipe in sorted((ROOT / "recipes").glob("*.py")):
        text = recipe.read_text()
        assert "sys.path" not in text, recipe.name
        assert not re.search(r"^\s*(from|import) (finetune|distill|two_stage|mlm_adapt)\b", text, re.M), recipe.name


def test_a_two_stage_config_without_two_stages_or_with_a_gap_is_refused():
    with pytest.raises(ValueError, match="lacks"):
        two_stage.stage_names({"output_dir": "x", "stage1": {}})
    with pytest.raises(ValueError, match="without gaps"):
        two_stage.stage_names({"output_dir": "x", "stage1": {}, "stage2": {}, "stage4": {}})
    assert two_stage.stage_names({"output_dir": "x", "stage2": {}, "stage1": {}, "stage3": {}}) == ["stage1", "stage2", "stage3"]
