#!/usr/bin/env python
"""Two-stage finetuning (Sunkara et al. 2021): stage 1 on external text sampled close to the target
domain, stage 2 on in-domain data, starting from stage 1's final weights.

    python recipes/sample_external.py --in_domain swda --external ted dailydialog masc nltk fortunes \
        --output runs/sampled/swda_external.jsonl
    python recipes/two_stage.py recipes/configs/two_stage_swda.yaml

The YAML file has ``output_dir``, ``common`` (finetune.py arguments for every stage) and ``stage1``,
``stage2``, ... (arguments of each stage, overriding ``common``); each stage after the first starts
from the previous one's final weights. ``extends: OTHER.yaml`` (a path relative to the file) takes
another config and changes only what this one names: top-level values are replaced, ``common`` and the
stages are merged key by key. Stage outputs: OUTPUT/stageK/final; the last one is the model
to use, with its card (which lists every stage).
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

import yaml
from transformers import HfArgumentParser, TrainingArguments

from finetune import DataArguments, ModelArguments, run


def load_config(path: str | Path) -> dict:
    """A recipe config, with the config it ``extends`` (if any) under it."""
    path = Path(path)
    config = yaml.safe_load(path.read_text())
    base = config.pop("extends", None)
    if base is None:
        return config
    merged = load_config(path.parent / base)
    for key, value in config.items():
        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
    return merged


def stage_arguments(config: dict, stage: str, output_dir: Path, init: Path | None):
    values = {**config.get("common", {}), **config[stage], "output_dir": str(output_dir / stage)}
    if init is not None:
        values["model_name_or_path"] = str(init)
        values.pop("encoder", None)
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    return parser.parse_dict(values)


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: two_stage.py CONFIG.yaml")
    config = load_config(argv[0])
    missing = {"output_dir", "stage1", "stage2"} - set(config)
    if missing:
        raise SystemExit(f"{argv[0]} lacks {sorted(missing)}")
    stages = sorted((k for k in config if re.fullmatch(r"stage\d+", k)), key=lambda k: int(k[5:]))
    if stages != [f"stage{k}" for k in range(1, len(stages) + 1)]:
        raise SystemExit(f"{argv[0]}: stages must be stage1, stage2, ... without gaps, got {stages}")
    output_dir = Path(config["output_dir"])
    command = f"python recipes/two_stage.py {argv[0]}"
    final = None
    for k, stage in enumerate(stages, start=1):
        final = run(*stage_arguments(config, stage, output_dir, final), command=command + f" (stage {k})")
    return final


if __name__ == "__main__":
    main()
