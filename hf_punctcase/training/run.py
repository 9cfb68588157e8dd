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
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import datasets
import torch
from transformers.trainer_utils import get_last_checkpoint
from transformers import (
    AutoConfig,
    AutoTokenizer,
    EarlyStoppingCallback,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Trainer,
    TrainerCallback,
    TrainerState,
    TrainingArguments,
    pipeline,
    set_seed,
)

from ..data import (
    FILE_SOURCES,
    CorpusSpec,
    cap_words,
    count_words,
    load_punct_case_dataset,
    mixed_case_lexicon,
    weighted_mix,
    window_examples,
)
from ..data.asr_noise import ASR_NOISE_POOL, AsrNoiseModel, add_asr_noise
from ..evaluation import compute_metrics_for, evaluate_dataset
from ..hub import push_to_hub
from ..labels import DISFLUENCY_LABELS, LabelScheme
from ..cards.checkpoint import card_for_checkpoint
from ..cards.training_records import TRAINING_RECORD, checkpoint_step
from ..auto import AutoModelForJointTokenClassification
from ..models import FAMILIES
from ..models.joint_transformer import JointTokenClassificationConfig
from ..quantization import simulate_int8_storage, stop_simulating_int8_storage
from ..restoration import DEFAULT_CONTEXT_WORDS, DEFAULT_WINDOW_WORDS, max_input_length
from ..checkpoints import resolve
from ..tasks import Task, tasks_of
from ..tokenization import tokenize_dataset
from .arguments import DataArguments, DistillationArguments, ModelArguments
from .callbacks import CheckpointRecord, TrainingProgress, WallClockLimit, latest_evaluation, recorded_progress
from .collator import DataCollatorForJointTokenClassification
from .distillation import DistillationTrainer, label_with_teacher

logger = logging.getLogger(__name__)


# ---- data ------------------------------------------------------------------------------------------


@dataclass
class TrainingPools:
    """The training windows of each corpus spec (in the order given), and the MIXED-case lexicon of
    the texts they came from (every training document, whatever its sampling weight)."""

    parts: list[tuple[CorpusSpec, datasets.Dataset]]
    lexicon: dict[str, str]


def load_training_pools(
    specs: Sequence[CorpusSpec],
    data_dir: str | os.PathLike | None,
    window_words: int,
    scheme: LabelScheme | None = None,
    file_split: str | None = None,
) -> TrainingPools:
    """The train split of each corpus, cut into consecutive windows of ``window_words`` words.

    Each corpus is parsed once (a cached load not at all): the windows are cut as the documents are
    parsed, and the lexicon is read off the written forms the same pass kept. ``file_split="train"``
    trains on every document of the user's file corpora instead of their hash split's train share."""
    loaded = []
    for spec in specs:
        splits = spec.load(
            data_dir, window_words, scheme, splits=["train"], windows=True, written_forms=True, file_split=file_split
        )
        if "train" not in splits:
            raise ValueError(f"{spec} has no train split")
        loaded.append((spec, splits["train"]))
    lexicon = mixed_case_lexicon(dataset for _, dataset in loaded)
    # The written forms have served: the training data carries the usual columns only.
    return TrainingPools([(spec, dataset.remove_columns("written")) for spec, dataset in loaded], lexicon)


def noisy_pools(
    data_args: DataArguments, scheme: LabelScheme, file_split: str | None, seed: int
) -> list[tuple[CorpusSpec, datasets.Dataset]]:
    """The train windows of ``--asr_noise_corpora`` with simulated ASR errors
    (:func:`~hf_punctcase.data.asr_noise.add_asr_noise`), each with its spec's weight."""
    noise = AsrNoiseModel.load(data_args.asr_noise_model)
    if data_args.asr_noise_rates is not None:
        noise = noise.with_rates(*data_args.asr_noise_rates)
    specs = [CorpusSpec.parse(spec) for spec in data_args.asr_noise_corpora]
    pools = load_training_pools(specs, data_args.data_dir, data_args.window_words, scheme, file_split)
    return [(spec, add_asr_noise(windows, noise, seed=seed)) for spec, windows in pools.parts]


