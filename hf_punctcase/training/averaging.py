"""Checkpoint averaging: the model whose weights are the mean of several checkpoints of one run (Vaswani
et al. 2017; "latest weight averaging", Kaddour 2022). At a learning rate that stays high, as under a
plateau schedule before its first cut, consecutive checkpoints scatter around a point that none of them
reaches; their mean lies nearer it, at no cost in training. With ``stages=True`` the checkpoints are the
ends of stages that went on from one branch point (``branch_from``), one a stage: a uniform model soup
(Wortsman et al. 2022), whose ingredients share the weights they started from.

The Trainer keeps few checkpoints (``save_total_limit``): with ``keep_checkpoint_models`` a run also keeps
the model of every checkpoint it saves, without the optimiser state, in ``OUTPUT/checkpoint_models/``:

    python recipes/average_checkpoints.py --run runs/cnn_bilstm/word_long --last 3 -o runs/averaged
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from transformers.trainer import OPTIMIZER_NAME, SCALER_NAME, SCHEDULER_NAME, TRAINER_STATE_NAME, TRAINING_ARGS_NAME
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from ..atomic_files import atomic_directory, atomic_write_text
from ..cards.training_records import TRAINING_RECORD, checkpoint_step, training_record

#: The folder of a run (its output_dir) where ``keep_checkpoint_models`` keeps the model of each checkpoint.
KEPT_MODELS_DIR = "checkpoint_models"

#: The Trainer's state in a checkpoint, which only resuming a run reads: everything else is the model.
TRAINER_STATE_FILES = frozenset({OPTIMIZER_NAME, "optimizer.bin", SCHEDULER_NAME, SCALER_NAME, TRAINING_ARGS_NAME})


def checkpoint_folder(output_dir: str | os.PathLike, step: int) -> Path:
    """The folder of the checkpoint of ``step`` in ``output_dir``, as the Trainer names it (and
    ``keep_checkpoint_models`` names the kept models)."""
    return Path(output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{step}"


def numbered_checkpoints(folder: str | os.PathLike) -> list[tuple[int, Path]]:
    """The ``checkpoint-N`` folders in ``folder`` with their steps, oldest first (none where it does not exist)."""
    found = []
    for candidate in Path(folder).glob(f"{PREFIX_CHECKPOINT_DIR}-*"):
        step = candidate.name.rsplit("-", 1)[-1]
        if candidate.is_dir() and step.isdigit():
            found.append((int(step), candidate))
    return sorted(found)


def _is_trainer_state(file: Path) -> bool:
    return file.name in TRAINER_STATE_FILES or (file.name.startswith("rng_state") and file.suffix == ".pth")


def saved_step(folder: str | os.PathLike) -> int:
    """The step a checkpoint (or a kept model of one, or a final model) was saved at: its
    trainer_state.json's, else its training record's, else the number its name ends with."""
    folder = Path(folder)
    if (folder / TRAINER_STATE_NAME).is_file():
        return checkpoint_step(folder)
    record = training_record(folder) or {}
    if "global_step" in record:
        return int(record["global_step"])
    suffix = folder.name.rsplit("-", 1)[-1]
    if suffix.isdigit():
        return int(suffix)
    raise ValueError(f"{folder}: no trainer_state.json, training record or step number says which step it was saved at")


def run_of_checkpoint(folder: str | os.PathLike) -> Path:
    """The run a checkpoint folder belongs to: the folder holding it, or, for a kept model
    (``RUN/checkpoint_models/checkpoint-N``), the one above ``checkpoint_models``."""
    parent = Path(folder).resolve().parent
    return parent.parent if parent.name == KEPT_MODELS_DIR else parent


def keep_checkpoint_model(checkpoint: str | os.PathLike, models_dir: str | os.PathLike) -> Path:
    """Copy a Trainer checkpoint's model (weights, config, tokenizer, training record: all but the
    optimiser, scheduler, RNG state and arguments) to ``models_dir/checkpoint-N``, written whole."""
    checkpoint = Path(checkpoint)
    target = checkpoint_folder(models_dir, saved_step(checkpoint))
    with atomic_directory(target, overwrite=True) as staging:
        for file in checkpoint.iterdir():
            if file.is_file() and not _is_trainer_state(file):
                shutil.copy2(file, staging / file.name)
    return target


def run_checkpoints(run_dir: str | os.PathLike) -> list[Path]:
    """The models of a run's checkpoints, oldest first, one per step: those kept in
    ``RUN/checkpoint_models/`` and the Trainer's checkpoints still in ``RUN`` (saved whole)."""
    by_step = {step: folder for step, folder in numbered_checkpoints(run_dir) if (folder / TRAINER_STATE_NAME).is_file()}
    by_step.update(numbered_checkpoints(Path(run_dir) / KEPT_MODELS_DIR))
    return [by_step[step] for step in sorted(by_step)]


def _weight_files(folder: Path) -> list[str]:
    names = sorted(file.name for file in folder.glob("*.safetensors"))
    if not names:
        raise ValueError(f"{folder} has no safetensors weights: averaging reads model.safetensors (or its shards)")
    return names


