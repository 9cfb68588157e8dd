"""Masked-LM adaptation of an encoder: domain adaptation (random masking) and task adaptation by
punctuation masking (Sunkara et al. 2020, §2.2: of the masked tokens, half are . , ?).

The encoders shipped on PyPI (all-MiniLM-L6-v2, all-mpnet-base-v2) carry no MLM head.
:func:`masked_lm_from_encoder` adds one whose output projection is tied to the input embeddings, so
only the small transform layer starts from scratch; the result saves as an encoder directory that
``JointTokenClassificationModel.from_encoder`` accepts.

:func:`run_mlm_adaptation` is the whole run (recipes/mlm_adapt.py): the train splits of labelled
corpora rendered back to punctuated, cased text (:func:`render_texts`; the encoders are uncased, so
casing reaches them only through the tokenizer's lowercasing), plus unlabelled speech captions if
asked, tokenised and packed into blocks (:func:`pack_blocks`).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import datasets
import torch
import torch.nn.functional as F
from transformers import (
    AutoModelForMaskedLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Trainer,
    TrainingArguments,
    set_seed,
)

from ..atomic_files import atomic_write_text
from ..data import CorpusSpec, cap_words, load_unlabeled_dataset, weighted_mix
from ..encoders import resolve_encoder
from ..labels import IGNORE_INDEX, LabelScheme
from ..cards.training_records import checkpoint_step
from .arguments import MlmArguments

logger = logging.getLogger(__name__)

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


# ---- the adaptation run ------------------------------------------------------------------------------


def render_texts(dataset: datasets.Dataset, scheme: LabelScheme) -> list[str]:
    """Labelled examples back to punctuated text (a label a source lacks renders as none)."""
    punct_names = dataset.features["punct"].feature.names
    case_names = dataset.features["case"].feature.names
    texts = []
    for row in dataset:
        punct = [punct_names[p] if p >= 0 else "O" for p in row["punct"]]
        case = [case_names[c] if c >= 0 else "LOWER" for c in row["case"]]
        texts.append(scheme.render(row["words"], punct, case))
    return texts


def pack_blocks(tokenizer: PreTrainedTokenizerBase, texts: Sequence[str], block_size: int) -> datasets.Dataset:
    """Tokenise and cut the concatenated token stream into blocks of block_size (with [CLS]/[SEP];
    the tail shorter than a block is dropped)."""
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise ValueError("the tokenizer needs a cls and a sep token to frame the blocks")
    encoded = datasets.Dataset.from_dict({"text": list(texts)}).map(
        lambda batch: tokenizer(batch["text"], add_special_tokens=False), batched=True, remove_columns=["text"]
    )
    inner = block_size - 2

    def group(batch):
        ids = list(chain.from_iterable(batch["input_ids"]))
        blocks = [ids[i : i + inner] for i in range(0, len(ids) - inner + 1, inner)]
        return {"input_ids": [[tokenizer.cls_token_id, *block, tokenizer.sep_token_id] for block in blocks]}

    return encoded.map(group, batched=True, remove_columns=encoded.column_names)


def run_mlm_adaptation(args: MlmArguments, training_args: TrainingArguments, command: str = "") -> Path:
    """Adapt an encoder by masked-LM training on the text of ``args.corpora`` (and ``args.unlabeled``).

    OUTPUT/final is an encoder directory (MLM head included) with the tokenizer and mlm_summary.json
    (the loss curve, and ``command``, which model cards of models finetuned from it quote)."""
    set_seed(training_args.seed)
    scheme = LabelScheme()

    parts = []
    for spec in map(CorpusSpec.parse, args.corpora):
        parts.append((spec.load(args.data_dir, max_words=200, scheme=scheme, splits=["train"])["train"], spec.weight))
    labelled = weighted_mix(parts, seed=training_args.seed)
    if args.max_train_words:
        labelled = cap_words(labelled, args.max_train_words)
    texts = render_texts(labelled, scheme)
    for name in args.unlabeled:
        texts += load_unlabeled_dataset(name, args.data_dir)["text"]
    words = sum(len(t.split()) for t in texts)
    logger.info("%d texts, %d words", len(texts), words)

    encoder = resolve_encoder(args.encoder)
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    model = masked_lm_from_encoder(encoder)
    blocks = pack_blocks(tokenizer, texts, args.block_size)
    collator = DataCollatorForPunctuationMasking(
        tokenizer,
        mlm_probability=args.mlm_probability,
        punctuation_fraction=args.punctuation_fraction if args.masking == "punctuation" else 0.0,
        seed=training_args.seed,
    )
    trainer = MaskedPositionsTrainer(
        model=model, args=training_args, train_dataset=blocks, data_collator=collator, processing_class=tokenizer
    )
    # Read now: with save_total_limit the Trainer deletes the checkpoint it resumed from once newer ones exist.
    resumed_from_step = checkpoint_step(training_args.resume_from_checkpoint)
    start = time.time()
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    final = Path(training_args.output_dir) / "final"
    trainer.save_model(final)
    summary = {
        "command": command,
        "encoder": str(encoder),
        "masking": args.masking,
        "corpora": list(args.corpora),
        "unlabeled": list(args.unlabeled),
        "words": words,
        "blocks": len(blocks),
        "train_seconds": time.time() - start,
        "global_step": trainer.state.global_step,
        "resumed_from_step": resumed_from_step,
        "loss_curve": [(e["step"], e["loss"]) for e in trainer.state.log_history if "loss" in e],
    }
    atomic_write_text(final / "mlm_summary.json", json.dumps(summary, indent=2))
    logger.info("saved %s", final)
    return final