def _resolved_files(spec: CorpusSpec) -> set[Path]:
    return {Path(f).resolve() for f in spec.data_files}


def load_dev_sets(
    specs: Sequence[CorpusSpec],
    data_dir: str | os.PathLike | None,
    max_words: int,
    scheme: LabelScheme | None = None,
    validation_file: str | os.PathLike | None = None,
    train_specs: Sequence[CorpusSpec] = (),
    file_split: str | None = None,
    max_eval_words: int | None = None,
) -> dict[str, datasets.Dataset]:
    """The dev set, by name: the validation split of each corpus spec, and the user's ``validation_file``
    (every document of it; named by its file name).

    A file corpus (``text:FILE``) that no training spec reads is a dev set of its own: all its documents
    are scored. One that training reads too is scored on its hash split's validation share, the
    documents training leaves out; when training takes all of them (``file_split="train"``) nothing is
    left, and that is an error rather than a dev set of training data."""
    trained = set().union(*(_resolved_files(s) for s in train_specs if s.name in FILE_SOURCES))
    dev: dict[str, datasets.Dataset] = {}
    for spec in specs:
        spec_split = None
        if spec.name in FILE_SOURCES:
            if not _resolved_files(spec) & trained:
                spec_split = "validation"
            elif file_split is not None:
                raise ValueError(
                    f"{spec} is also a training corpus, and training takes all its documents (--text_split all, the "
                    "default with --validation_file): none are left to score; pass --text_split hash, or another file"
                )
        splits = spec.load(data_dir, max_words, scheme, splits=["validation"], file_split=spec_split)
        if "validation" not in splits:
            hashed = spec_split is None and spec.name in FILE_SOURCES
            hint = " (its hash split sent no document to validation: pass --validation_file)" if hashed else ""
            raise ValueError(f"{spec.name} has no validation split{hint}")
        name = spec.name
        if name in dev:  # two file corpora: tell them apart by their files
            name = f"{spec.name}:{','.join(Path(f).name for f in spec.data_files)}"
        dev[name] = splits["validation"]
    if validation_file is not None:
        if Path(validation_file).resolve() in trained:
            raise ValueError(f"the validation file {validation_file} is also a training corpus")
        dev[Path(validation_file).name] = load_punct_case_dataset(
            "text", data_files=[validation_file], max_words=max_words, scheme=scheme,
            file_split="validation", splits=["validation"],
        )["validation"]
    if not dev:
        raise ValueError("no dev set: name --eval_corpora or a --validation_file")
    if max_eval_words:
        dev = {name: cap_words(data, max_eval_words) for name, data in dev.items()}
    return dev


def tokenize_dev_set(
    dev: datasets.Dataset,
    tokenizer: PreTrainedTokenizerBase,
    config: PretrainedConfig,
    with_context: bool,
    max_seq_length: int,
    tasks: Sequence[Task],
) -> datasets.Dataset:
    """The dev set as the Trainer scores it. ``with_context``: in the pipeline's windows (each word
    scored once, in the middle of a window, with the pipeline's context on each side), tokenised to the
    model's input length as the pipeline does; a window longer than that is cut without overlap, so that
    no word counts twice. Otherwise its examples as loaded (sentence chunks), to ``max_seq_length``."""
    lowercase = config.lowercase_input
    if not with_context:
        return tokenize_dataset(dev, tokenizer, max_seq_length, lowercase=lowercase, tasks=tasks)
    # One batch: a document cut across two would lose its context at the cut.
    windows = window_examples(dev, DEFAULT_WINDOW_WORDS, batch_size=None, context_words=DEFAULT_CONTEXT_WORDS)
    length = max_input_length(config.max_position_embeddings, tokenizer.model_max_length)
    return tokenize_dataset(windows, tokenizer, length, stride=0, lowercase=lowercase, tasks=tasks)


# ---- model -----------------------------------------------------------------------------------------


