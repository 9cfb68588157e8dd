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
tokenizer and mlm_summary.json (the loss curve).
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
import time
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import datasets
from transformers import AutoTokenizer, TrainingArguments, set_seed

from hf_punctcase.data import CorpusSpec, cap_words, load_unlabeled_dataset, weighted_mix
from hf_punctcase.encoders import resolve_encoder
from hf_punctcase.labels import LabelScheme
from hf_punctcase.training.mlm import DataCollatorForPunctuationMasking, MaskedPositionsTrainer, masked_lm_from_encoder
from hf_punctcase.model_card import checkpoint_step

from finetune import parse_recipe_args  # recipes/ is on sys.path when run as a script

logger = logging.getLogger("mlm_adapt")


@dataclass
class MlmArguments:
    encoder: str | None = field(default=None, metadata={"help": "Encoder directory, or minilm (default) / mpnet."})
    data_dir: str | None = field(default=None, metadata={"help": "Corpus folder (default ../shared/data)."})
    corpora: list[str] = field(default_factory=lambda: ["mts_dialog", "aci_bench", "mtsamples"])
    unlabeled: list[str] = field(default_factory=list, metadata={"help": "e.g. ted_unpunctuated"})
    masking: str = field(default="punctuation", metadata={"help": "random (MLM) | punctuation (PM)"})
    mlm_probability: float = 0.15
    punctuation_fraction: float = field(default=0.5, metadata={"help": "Share of the masked tokens that are . , ?"})
    block_size: int = 128
    max_train_words: int | None = None


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


def pack_blocks(tokenizer, texts: list[str], block_size: int) -> datasets.Dataset:
    """Tokenise and cut the concatenated token stream into blocks of block_size (with [CLS]/[SEP];
    the tail shorter than a block is dropped)."""
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise ValueError("the tokenizer needs a cls and a sep token to frame the blocks")
    encoded = datasets.Dataset.from_dict({"text": texts}).map(
        lambda batch: tokenizer(batch["text"], add_special_tokens=False), batched=True, remove_columns=["text"]
    )
    inner = block_size - 2

    def group(batch):
        ids = list(chain.from_iterable(batch["input_ids"]))
        blocks = [ids[i : i + inner] for i in range(0, len(ids) - inner + 1, inner)]
        return {"input_ids": [[tokenizer.cls_token_id, *block, tokenizer.sep_token_id] for block in blocks]}

    return encoded.map(group, batched=True, remove_columns=encoded.column_names)


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    args, training_args = parse_recipe_args((MlmArguments, TrainingArguments), argv)
    if args.masking not in ("random", "punctuation"):
        raise ValueError(f"--masking must be random or punctuation, got {args.masking!r}")
    set_seed(training_args.seed)
    scheme = LabelScheme()

    parts = []
    for spec in map(CorpusSpec.parse, args.corpora):
        parts.append((spec.load(args.data_dir, max_words=200, scheme=scheme)["train"], spec.weight))
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
    trainer = MaskedPositionsTrainer(model=model, args=training_args, train_dataset=blocks, data_collator=collator, processing_class=tokenizer)
    start = time.time()
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    final = Path(training_args.output_dir) / "final"
    trainer.save_model(final)
    summary = {
        "command": "python recipes/mlm_adapt.py " + shlex.join(argv),
        "encoder": str(encoder),
        "masking": args.masking,
        "corpora": list(args.corpora),
        "unlabeled": list(args.unlabeled),
        "words": words,
        "blocks": len(blocks),
        "train_seconds": time.time() - start,
        "global_step": trainer.state.global_step,
        "resumed_from_step": checkpoint_step(training_args.resume_from_checkpoint),
        "loss_curve": [(e["step"], e["loss"]) for e in trainer.state.log_history if "loss" in e],
    }
    (final / "mlm_summary.json").write_text(json.dumps(summary, indent=2))
    logger.info("saved %s", final)
    return final


if __name__ == "__main__":
    main()
