"""Two-stage (or more) finetuning from one YAML config (Sunkara et al. 2021): stage 1 on external text
sampled close to the target domain, stage 2 on in-domain data, starting from stage 1's final weights.

The config has ``output_dir``, ``common`` (:func:`~hf_punctcase.training.run` arguments for every
stage) and ``stage1``, ``stage2``, ... (the arguments of each stage, overriding ``common``); each stage
after the first starts from the previous one's final weights. ``extends: OTHER.yaml`` (a path relative
to the file) takes another config and changes only what this one names: top-level values are
replaced, ``common`` and the stages are merged key by key. Stage outputs: OUTPUT/stageK/final; the
last one is the model to use, with its card (which lists every stage).
"""

from __future__ import annotations

import re
from pathlib import Path

from transformers import HfArgumentParser, TrainingArguments

from .arguments import DataArguments, ModelArguments
from .run import run

_STAGE = re.compile(r"stage\d+")


def stage_names(config: dict) -> list[str]:
    """The config's stages in order (stage1, stage2, ...); ValueError for a config that lacks
    ``output_dir`` or two stages, or whose stages skip a number."""
    missing = {"output_dir", "stage1", "stage2"} - set(config)
    if missing:
        raise ValueError(f"lacks {sorted(missing)}")
    stages = sorted((k for k in config if _STAGE.fullmatch(k)), key=lambda k: int(k[5:]))
    if stages != [f"stage{k}" for k in range(1, len(stages) + 1)]:
        raise ValueError(f"stages must be stage1, stage2, ... without gaps, got {stages}")
    return stages


def stage_arguments(
    config: dict, stage: str, output_dir: Path, init: Path | None
) -> tuple[ModelArguments, DataArguments, TrainingArguments]:
    """The run arguments of one stage: ``common`` overridden by the stage's own, its output in
    OUTPUT/STAGE, and the previous stage's final weights (``init``) in place of any encoder."""
    values = {**config.get("common", {}), **config[stage], "output_dir": str(output_dir / stage)}
    if init is not None:
        values["model_name_or_path"] = str(init)
        values.pop("encoder", None)
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    return parser.parse_dict(values)


def run_stages(config: dict, command: str = "") -> Path:
    """Train every stage of a config in turn; returns the last stage's final folder."""
    output_dir = Path(config["output_dir"])
    final = None
    for k, stage in enumerate(stage_names(config), start=1):
        final = run(*stage_arguments(config, stage, output_dir, final), command=f"{command} (stage {k})")
    return final
