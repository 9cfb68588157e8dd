#!/usr/bin/env python
"""Distil a joint teacher (e.g. all-mpnet-base-v2) into a small student with the Trainer.

    python recipes/distill.py --teacher runs/teacher/mpnet12/final --model_name_or_path hf_punctcase/default_model \
        --output_dir runs/student --train_corpora ted swda=0.285 mts_dialog ted_captions=0.1 \
        --max_train_words 1000000 --teacher_logits_cache runs/teacher/logits_1m --temperature 2 --distill_weight 0.5 ...

Every finetune.py argument applies (the student is built the same way: ``--encoder`` or
``--model_name_or_path``). The teacher labels each training window once, per word
(hf_punctcase.training.distillation.label_with_teacher); with ``--teacher_logits_cache DIR`` the
labelled mixture is saved there and reused by later runs with the same mixture (it is checked to match).
Unlabelled corpora (``ted_captions``: TEDx / archive auto-captions) learn from the teacher alone.
The student is trained on (1 − λ)·hard + λ·T²·KL (hf_punctcase.training.distillation.DistillationTrainer).
"""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path

from hf_punctcase.training import DataArguments, DistillationArguments, ModelArguments, parse_recipe_args, run, run_recipe

# After the plugin, which imports torchao before transformers does, without its CPU-install warnings.
from transformers import TrainingArguments  # noqa: E402, I001


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    model_args, data_args, distill_args, training_args = parse_recipe_args(
        (ModelArguments, DataArguments, DistillationArguments, TrainingArguments), argv
    )
    command = "python recipes/distill.py " + shlex.join(argv)
    return run(model_args, data_args, training_args, command, distillation=distill_args)


if __name__ == "__main__":
    sys.exit(run_recipe(main))
