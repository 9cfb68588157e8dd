#!/usr/bin/env python
"""Distil a joint teacher (e.g. all-mpnet-base-v2) into a small student with the Trainer.

    python recipes/distill.py --teacher runs/teacher/mpnet12/final --model_name_or_path hf_punctcase/default_model \
        --output_dir runs/student --train_corpora ted swda=0.285 mts_dialog ted_captions=0.1 \
        --max_train_words 1000000 --teacher_logits_cache runs/teacher/logits_1m --temperature 2 --distill_weight 0.5 ...

Every finetune.py argument applies (the student is built the same way: ``--encoder`` or
``--model_name_or_path``). The teacher labels each training window once, per word
(hf_punctcase.training.distillation.add_teacher_logits); with ``--teacher_logits_cache DIR`` the labelled
mixture is saved there and reused by later runs with the same mixture (it is checked to match).
Unlabelled corpora (``ted_captions``: TEDx / archive auto-captions) learn from the teacher alone.
The student is trained on (1 − λ)·hard + λ·T²·KL (hf_punctcase.training.distillation.DistillationTrainer).
"""

from __future__ import annotations

import logging
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import torch
from transformers import AutoTokenizer, TrainingArguments

import hf_punctcase
from hf_punctcase.training.distillation import add_teacher_logits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finetune import DataArguments, ModelArguments, parse_recipe_args, run  # noqa: E402

logger = logging.getLogger("distill")


@dataclass
class DistillationArguments:
    teacher: str = field(default=None, metadata={"help": "The teacher: a joint checkpoint directory or Hub id."})
    temperature: float = field(default=2.0, metadata={"help": "Softmax temperature T of the soft targets."})
    distill_weight: float = field(default=0.5, metadata={"help": "λ: share of the soft-target loss."})
    teacher_batch_size: int = field(default=32, metadata={"help": "Windows per teacher forward pass."})
    teacher_logits_cache: str | None = field(
        default=None, metadata={"help": "Folder to save the teacher-labelled mixture in, or to load it from."}
    )

    def __post_init__(self):
        if not self.teacher:
            raise ValueError("--teacher is required")

    def label(self, train: datasets.Dataset, training_args: TrainingArguments) -> tuple[datasets.Dataset, dict]:
        """The training mixture with the teacher's per-word logits, and what to record about it."""
        record = {"teacher": self.teacher, "temperature": self.temperature, "distill_weight": self.distill_weight}
        cache = Path(self.teacher_logits_cache) if self.teacher_logits_cache else None
        if cache is not None and cache.is_dir():
            labelled = datasets.load_from_disk(str(cache))
            if labelled.num_rows != train.num_rows or labelled[:8]["words"] != train[:8]["words"]:
                raise ValueError(f"{cache} holds teacher logits for another training mixture; remove it or pass another folder")
            logger.info("teacher logits from %s", cache)
            return labelled, {**record, "teacher_logits_cache": str(cache)}
        teacher = hf_punctcase.JointTokenClassificationModel.from_pretrained(self.teacher)
        tokenizer = AutoTokenizer.from_pretrained(self.teacher)
        start = time.time()
        labelled = add_teacher_logits(
            train,
            teacher,
            tokenizer,
            batch_size=self.teacher_batch_size,
            autocast_dtype=torch.bfloat16 if training_args.bf16 else None,
        )
        record["teacher_seconds"] = time.time() - start
        if cache is not None:
            labelled.save_to_disk(str(cache))
            labelled = datasets.load_from_disk(str(cache))
            record["teacher_logits_cache"] = str(cache)
        logger.info("teacher labelled %d windows in %.0f s", labelled.num_rows, record["teacher_seconds"])
        return labelled, record

    def trainer_kwargs(self) -> dict:
        return {"temperature": self.temperature, "distill_weight": self.distill_weight}


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    model_args, data_args, distill_args, training_args = parse_recipe_args(
        (ModelArguments, DataArguments, DistillationArguments, TrainingArguments), argv
    )
    command = "python recipes/distill.py " + shlex.join(argv)
    return run(model_args, data_args, training_args, command, distillation=distill_args)


if __name__ == "__main__":
    main()
