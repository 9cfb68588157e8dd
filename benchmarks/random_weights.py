#!/usr/bin/env python
"""An embedded model's architecture with weights drawn at random: its config (every head, the command
head's own layers), its tokenizer and fp32 weights from a fixed seed, in a folder that loads as any
checkpoint. For speed figures where the trained weights cannot go: a machine reached only through a
64 MiB working tree (the default's weights are 74 MB, the accurate model's 110 MB) or without torchao
(which reads their int8 storage). Words/s do not depend on the weights' values; labels do, so nothing
but speed is measured on such a folder.

    python benchmarks/random_weights.py --model default --out gpu_data/models/default
    python benchmarks/speed.py --model gpu_data/models/default --device cuda --stock --interleave
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

#: The files of an embedded folder the copy takes besides the config (the weights are drawn afresh).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["default", "accurate"], required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch

    from hf_punctcase import JointTokenClassificationConfig, JointTokenClassificationModel
    from hf_punctcase.atomic_files import atomic_directory
    from hf_punctcase.embedded import EMBEDDED_MODELS

    source = EMBEDDED_MODELS[args.model]
    config = json.loads((source / "config.json").read_text())
    config.pop("quantization_config", None)  # plain float weights: nothing to read them back from
    config["dtype"] = "float32"
    torch.manual_seed(args.seed)
    model = JointTokenClassificationModel(JointTokenClassificationConfig.from_dict(config)).eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_directory(args.out, overwrite=True) as staging:
        model.save_pretrained(staging)
        for name in TOKENIZER_FILES:
            if (source / name).is_file():
                shutil.copyfile(source / name, staging / name)
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{args.out}: the {args.model} model's architecture, {parameters:,} parameters drawn at random (seed {args.seed})")


if __name__ == "__main__":
    main()
