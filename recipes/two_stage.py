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
to use, with its card (which lists every stage). See hf_punctcase.training.two_stage.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from hf_punctcase.training import load_config, run_recipe, run_stages, stage_names


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["-h"], ["--help"]):
        print(__doc__)
        raise SystemExit(0)
    if len(argv) != 1:
        raise SystemExit("usage: two_stage.py CONFIG.yaml")
    config = load_config(argv[0])
    try:
        stage_names(config)
    except ValueError as error:
        raise SystemExit(f"{argv[0]}: {error}") from None
    return run_stages(config, command=f"python recipes/two_stage.py {argv[0]}")


if __name__ == "__main__":
    sys.exit(run_recipe(main))
