"""Batching of tokenised examples with every label set (and any teacher columns) padded."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import PreTrainedTokenizerBase

from ..labels import IGNORE_INDEX
from ..tasks import TASKS
from ..tokenization import TEACHER_COLUMNS, TEACHER_MASK


@dataclass
class DataCollatorForJointTokenClassification:
    """Pads the encoder inputs with the tokenizer, every label column with -100, and the teacher's
    logits (distillation) with zeros under a 0 mask."""

    tokenizer: PreTrainedTokenizerBase
    pad_to_multiple_of: int | None = None

    def __call__(self, features: list[dict]) -> dict[str, torch.Tensor]:
        # The subword label column of every registered task (hf_punctcase.tasks) that the features carry.
        label_columns = tuple(task.label_field for task in TASKS.values())
        labels = {name: [f[name] for f in features] for name in label_columns if name in features[0]}
        teacher = {name: [f[name] for f in features] for name in TEACHER_COLUMNS if name in features[0]}
        inputs = [{k: v for k, v in f.items() if k not in label_columns and k not in TEACHER_COLUMNS} for f in features]
        batch = self.tokenizer.pad(inputs, padding=True, pad_to_multiple_of=self.pad_to_multiple_of, return_tensors="pt")
        length = batch["input_ids"].shape[1]
        right = self.tokenizer.padding_side == "right"
        for name, rows in labels.items():
            batch[name] = _pad([torch.as_tensor(row, dtype=torch.long) for row in rows], length, IGNORE_INDEX, right)
        for name, rows in teacher.items():
            dtype = torch.long if name == TEACHER_MASK else torch.float32
            batch[name] = _pad([torch.as_tensor(row, dtype=dtype) for row in rows], length, 0, right)
        return batch


def _pad(rows: list[torch.Tensor], length: int, fill: float, right: bool) -> torch.Tensor:
    """Stack rows of different lengths (and equal trailing shape) into ``(len(rows), length, ...)``."""
    padded = torch.full((len(rows), length, *rows[0].shape[1:]), fill, dtype=rows[0].dtype)
    for i, row in enumerate(rows):
        if right:
            padded[i, : len(row)] = row
        else:
            padded[i, length - len(row) :] = row
    return padded