def average_checkpoints(
    checkpoints: Sequence[str | os.PathLike],
    output_dir: str | os.PathLike,
    *,
    overwrite: bool = False,
    command: str | None = None,
    stages: bool = False,
) -> Path:
    """Write to ``output_dir`` the model whose floating-point weights are the mean of ``checkpoints``'
    (two or more folders of one run: Trainer checkpoints, kept checkpoint models or saved models). The
    folder is the newest checkpoint's (by step) with the weights replaced and no optimiser state; its
    training record gains ``averaged_checkpoints`` (the step and words seen of each) and
    ``averaging_command`` (``command``, the command line that made it, if given), which its card states.
    The tensors other than floating-point ones (buffers such as a word-start table) must be equal in all;
    names, shapes and dtypes must match. Written whole or not at all.

    With ``stages`` the checkpoints are of several runs, one a run (stages branched from one checkpoint,
    which may end at the same step): the folder is the last named of the newest, and each entry of
    ``averaged_checkpoints`` also names its stage (its run's folder name)."""
    folders = [Path(checkpoint) for checkpoint in checkpoints]
    if len(folders) < 2:
        raise ValueError(f"averaging needs two or more checkpoints, got {len(folders)}")
    resolved = [folder.resolve() for folder in folders]
    if len(set(resolved)) != len(resolved):
        raise ValueError("a checkpoint is named twice: each would count twice in the mean")
    for folder in folders:
        if not (folder / "config.json").is_file():
            raise ValueError(f"{folder} is not a model folder (no config.json)")
    steps = [saved_step(folder) for folder in folders]
    runs = [run_of_checkpoint(folder) for folder in folders]
    if stages and len(set(runs)) != len(runs):
        raise ValueError(f"two of the checkpoints are of one run ({', '.join(str(run) for run in runs)}): a soup of stages takes one a stage")
    if not stages and len(set(steps)) != len(steps):
        raise ValueError(
            f"two of the checkpoints were saved at the same step ({steps}): they are not of one run "
            "(for the ends of stages branched from one checkpoint, pass stages=True: --stages)"
        )
    order = sorted(range(len(folders)), key=steps.__getitem__)
    folders, steps, runs = [folders[k] for k in order], [steps[k] for k in order], [runs[k] for k in order]
    newest = folders[-1]
    files = _weight_files(newest)
    for folder in folders[:-1]:
        if _weight_files(folder) != files:
            raise ValueError(f"{folder} holds weight files {_weight_files(folder)}, {newest} holds {files}")
    with atomic_directory(output_dir, overwrite=overwrite) as staging:
        for file in newest.iterdir():
            if file.is_file() and not _is_trainer_state(file) and file.suffix != ".safetensors" and file.name != "README.md":
                shutil.copy2(file, staging / file.name)
        for name in files:
            save_file(_mean_of(name, folders), str(staging / name), metadata={"format": "pt"})
        record = training_record(newest)
        if record is not None:
            record["averaged_checkpoints"] = [
                {"step": step, "words_seen": (training_record(folder) or {}).get("words_seen")}
                | ({"stage": run.name} if stages else {})
                for step, folder, run in zip(steps, folders, runs)
            ]
            record["averaging_command"] = command
            atomic_write_text(staging / TRAINING_RECORD, json.dumps(record, indent=2))
    return Path(output_dir)


def _mean_of(name: str, folders: list[Path]) -> dict[str, torch.Tensor]:
    """The mean of weight file ``name`` over ``folders``, summed one folder at a time in float64."""
    total: dict[str, torch.Tensor] = {}
    kept: dict[str, torch.Tensor] = {}
    first: dict[str, tuple[torch.dtype, tuple[int, ...]]] = {}
    for index, folder in enumerate(folders):
        with safe_open(str(folder / name), framework="pt") as weights:
            keys = set(weights.keys())
            if index and keys != set(first):
                differ = ", ".join(sorted(keys ^ set(first))[:3])
                raise ValueError(f"{folder / name} and {folders[0] / name} hold different tensors ({differ}, …)")
            for key in sorted(keys):
                tensor = weights.get_tensor(key)
                kind = (tensor.dtype, tuple(tensor.shape))
                if not index:
                    first[key] = kind
                elif kind != first[key]:
                    raise ValueError(f"{key} is {kind} in {folder / name} but {first[key]} in {folders[0] / name}")
                if tensor.is_floating_point():
                    total[key] = total[key].add_(tensor.to(torch.float64)) if index else tensor.to(torch.float64)
                elif not index:
                    kept[key] = tensor
                elif not torch.equal(tensor, kept[key]):
                    raise ValueError(
                        f"{key} ({tensor.dtype}) differs between {folder} and {folders[0]}: only floating-point weights are averaged"
                    )
    mean = {key: (value / len(folders)).to(first[key][0]) for key, value in total.items()}
    return {**mean, **kept}


__all__ = [
    "KEPT_MODELS_DIR",
    "TRAINER_STATE_FILES",
    "average_checkpoints",
    "checkpoint_folder",
    "keep_checkpoint_model",
    "numbered_checkpoints",
    "run_checkpoints",
    "run_of_checkpoint",
    "saved_step",
]
