"""Knowledge distillation of a joint teacher into a smaller student (Hinton et al. 2015).

The teacher's scores are taken once per word and cached as dataset columns
(``teacher_punct_logits``, ``teacher_case_logits``: one row of logits per word), so that they do not
depend on either model's tokenizer and can be reused by several students; :func:`tokenize_dataset
<hf_punctcase.tokenization.tokenize_dataset>` puts each row on the student's first subword of the
word. Unlabelled text (labels -1) learns from the teacher's rows alone.

    loss = (1 − λ) · [α·CE(punct) + CE(case)]  +  λ · T² · [α·KL(teacher‖student)_punct + KL(…)_case]
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

import datasets
import torch
from torch import nn
from transformers import AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase, Trainer

from ..models.joint_transformer import JointTokenClassificationModel
from ..tokenization import TEACHER_CASE, TEACHER_COLUMNS, TEACHER_MASK, TEACHER_PUNCT, first_subword_positions, tokenize_words

logger = logging.getLogger(__name__)


def soft_target_kl(
    student_logits: torch.Tensor, teacher_logits: torch.Tensor, mask: torch.Tensor, temperature: float
) -> torch.Tensor:
    """T² · KL(softmax(teacher/T) ‖ softmax(student/T)), averaged over the positions where ``mask``.

    The T² factor keeps the soft-target gradients on the scale of the hard-label loss (Hinton et al.).
    0 (with a gradient path) when no position is masked in.
    """
    mask = mask.bool()
    if not mask.any():
        return student_logits.sum() * 0.0
    student = (student_logits[mask].float() / temperature).log_softmax(-1)
    teacher = (teacher_logits[mask].float() / temperature).log_softmax(-1)
    kl = nn.functional.kl_div(student, teacher, log_target=True, reduction="batchmean")
    return kl * temperature**2


def distillation_loss(
    student_punct: torch.Tensor,
    student_case: torch.Tensor,
    teacher_punct: torch.Tensor,
    teacher_case: torch.Tensor,
    mask: torch.Tensor,
    temperature: float = 2.0,
    punct_loss_weight: float = 0.6,
) -> torch.Tensor:
    """The soft-target loss on both heads, weighted like the hard loss: α·KL(punct) + KL(case)."""
    return punct_loss_weight * soft_target_kl(student_punct, teacher_punct, mask, temperature) + soft_target_kl(
        student_case, teacher_case, mask, temperature
    )


class DistillationTrainer(Trainer):
    """A Trainer whose loss mixes the hard labels with the teacher's cached soft targets.

    Args:
        temperature: softmax temperature T of the soft targets.
        distill_weight: λ, the share of the soft-target loss (0: plain finetuning; 1: soft targets only).
    Batches without teacher columns (the dev set) get the model's own loss.
    """

    def __init__(self, *args, temperature: float = 2.0, distill_weight: float = 0.5, **kwargs):
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if not 0.0 <= distill_weight <= 1.0:
            raise ValueError(f"distill_weight must be in [0, 1], got {distill_weight}")
        super().__init__(*args, **kwargs)
        self.temperature = temperature
        self.distill_weight = distill_weight

    def _set_signature_columns_if_needed(self):
        # The teacher columns are not forward() arguments; without this the Trainer drops them.
        super()._set_signature_columns_if_needed()
        self._signature_columns = list(dict.fromkeys([*self._signature_columns, *TEACHER_COLUMNS]))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        teacher = {name: inputs.pop(name) for name in TEACHER_COLUMNS if name in inputs}
        outputs = model(**inputs)
        loss = outputs.loss
        if teacher:
            soft = distillation_loss(
                outputs.punct_logits,
                outputs.case_logits,
                teacher[TEACHER_PUNCT],
                teacher[TEACHER_CASE],
                teacher[TEACHER_MASK],
                temperature=self.temperature,
                punct_loss_weight=self.model.config.punct_loss_weight,
            )
            hard = loss if loss is not None else soft * 0.0
            loss = (1.0 - self.distill_weight) * hard + self.distill_weight * soft
        return (loss, outputs) if return_outputs else loss


@torch.no_grad()
def teacher_word_logits(
    teacher: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    words_batch: Sequence[Sequence[str]],
    max_length: int = 512,
    autocast_dtype: torch.dtype | None = None,
) -> tuple[list[list[list[float]]], list[list[list[float]]]]:
    """The teacher's punctuation and casing logits for each word (read at its first subword).

    A word the teacher's tokenizer drops, or that falls beyond ``max_length`` subwords, gets a row of
    NaN: no soft target for it.
    """
    encoding = tokenize_words(tokenizer, words_batch, max_length, lowercase=teacher.config.lowercase_input)
    batch = tokenizer.pad(
        {k: encoding[k] for k in encoding.keys()}, padding=True, return_tensors="pt"
    ).to(teacher.device)
    context = (
        torch.autocast(device_type=teacher.device.type, dtype=autocast_dtype) if autocast_dtype else nullcontext()
    )
    with context:
        outputs = teacher(**batch)
    punct_scores, case_scores = outputs.punct_logits.float().cpu(), outputs.case_logits.float().cpu()
    punct_rows, case_rows = [], []
    for i, words in enumerate(words_batch):
        positions = torch.tensor(first_subword_positions(encoding.word_ids(i), len(words)))
        found = positions >= 0
        punct = torch.full((len(words), punct_scores.shape[-1]), math.nan)
        case = torch.full((len(words), case_scores.shape[-1]), math.nan)
        punct[found] = punct_scores[i, positions[found]]
        case[found] = case_scores[i, positions[found]]
        punct_rows.append(punct.tolist())
        case_rows.append(case.tolist())
    return punct_rows, case_rows


def add_teacher_logits(
    dataset: datasets.Dataset,
    teacher: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    batch_size: int = 32,
    max_length: int = 512,
    autocast_dtype: torch.dtype | None = None,
) -> datasets.Dataset:
    """Add the teacher's per-word logits to a dataset with a ``words`` column, as the columns
    ``teacher_punct_logits`` and ``teacher_case_logits`` (float32, one row per word).

    Save the result with ``save_to_disk`` to reuse the teacher's work across students and runs.
    """
    teacher = teacher.eval()

    def label(batch):
        punct, case = teacher_word_logits(teacher, tokenizer, batch["words"], max_length, autocast_dtype)
        return {TEACHER_PUNCT: punct, TEACHER_CASE: case}

    features = dataset.features.copy()
    features[TEACHER_PUNCT] = datasets.Sequence(datasets.Sequence(datasets.Value("float32")))
    features[TEACHER_CASE] = datasets.Sequence(datasets.Sequence(datasets.Value("float32")))
    return dataset.map(label, batched=True, batch_size=batch_size, features=features, desc="teacher logits")


def label_with_teacher(
    train: datasets.Dataset,
    teacher: str,
    batch_size: int = 32,
    cache_dir: str | os.PathLike | None = None,
    autocast_dtype: torch.dtype | None = None,
) -> tuple[datasets.Dataset, dict]:
    """A training mixture with the per-word logits of ``teacher`` (a joint checkpoint folder, Hub id or
    ``"default"``),
    and what a training record says about them: ``teacher``, and ``teacher_seconds`` when the teacher
    ran, ``teacher_logits_cache`` when a cache was used.

    With ``cache_dir`` the labelled mixture is saved there, and reused by later runs whose mixture
    matches it (a cache of another mixture is refused rather than silently trained on)."""
    record: dict = {"teacher": teacher}
    cache = Path(cache_dir) if cache_dir else None
    if cache is not None and cache.is_dir():
        labelled = datasets.load_from_disk(str(cache))
        if labelled.num_rows != train.num_rows or labelled[:8]["words"] != train[:8]["words"]:
            raise ValueError(f"{cache} holds teacher logits for another training mixture; remove it or pass another folder")
        logger.info("teacher logits from %s", cache)
        return labelled, {**record, "teacher_logits_cache": str(cache)}
    from ..checkpoints import resolve

    folder = resolve(teacher).location  # "default": the embedded default model
    model = JointTokenClassificationModel.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    start = time.time()
    labelled = add_teacher_logits(train, model, tokenizer, batch_size=batch_size, autocast_dtype=autocast_dtype)
    record["teacher_seconds"] = time.time() - start
    if cache is not None:
        labelled.save_to_disk(str(cache))
        # Train from the saved copy, as a later run reusing the cache will: one mixture, one set of files.
        labelled = datasets.load_from_disk(str(cache))
        record["teacher_logits_cache"] = str(cache)
    logger.info("teacher labelled %d windows in %.0f s", labelled.num_rows, record["teacher_seconds"])
    return labelled, record


__all__ = [
    "TEACHER_COLUMNS",
    "DistillationTrainer",
    "add_teacher_logits",
    "label_with_teacher",
    "distillation_loss",
    "soft_target_kl",
    "teacher_word_logits",
]
