#!/usr/bin/env python
"""Adapt an encoder to a domain by masked-LM training on punctuated target-domain text.

    # domain adaptation (FT): 15% random masking
    python recipes/mlm_adapt.py --output_dir runs/mlm_medical --corpora mts_dialog aci_bench mtsamples \
        --masking random --max_steps 300
    # task adaptation (PM): of the masked tokens, half are . , ?
    python recipes/mlm_adapt.py --output_dir runs/pm_medical --corpora mts_dialog aci_bench mtsamples \
        --masking punctuation --max_steps 300
    python recipes/finetune.py --encoder runs/pm_medical/final ...

Text: the train splits of the given corpora, rendered with their punctuation and casing (the
encoders are uncased: casing only reaches them through the tokenizer's lowercasing), plus
``--unlabeled ted_unpunctuated`` speech captions if asked. The text is tokenised and packed into
blocks of ``--block_size`` tokens. OUTPUT/final is an encoder directory (MLM head included) with the
tokenizer and mlm_summary.json (the loss curve). See hf_punctcase.training.mlm.run_mlm_adaptation.
"""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path

from hf_punctcase.training import MlmArguments, parse_recipe_args, run_mlm_adaptation, run_recipe

# After the plugin, which imports torchao before transformers does, without its CPU-install warnings.
from transformers import TrainingArguments  # noqa: E402, I001


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    args, training_args = parse_recipe_args((MlmArguments, TrainingArguments), argv)
    return run_mlm_adaptation(args, training_args, command="python recipes/mlm_adapt.py " + shlex.join(argv))


if __name__ == "__main__":
    sys.exit(run_recipe(main))
