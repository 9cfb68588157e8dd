"""Training the joint model: the arguments and run of finetuning, distillation, two-stage finetuning and
MLM adaptation (the recipes in recipes/ are command lines over these), and their parts: the collator,
the trainers (distillation, masked-position MLM), LoRA, checkpoint averaging, encoder shrinking and
external-text sampling.

    from transformers import TrainingArguments
    from hf_punctcase.training import DataArguments, ModelArguments, run

    run(ModelArguments(model_name_or_path="default"),
        DataArguments(train_corpora=["text:mine.jsonl"], validation_file="dev.jsonl"),
        TrainingArguments(output_dir="runs/mine", max_steps=300))

Training needs the ``train`` extra (``pip install "hf_punctcase[train]"``): transformers' Trainer runs on
accelerate, and the dev sets are scored by the metric (evaluate, scikit-learn), which a plain
install leaves out.
"""

from ..extras import require_extra as _require_extra

# accelerate: transformers' Trainer runs on it; the metric extra's packages score the dev sets.
_require_extra(
    "train", "hf_punctcase.training",
    {"accelerate": "accelerate", "evaluate": "evaluate", "sklearn": "scikit-learn"},
)

from .arguments import (
    TEXT_SPLITS,
    DataArguments,
    DistillationArguments,
    MlmArguments,
    ModelArguments,
    load_config,
    parse_recipe_args,
    RecipeArgumentError,
    run_recipe,
)
from .averaging import KEPT_MODELS_DIR, average_checkpoints, keep_checkpoint_model, run_checkpoints
from .callbacks import (
    CheckpointEveryMinutes,
    CheckpointRecord,
    KeepCheckpointModels,
    StopOnTerminate,
    TrainingProgress,
    TrainingStopped,
    WallClockLimit,
)
from .collator import DataCollatorForJointTokenClassification
from .distillation import DistillationTrainer, add_teacher_logits, label_with_teacher
from .mlm import (
    DataCollatorForPunctuationMasking,
    MaskedPositionsTrainer,
    masked_lm_from_encoder,
    pack_blocks,
    render_texts,
    run_mlm_adaptation,
)
from .sampling import sample_external
from .machine import describe_machine
from .model import build_model, freeze_except, prepared_model
from .pools import TrainingMixture, TrainingPools, load_dev_sets, load_training_pools, tokenize_dev_set, training_mixture
from .run import run
from .shrinking import corpus_word_counts, shrink_encoder, shrink_for_corpora, subword_counts, vocabulary_for_budget
from .two_stage import run_stages, stage_arguments, stage_names

__all__ = [
    "KEPT_MODELS_DIR",
    "TEXT_SPLITS",
    "CheckpointEveryMinutes",
    "CheckpointRecord",
    "DataArguments",
    "DataCollatorForJointTokenClassification",
    "DataCollatorForPunctuationMasking",
    "DistillationArguments",
    "DistillationTrainer",
    "KeepCheckpointModels",
    "MaskedPositionsTrainer",
    "MlmArguments",
    "ModelArguments",
    "StopOnTerminate",
    "TrainingMixture",
    "TrainingPools",
    "TrainingProgress",
    "TrainingStopped",
    "WallClockLimit",
    "add_teacher_logits",
    "average_checkpoints",
    "build_model",
    "corpus_word_counts",
    "describe_machine",
    "freeze_except",
    "keep_checkpoint_model",
    "label_with_teacher",
    "load_config",
    "load_dev_sets",
    "load_training_pools",
    "prepared_model",
    "masked_lm_from_encoder",
    "pack_blocks",
    "parse_recipe_args",
    "RecipeArgumentError",
    "run_recipe",
    "render_texts",
    "run",
    "run_checkpoints",
    "run_mlm_adaptation",
    "run_stages",
    "sample_external",
    "shrink_encoder",
    "shrink_for_corpora",
    "stage_arguments",
    "stage_names",
    "subword_counts",
    "tokenize_dev_set",
    "training_mixture",
    "vocabulary_for_budget",
]
