#!/usr/bin/env python
"""Two-stage finetuning (Sunkara et al. 2021): stage 1 on external text sampled close to the target
domain, stage 2 on in-domain data, starting from stage 1's final weights.

    python recipes/sample_external.py --in_domain swda --external ted dailydialog masc nltk fortunes \
        --output runs/sampled/swda_external.jsonl
    python recipes/two_stage.py recipes/configs/two_stage_swda.yaml

The YAML file has ``output_dir``, ``common`` (finetune.py arguments for both stages) and ``stage1`` /
``stage2`` (arguments of each stage, overriding ``common``). Stage outputs: OUTPUT/stage1/final and
OUTPUT/stage2/final (the model to use, with its card).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import yaml
from transformers import HfArgumentParser, TrainingArguments

from finetune import DataArguments, ModelArguments, run


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
    config = yaml.safe_load(Path(argv[0]).read_text())
    missing = {"output_dir", "stage1", "stage2"} - set(config)
    if missing:
        raise SystemExit(f"{argv[0]} lacks {sorted(missing)}")
    output_dir = Path(config["output_dir"])
    command = f"python recipes/two_stage.py {argv[0]}"
    stage1 = run(*stage_arguments(config, "stage1", output_dir, None), command=command + " (stage 1)")
    return run(*stage_arguments(config, "stage2", output_dir, stage1), command=command + " (stage 2)")


if __name__ == "__main__":
    main()
