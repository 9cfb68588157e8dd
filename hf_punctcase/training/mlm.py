"""Masked-LM adaptation of an encoder: domain adaptation (random masking) and task adaptation by
punctuation masking (Sunkara et al. 2020, §2.2: of the masked tokens, half are . , ?).

The encoders shipped on PyPI (all-MiniLM-L6-v2, all-mpnet-base-v2) carry no MLM head.
:func:`masked_lm_from_encoder` adds one whose output projection is tied to the input embeddings, so
only the small transform layer starts from scratch; the result saves as an encoder directory that
``JointTokenClassificationModel.from_encoder`` accepts.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import (
    AutoModelForMaskedLM,
    DataCollatorForLanguageModeling,
    PreTrainedModel,
    Trainer,
)

from ..labels import IGNORE_INDEX

DEFAULT_PUNCTUATION_TOKENS = (".", ",", "?")


@dataclass
class DataCollatorForPunctuationMasking(DataCollatorForLanguageModeling):
    """MLM collator that aims a share of the masking at punctuation tokens.

    With ``mlm_probability`` p and ``punctuation_fraction`` f, a sequence of N maskable tokens of
    which P are punctuation gets about p·N masked tokens, f of them punctuation: each punctuation
    token is masked with probability min(1, f·p·N / P) and every other token with the probability
    that brings the total to p·N. Masked tokens are then replaced as in BERT (80% [MASK], 10% random,
    10% kept). ``punctuation_fraction=0`` is plain random masking.
    """

    punctuation_fraction: float = 0.5
    punctuation_tokens: Sequence[str] = DEFAULT_PUNCTUATION_TOKENS

    def __post_init__(self):
        super().__post_init__()
        if not 0.0 <= self.punctuation_fraction <= 1.0:
            raise ValueError(f"punctuation_fraction must be in [0, 1], got {self.punctuation_fraction}")
        ids = self.tokenizer.convert_tokens_to_ids(list(self.punctuation_tokens))
        missing = [t for t, i in zip(self.punctuation_tokens, ids) if i is None or i == self.tokenizer.unk_token_id]
        if missing:
            raise ValueError(f"the tokenizer has no token for {missing}")
        self.punctuation_ids = torch.tensor(ids, dtype=torch.long)

    def masking_probabilities(self, input_ids: torch.Tensor, special_tokens_mask: torch.Tensor) -> torch.Tensor:
        """Per-token masking probabilities (0 on special tokens)."""
        maskable = ~special_tokens_mask.bool()
        is_punct = torch.isin(input_ids, self.punctuation_ids) & maskable
        n_maskable = maskable.sum(-1, keepdim=True).float()
        n_punct = is_punct.sum(-1, keepdim=True).float()
        target = self.mlm_probability * n_maskable
        p_punct = torch.clamp(self.punctuation_fraction * target / n_punct.clamp(min=1), max=1.0)
        p_other = ((target - p_punct * n_punct) / (n_maskable - n_punct).clamp(min=1)).clamp(0.0, 1.0)
        probabilities = torch.where(is_punct, p_punct, p_other)
        return probabilities.masked_fill(~maskable, 0.0)

    def torch_mask_tokens(self, inputs, special_tokens_mask=None, offset_mapping=None):
        if self.whole_word_mask:
            raise ValueError("punctuation masking works on tokens; whole_word_mask is not supported")
        labels = inputs.clone()
        if special_tokens_mask is None:
            special_tokens_mask = torch.tensor(
                [self.tokenizer.get_special_tokens_mask(row, already_has_special_tokens=True) for row in labels.tolist()],
                dtype=torch.bool,
            )
        probabilities = self.masking_probabilities(inputs, special_tokens_mask)
        masked = torch.bernoulli(probabilities, generator=self.generator).bool()
        labels[~masked] = IGNORE_INDEX
        replaced = torch.bernoulli(torch.full(labels.shape, self.mask_replace_prob), generator=self.generator).bool() & masked
        inputs[replaced] = self.tokenizer.mask_token_id
        remaining = 1 - self.mask_replace_prob
        if remaining > 0 and self.random_replace_prob > 0:
            random_share = self.random_replace_prob / remaining
            randomised = (
                torch.bernoulli(torch.full(labels.shape, random_share), generator=self.generator).bool() & masked & ~replaced
            )
            random_words = torch.randint(len(self.tokenizer), labels.shape, dtype=torch.long, generator=self.generator)
            inputs[randomised] = random_words[randomised]
        return inputs, labels


def masked_lm_from_encoder(encoder_name_or_path: str | os.PathLike) -> PreTrainedModel:
    """A masked-LM model on a pretrained encoder that may have no MLM head.

    The decoder is tied to the word embeddings (so it starts from them); the head's transform layer
    and bias are new. Raises if the encoder's config unties them, since the head would then be
    random.
    """
    model = AutoModelForMaskedLM.from_pretrained(encoder_name_or_path)
    output = model.get_output_embeddings()
    if output is None or output.weight.data_ptr() != model.get_input_embeddings().weight.data_ptr():
        raise ValueError(
            f"{encoder_name_or_path}: the MLM output layer is not tied to the input embeddings "
            "(tie_word_embeddings=False), so it would start random"
        )
    return model


def masked_lm_head(model: PreTrainedModel) -> torch.nn.Module:
    """The module mapping hidden states to vocabulary logits (BERT: ``cls``; MPNet, RoBERTa: ``lm_head``)."""
    for name in ("cls", "lm_head"):
        head = getattr(model, name, None)
        if head is not None:
            return head
    raise ValueError(f"{type(model).__name__} has no cls or lm_head module to score masked tokens with")


def masked_positions_loss(
    model: PreTrainedModel, inputs: dict[str, torch.Tensor], num_items_in_batch: int | torch.Tensor | None = None
) -> torch.Tensor:
    """The masked-LM cross-entropy, with the vocabulary projected at the masked positions only.

    A ``*ForMaskedLM`` forward scores every position against the whole vocabulary (30k for MiniLM)
    and then ignores the 85% that are not masked; on a 6-layer 384-wide encoder that projection (and
    its fp32 softmax) is more than half of a CPU step (benchmarks/mlm_speed.py). Same loss, same
    gradients. ``num_items_in_batch`` (the Trainer's count
    of labelled tokens over an accumulated batch) divides the summed loss, as transformers' own MLM
    loss does; without it the mean over this batch's masked tokens is returned.
    """
    labels = inputs["labels"]
    hidden = model.base_model(**{k: v for k, v in inputs.items() if k != "labels"}).last_hidden_state
    masked = labels != IGNORE_INDEX
    logits = masked_lm_head(model)(hidden[masked])
    loss = F.cross_entropy(logits.float(), labels[masked], reduction="sum")
    denominator = num_items_in_batch if num_items_in_batch is not None else masked.sum().clamp(min=1)
    return loss / denominator


class MaskedPositionsTrainer(Trainer):
    """Trainer for masked-LM adaptation whose training loss is :func:`masked_positions_loss`."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if return_outputs:  # callers that want logits get the model's own forward
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        loss = masked_positions_loss(model, inputs, num_items_in_batch)
        if self.args.average_tokens_across_devices and num_items_in_batch is not None:
            # The count was summed over processes and DDP averages their gradients: as Trainer.compute_loss.
            loss = loss * self.accelerator.num_processes
        return loss