def build_model(
    model_args: ModelArguments, scheme: LabelScheme, lexicon: dict[str, str]
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, str]:
    """The model to train, its tokenizer, and where it came from (the checkpoint as named, the encoder
    folder, or what a family's ``new_model`` says of a model trained from scratch)."""
    if model_args.model_name_or_path:
        # "default" is the model shipped inside the package, not a Hub id.
        path = resolve(model_args.model_name_or_path).location
        config = AutoConfig.from_pretrained(path, trust_remote_code=False)
        if model_args.disfluency_head:
            if config.model_type != JointTokenClassificationConfig.model_type:
                raise ValueError(f"--disfluency_head is for the joint transformer, not a {config.model_type} checkpoint")
            # A head the checkpoint lacks is initialised; one it has keeps its weights.
            config.disfluency_labels = list(DISFLUENCY_LABELS)
            config.head_dependency = model_args.head_dependency
        model = AutoModelForJointTokenClassification.from_pretrained(path, config=config, trust_remote_code=False)
        family = model_args.model_family
        if family is not None and FAMILIES[family].model_type != model.config.model_type:
            raise ValueError(
                f"--model_family {family} but {model_args.model_name_or_path} is a {model.config.model_type} checkpoint"
            )
        if model_args.config_overrides:
            raise ValueError("--config_overrides applies to a model trained from scratch, not to a checkpoint")
        # A later stage may see words the first did not: the lexicon is the union, new forms winning.
        model.config.mixed_case_lexicon = {**(model.config.mixed_case_lexicon or {}), **lexicon}
        # The loss options are this run's, whatever the checkpoint was trained with.
        model.config.punct_loss_weight = _punct_loss_weight(model_args, type(model.config))
        model.config.label_smoothing = model_args.label_smoothing
        model.config.punct_class_weights = model_args.punct_class_weights
        if isinstance(model.config, JointTokenClassificationConfig):
            model.config.case_loss_weight = model_args.case_loss_weight
            # What the checkpoint runs best as was measured on its weights, not on the ones trained now.
            model.config.preferred_cpu_runtime = None
            model.config.disfluency_loss_weight = model_args.disfluency_loss_weight
        model.config.validate_loss_options()
        return model, AutoTokenizer.from_pretrained(path), str(model_args.model_name_or_path)
    family = FAMILIES[model_args.model_family or "joint_transformer"]
    return family.new_model(model_args, scheme, lexicon, _punct_loss_weight(model_args, family.config_class))


def freeze_except(model: PreTrainedModel, prefixes: Sequence[str]) -> int:
    """Freeze every parameter whose name starts with none of ``prefixes``; returns how many parameters
    still train (a prefix that names none is an error: a typo would train nothing)."""
    names = [name for name, _ in model.named_parameters()]
    for prefix in prefixes:
        if not any(name.startswith(prefix) for name in names):
            raise ValueError(f"--trainable_parameters {prefix!r} names no parameter of the model")
    trained = 0
    for name, parameter in model.named_parameters():
        parameter.requires_grad = any(name.startswith(prefix) for prefix in prefixes)
        trained += parameter.numel() if parameter.requires_grad else 0
    logger.info("training %d of %d parameters (%s)", trained, sum(p.numel() for p in model.parameters()), ", ".join(prefixes))
    return trained


def _punct_loss_weight(model_args: ModelArguments, config_class: type) -> float:
    """α as asked for, else the family's default (its config class's)."""
    return config_class.punct_loss_weight if model_args.punct_loss_weight is None else model_args.punct_loss_weight


# ---- the machine ---------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model") and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def describe_machine(training_args: TrainingArguments) -> str:
    """The hardware a run trains on, in words: the GPU model (and count) when it trains on CUDA, else
    the CPU model and the logical cores this process may run on."""
    device = training_args.device
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        # DataParallel drives n_gpu GPUs from one process; distributed runs one GPU per process.
        count = max(training_args.n_gpu, training_args.world_size)
        return name if count <= 1 else f"{count} × {name}"
    if device.type not in ("cpu", "mps"):
        return device.type
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    machine = f"{_cpu_model()}, {cores} logical cores"
    return f"{machine} (Apple MPS)" if device.type == "mps" else machine


