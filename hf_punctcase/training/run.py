"""One training run of the joint model with the Trainer: finetuning, or distillation from a teacher.

    from transformers import TrainingArguments
    from hf_punctcase.training import DataArguments, ModelArguments, run

    final = run(
        ModelArguments(model_name_or_path="default"),
        DataArguments(train_corpora=["text:mine.jsonl"], validation_file="dev.jsonl"),
        TrainingArguments(output_dir="runs/mine", max_steps=300, eval_strategy="steps", eval_steps=100),
    )

The model: a new joint model on an encoder (``encoder``, truncated to ``num_encoder_layers``), a new
CNN-BiLSTM trained from scratch on its own subword tokenizer (``model_family="cnn_bilstm"``,
``tokenizer_name_or_path``), or a checkpoint of either family to go on training
(``model_name_or_path``; ``"default"`` is the model shipped inside the package). Data: corpus specs with sampling weights (``ted=0.5 mts_dialog=3``, see
hf_punctcase.data.mixing), each document cut into windows of ``window_words`` words, read once: the
MIXED-case lexicon comes from the same pass (the ``written`` column). Dev set: the validation splits
of ``eval_corpora`` and the user's ``validation_file``, which the Trainer scores in the pipeline's windows
and context (``eval_with_context``). OUTPUT/final gets the model, its card
(README.md, figures measured through the pipeline on the dev set) and training_summary.json; every
checkpoint gets training_summary.json as it stood at its step, so that it is carded like final/.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import datasets
import torch
from transformers import (
    EarlyStoppingCallback,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Trainer,
    TrainerCallback,
    TrainerState,
    TrainingArguments,
    pipeline,
    set_seed,
)
from transformers.trainer import TRAINER_STATE_NAME

from ..atomic_files import atomic_write_text
from ..cards.checkpoint import card_for_checkpoint
from ..cards.lineage import tokenizer_source
from ..cards.training_records import TRAINING_RECORD, checkpoint_step
from ..data import CorpusSpec, count_words
from ..evaluation import compute_metrics_for, evaluate_dataset
from ..export.remote_code import bundle_sources
from ..hub import push_to_hub
from ..labels import LabelScheme
from ..quantization import stop_simulating_int8_storage
from ..restoration import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS
from ..tasks import tasks_of
from ..tokenization import tokenize_dataset
from .arguments import DataArguments, DistillationArguments, ModelArguments
from .averaging import KEPT_MODELS_DIR, checkpoint_folder, numbered_checkpoints
from .branching import branch_checkpoint
from .callbacks import (
    CheckpointEveryMinutes,
    CheckpointRecord,
    KeepCheckpointModels,
    StopOnTerminate,
    TrainingProgress,
    TrainingStopped,
    WallClockLimit,
    latest_evaluation,
    recorded_progress,
)
from .collator import DataCollatorForJointTokenClassification
from .distillation import DistillationTrainer, label_with_teacher
from .machine import describe_machine, fall_back_from_emulated_bf16
from .model import prepared_model
from .optimization import optimizer_cls_and_kwargs
from .pools import check_files, load_dev_sets, tokenize_dev_set, training_mixture

logger = logging.getLogger(__name__)


def run(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: TrainingArguments,
    command: str = "",
    distillation: DistillationArguments | None = None,
) -> Path:
    """Train, keep the best checkpoint, save OUTPUT/final with its card; returns that folder.

    With ``distillation``, the teacher labels the training mixture with its per-word logits
    (:func:`~hf_punctcase.training.distillation.label_with_teacher`) and the DistillationTrainer trains
    on them. ``command`` is recorded in training_summary.json and the card, to say how to rerun it."""
    check_files(data_args)
    fall_back_from_emulated_bf16(training_args)
    set_seed(training_args.seed)
    scheme = LabelScheme()
    train_specs = [CorpusSpec.parse(s) for s in data_args.train_corpora]
    eval_specs = [CorpusSpec.parse(s) for s in data_args.dev_corpora]

    mixture = training_mixture(data_args, train_specs, scheme, seed=training_args.seed)
    dev_parts = load_dev_sets(
        eval_specs, data_args.data_dir, data_args.window_words, scheme, data_args.validation_file,
        train_specs=train_specs, file_split=data_args.file_split, max_eval_words=data_args.max_eval_words,
    )
    train, teacher_record = mixture.windows, None
    if distillation is not None:
        train, teacher_record = teacher_labelled(train, distillation, bf16=training_args.bf16)

    model, tokenizer, source = prepared_model(model_args, scheme, mixture.lexicon)
    # Read the remote-code bundle now: every checkpoint then carries the code the run started with, even
    # when the package's files are edited on disk while it trains.
    hold_remote_code(model)
    model_tasks = tasks_of(model.config)
    train_tokens = tokenize_dataset(
        train, tokenizer, data_args.max_seq_length, lowercase=model.config.lowercase_input,
        num_proc=data_args.num_proc, tasks=model_tasks,
    )
    dev_tokens = tokenize_dev_set(
        datasets.concatenate_datasets(list(dev_parts.values())), tokenizer, model.config, data_args.eval_with_context,
        data_args.max_seq_length, model_tasks,
    )
    # The label columns this model's batches carry: the Trainer's default (every *label* argument of
    # forward) leaves out the keyword-only labels of the head tasks, which the model is scored on.
    training_args.label_names = [task.label_field for task in model_tasks]
    if data_args.branch_from:
        # Its weights come from the branch point, whose record (and the records it goes on from) the
        # stage's card reads as the stages before it.
        source = str(data_args.branch_from)
        # A stage goes on from its branch point the first time, from its own newest checkpoint after a stop.
        if latest_whole_checkpoint(training_args.output_dir) is None:
            branch_checkpoint(data_args.branch_from, training_args.output_dir, training_args)
        training_args.resume_from_checkpoint = training_args.resume_from_checkpoint or "latest"
    if training_args.resume_from_checkpoint == "latest":
        # A run stopped and started again with the same command goes on from its newest checkpoint, if any.
        training_args.resume_from_checkpoint = latest_whole_checkpoint(training_args.output_dir)
    if training_args.resume_from_checkpoint and data_args.early_stopping_patience:
        # Early stopping counts the evaluations without improvement over the whole run: the leg goes on from
        # the checkpoint's count (and its patience), or a run resumed every few hours would never end itself.
        training_args.restore_callback_states_from_checkpoint = True
    # Read now: with save_total_limit the Trainer deletes the checkpoint it resumed from once newer ones exist.
    resumed_from_step = checkpoint_step(training_args.resume_from_checkpoint)

    record = run_record(command, source, train_specs, eval_specs, data_args, training_args, train, len(train_tokens), mixture.pool_words)
    if not model_args.model_name_or_path and model_args.tokenizer_name_or_path:
        # A model made from scratch on a trained tokenizer: its vocabulary carries that tokenizer's text.
        record["tokenizer"] = tokenizer_source(model_args.tokenizer_name_or_path)
    if teacher_record is not None:
        record["distillation"] = teacher_record

    def training_summary(state: TrainerState, train_seconds: float, dev_metrics: dict) -> dict:
        return {
            **record,
            "train_seconds": train_seconds,
            **recorded_progress(state.log_history),
            "global_step": state.global_step,
            "resumed_from_step": resumed_from_step,
            "epoch": state.epoch,
            "best_checkpoint": state.best_model_checkpoint,
            "dev_metrics": dev_metrics,
            "log_history": state.log_history,
        }

    trainer = make_trainer(
        model, tokenizer, train_tokens, dev_tokens, model_args, data_args, training_args, distillation,
        words_per_example=record["train_words"] / len(train_tokens),
        summary_at_checkpoint=lambda state, seconds: training_summary(state, seconds, latest_evaluation(state.log_history)),
    )
    stop = next(callback for callback in trainer.callback_handler.callbacks if isinstance(callback, StopOnTerminate))
    start = time.time()
    try:
        trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    finally:
        stop.restore()
    train_seconds = time.time() - start
    if stop.step is not None:
        raise TrainingStopped(stop.step, checkpoint_folder(training_args.output_dir, stop.step))
    metrics = trainer.evaluate() if training_args.eval_strategy != "no" else {}
    return save_final(
        trainer, tokenizer, model_args, data_args, training_args, training_summary(trainer.state, train_seconds, metrics),
        dev_parts,
    )


def hold_remote_code(model: PreTrainedModel) -> None:
    """Read the code a checkpoint of ``model`` carries (its remote-code bundle) once, now, if the model
    saves one (an adapter-wrapped model: its base model's)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    if getattr(type(base), "remote_code_exporter", None) is not None:
        bundle_sources(type(base), base.config)


def latest_whole_checkpoint(output_dir: str | os.PathLike) -> str | None:
    """The newest checkpoint in ``output_dir`` that was saved whole, or None. The Trainer writes a
    checkpoint in place, its state (trainer_state.json) last: a run killed while saving leaves one
    without it, which a resume must pass over (with one warning line) rather than fail on."""
    for step, candidate in reversed(numbered_checkpoints(output_dir)):
        if (candidate / TRAINER_STATE_NAME).is_file():
            return str(candidate)
        logger.warning("%s was cut off while it was saved (no %s): resuming from an earlier checkpoint", candidate, TRAINER_STATE_NAME)
    return None


def teacher_labelled(
    train: datasets.Dataset, distillation: DistillationArguments, bf16: bool
) -> tuple[datasets.Dataset, dict]:
    """The training windows with the teacher's per-word logits, and what the run records of the teacher."""
    train, labelling = label_with_teacher(
        train,
        distillation.teacher,
        batch_size=distillation.teacher_batch_size,
        cache_dir=distillation.teacher_logits_cache,
        autocast_dtype=torch.bfloat16 if bf16 else None,
    )
    return train, {
        "teacher": distillation.teacher,
        "temperature": distillation.temperature,
        "distill_weight": distillation.distill_weight,
        **labelling,
    }


def run_record(
    command: str,
    source: str,
    train_specs: list[CorpusSpec],
    eval_specs: list[CorpusSpec],
    data_args: DataArguments,
    training_args: TrainingArguments,
    train: datasets.Dataset,
    train_examples: int,
    pool_words: dict[str, int],
) -> dict:
    """What training_summary.json and the card record of the run besides its progress: the command, the
    model it started from, the corpora and words, the dev windows and the machine."""
    record = {
        "command": command,
        "init": source,
        "train_corpora": [str(s) for s in train_specs],
        "eval_corpora": [str(s) for s in eval_specs],
        "eval_windows": (
            {"window_words": DEFAULT_WINDOW_WORDS, "context_words": DEFAULT_CONTEXT_WORDS}
            if data_args.eval_with_context
            else {"sentence_chunks_of": data_args.window_words}
        ),
        "train_words": count_words(train),
        "train_examples": train_examples,
        "pool_words": pool_words,
        "torch_threads": torch.get_num_threads(),
        "training_machine": data_args.training_machine or describe_machine(training_args),
    }
    if data_args.validation_file:
        record["validation_file"] = str(data_args.validation_file)
    if data_args.file_split is not None:
        record["text_split"] = "all"
    return record


def make_trainer(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    train_tokens: datasets.Dataset,
    dev_tokens: datasets.Dataset,
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: TrainingArguments,
    distillation: DistillationArguments | None,
    words_per_example: float,
    summary_at_checkpoint: Callable[[TrainerState, float], dict],
) -> Trainer:
    """The Trainer of the run (the DistillationTrainer with a teacher): its callbacks (progress in words,
    a record at each checkpoint, a checkpoint and a stop on SIGTERM, checkpoints every
    ``checkpoint_minutes``, the model of each checkpoint kept, the wall-clock limit, early stopping) and its optimiser
    (:func:`~hf_punctcase.training.optimization.optimizer_cls_and_kwargs`)."""
    callbacks: list[TrainerCallback] = [
        TrainingProgress(words_per_example=words_per_example),
        CheckpointRecord(summary_at_checkpoint),
        StopOnTerminate(),
    ]
    if data_args.keep_checkpoint_models:
        callbacks.append(KeepCheckpointModels(Path(training_args.output_dir) / KEPT_MODELS_DIR))
    if data_args.checkpoint_minutes:
        callbacks.append(CheckpointEveryMinutes(data_args.checkpoint_minutes))
    if data_args.max_train_minutes:
        callbacks.append(WallClockLimit(data_args.max_train_minutes))
    if data_args.early_stopping_patience:
        callbacks.append(EarlyStoppingCallback(data_args.early_stopping_patience))
    trainer_class, trainer_kwargs = Trainer, {}
    if distillation is not None:
        trainer_class = DistillationTrainer
        trainer_kwargs.update(temperature=distillation.temperature, distill_weight=distillation.distill_weight)
    trainer = trainer_class(
        model=model,
        args=training_args,
        train_dataset=train_tokens,
        eval_dataset=dev_tokens,
        processing_class=tokenizer,
        data_collator=DataCollatorForJointTokenClassification(tokenizer),
        compute_metrics=compute_metrics_for(model.config),
        callbacks=callbacks,
        **trainer_kwargs,
    )
    # Set once the Trainer exists: which parameters weight decay spares is the Trainer's own choice.
    trainer.optimizer_cls_and_kwargs = optimizer_cls_and_kwargs(
        model, model_args, training_args, trainer.get_decay_parameter_names(model)
    )
    return trainer


def save_final(
    trainer: Trainer,
    tokenizer: PreTrainedTokenizerBase,
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: TrainingArguments,
    summary: dict,
    dev_parts: dict[str, datasets.Dataset],
) -> Path:
    """OUTPUT/final: the trained model (LoRA merged, its adapter kept in OUTPUT/adapter; int8-storage
    simulation removed), its tokenizer, training_summary.json (with the pipeline's dev scores when
    ``model_card``) and its card; pushed to the Hub when asked."""
    output = Path(training_args.output_dir)
    final = output / "final"
    final_model: PreTrainedModel = trainer.model
    if model_args.lora_r:
        from .lora import merge_lora

        final_model.save_pretrained(output / "adapter")
        tokenizer.save_pretrained(output / "adapter")
        final_model = merge_lora(final_model)
    if model_args.quantization_aware_training:
        stop_simulating_int8_storage(final_model)
    final_model.save_pretrained(final)
    tokenizer.save_pretrained(final)
    if data_args.model_card:
        restorer = pipeline("punct-case", model=str(final))
        summary["pipeline_dev"] = {name: evaluate_dataset(restorer, dev) for name, dev in dev_parts.items()}
    atomic_write_text(final / TRAINING_RECORD, json.dumps(summary, indent=2))
    hub_id = training_args.hub_model_id if training_args.push_to_hub else None
    atomic_write_text(final / "README.md", card_for_checkpoint(final, repo_id=hub_id))
    if hub_id:
        push_to_hub(final, hub_id, private=training_args.hub_private_repo, token=training_args.hub_token)
    logger.info("saved %s", final)
    return final


__all__ = ["latest_whole_checkpoint", "make_trainer", "run", "run_record", "save_final", "teacher_labelled"]