# ---- the run ---------------------------------------------------------------------------------------


def fall_back_from_emulated_bf16(training_args: TrainingArguments) -> None:
    """A recipe's ``bf16: true`` on a CPU without bf16 matrix instructions (AMX, avx512_bf16, ARM BF16)
    trains in fp32 instead, with a warning: bf16 there is emulated (slower than fp32) and oneDNN has no
    bf16 LSTM for it (the CNN-BiLSTM family fails at its first step)."""
    from ..hardware import detect_hardware

    on_cpu = training_args.use_cpu or not (torch.cuda.is_available() or torch.backends.mps.is_available())
    hardware = detect_hardware()
    if training_args.bf16 and on_cpu and not hardware.cpu_bf16:
        logger.warning("bf16 asked for, but %s has no bf16 matrix instructions: training in fp32", hardware.describe())
        training_args.bf16 = False
        if training_args.mixed_precision == "bf16":  # what the Trainer hands accelerate, set from bf16 at parse time
            training_args.mixed_precision = "no"


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
    fall_back_from_emulated_bf16(training_args)
    set_seed(training_args.seed)
    scheme = LabelScheme()
    train_specs = [CorpusSpec.parse(s) for s in data_args.train_corpora]
    eval_specs = [CorpusSpec.parse(s) for s in data_args.dev_corpora]
    file_split = data_args.file_split

    pools = load_training_pools(train_specs, data_args.data_dir, data_args.window_words, scheme, file_split)
    pool_words = {str(spec): count_words(windows) for spec, windows in pools.parts}
    parts = [(windows, spec.weight) for spec, windows in pools.parts]
    if data_args.asr_noise_model:
        for spec, windows in noisy_pools(data_args, scheme, file_split, seed=training_args.seed):
            pool_words[f"{ASR_NOISE_POOL}{spec}"] = count_words(windows)
            parts.append((windows, spec.weight))
    train = weighted_mix(parts, seed=training_args.seed)
    if data_args.max_train_words:
        train = cap_words(train, data_args.max_train_words)
    train_words = count_words(train)
    logger.info("training mixture: %d examples, %d words (pools: %s)", len(train), train_words, pool_words)

    dev_parts = load_dev_sets(
        eval_specs, data_args.data_dir, data_args.window_words, scheme, data_args.validation_file,
        train_specs=train_specs, file_split=file_split, max_eval_words=data_args.max_eval_words,
    )

    teacher_record = None
    if distillation is not None:
        train, labelling = label_with_teacher(
            train,
            distillation.teacher,
            batch_size=distillation.teacher_batch_size,
            cache_dir=distillation.teacher_logits_cache,
            autocast_dtype=torch.bfloat16 if training_args.bf16 else None,
        )
        teacher_record = {
            "teacher": distillation.teacher,
            "temperature": distillation.temperature,
            "distill_weight": distillation.distill_weight,
            **labelling,
        }

    model, tokenizer, source = build_model(model_args, scheme, pools.lexicon)
    if model_args.trainable_parameters:
        freeze_except(model, model_args.trainable_parameters)
    if model_args.quantization_aware_training:
        if model.config.model_type != JointTokenClassificationConfig.model_type:
            raise ValueError(f"--quantization_aware_training is for the joint transformer, not {model.config.model_type}")
        logger.info("computing with %d weight matrices rounded as int8 storage rounds them", simulate_int8_storage(model))
    if model_args.lora_r:
        from .lora import add_lora

        model = add_lora(model, model_args.lora_r, model_args.lora_alpha, model_args.lora_dropout, model_args.lora_target_modules)
        model.print_trainable_parameters()

    lowercase = model.config.lowercase_input
    model_tasks = tasks_of(model.config)
    train_tokens = tokenize_dataset(
        train, tokenizer, data_args.max_seq_length, lowercase=lowercase, num_proc=data_args.num_proc, tasks=model_tasks,
    )
    dev_tokens = tokenize_dev_set(
        datasets.concatenate_datasets(list(dev_parts.values())), tokenizer, model.config, data_args.eval_with_context,
        data_args.max_seq_length, model_tasks,
    )
    # The label columns this model's batches carry: the Trainer's default (every *label* argument of
    # forward) leaves out the keyword-only labels of the head tasks, which the model is scored on.
    training_args.label_names = [task.label_field for task in model_tasks]

    if training_args.resume_from_checkpoint == "latest":
        # A run stopped and started again with the same command goes on from its newest checkpoint, if any.
        training_args.resume_from_checkpoint = (
            get_last_checkpoint(training_args.output_dir) if Path(training_args.output_dir).is_dir() else None
        )
    # Read now: with save_total_limit the Trainer deletes the checkpoint it resumed from once newer ones exist.
    resumed_from_step = checkpoint_step(training_args.resume_from_checkpoint)
    run_record = {
        "command": command,
        "init": source,
        "train_corpora": [str(s) for s in train_specs],
        "eval_corpora": [str(s) for s in eval_specs],
        "eval_windows": (
            {"window_words": DEFAULT_WINDOW_WORDS, "context_words": DEFAULT_CONTEXT_WORDS}
            if data_args.eval_with_context
            else {"sentence_chunks_of": data_args.window_words}
        ),
        "train_words": train_words,
        "train_examples": len(train_tokens),
        "pool_words": pool_words,
        "torch_threads": torch.get_num_threads(),
        "training_machine": data_args.training_machine or describe_machine(training_args),
    }
    if data_args.validation_file:
        run_record["validation_file"] = str(data_args.validation_file)
    if file_split is not None:
        run_record["text_split"] = "all"
    if teacher_record is not None:
        run_record["distillation"] = teacher_record

    def training_summary(state: TrainerState, train_seconds: float, dev_metrics: dict) -> dict:
        return {
            **run_record,
            "train_seconds": train_seconds,
            **recorded_progress(state.log_history),
            "global_step": state.global_step,
            "resumed_from_step": resumed_from_step,
            "epoch": state.epoch,
            "best_checkpoint": state.best_model_checkpoint,
            "dev_metrics": dev_metrics,
            "log_history": state.log_history,
        }

    callbacks: list[TrainerCallback] = [
        TrainingProgress(words_per_example=train_words / len(train_tokens)),
        CheckpointRecord(lambda state, seconds: training_summary(state, seconds, latest_evaluation(state.log_history))),
    ]
    if data_args.max_train_minutes:
        callbacks.append(WallClockLimit(data_args.max_train_minutes))
    if data_args.early_stopping_patience:
        callbacks.append(EarlyStoppingCallback(data_args.early_stopping_patience))
    trainer_class, trainer_kwargs = Trainer, {}
    if model_args.weight_decay_as_l2:
        trainer_kwargs["optimizer_cls_and_kwargs"] = (
            torch.optim.Adam,
            {
                "lr": training_args.learning_rate,
                "weight_decay": training_args.weight_decay,
                "betas": (training_args.adam_beta1, training_args.adam_beta2),
                "eps": training_args.adam_epsilon,
            },
        )
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
    start = time.time()
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    train_seconds = time.time() - start
    metrics = trainer.evaluate() if training_args.eval_strategy != "no" else {}

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
    summary = training_summary(trainer.state, train_seconds, metrics)
    if data_args.model_card:
        restorer = pipeline("punct-case", model=str(final))
        summary["pipeline_dev"] = {name: evaluate_dataset(restorer, dev) for name, dev in dev_parts.items()}
    (final / TRAINING_RECORD).write_text(json.dumps(summary, indent=2))
    hub_id = training_args.hub_model_id if training_args.push_to_hub else None
    (final / "README.md").write_text(card_for_checkpoint(final, repo_id=hub_id))
    if hub_id:
        push_to_hub(final, hub_id, private=training_args.hub_private_repo, token=training_args.hub_token)
    logger.info("saved %s", final)
    return final
