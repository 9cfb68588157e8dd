"""A stage of a run: another run that goes on from one of its whole checkpoints (model, optimiser state,
step, words seen) on its own mixture or schedule, the branch point copied into the stage's output folder.

A stage on a step-based learning-rate schedule (``warmup_stable_decay``, ``linear``, ``cosine``, ...) gets that
schedule's state at the branch point's step in place of the checkpoint's own, which the Trainer could not
load into another kind of scheduler (a ``reduce_lr_on_plateau`` state into a step-based one): so a run held
at one rate by a plateau schedule can end in a decay stage (the warmup-stable-decay schedule of Hägele et
al. 2024, "Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations") that starts from the
rate the run held and keeps its Adam moments. A stage on ``reduce_lr_on_plateau`` keeps the checkpoint's
state (its best loss and patience counters) as it is.
"""

from __future__ import annotations

import logging
import os
import shutil
import warnings
from pathlib import Path

import torch
from transformers import TrainingArguments, get_scheduler
from transformers.trainer import OPTIMIZER_NAME, SCHEDULER_NAME, TRAINER_STATE_NAME
from transformers.trainer_utils import SchedulerType

from ..atomic_files import atomic_directory
from ..cards.training_records import checkpoint_step
from .averaging import checkpoint_folder

logger = logging.getLogger(__name__)


def stage_schedule_state(optimizer_state: dict, step: int, training_args: TrainingArguments) -> tuple[dict, dict]:
    """The optimiser state with each parameter group's rate set to the stage's schedule at ``step``, and
    that schedule's state at ``step``: ``training_args``' step-based schedule over ``max_steps``, starting
    from the rates the optimiser state holds (the branch point's: a plateau schedule's cuts, a layer-wise
    decay's ratios are kept as the schedule's base rates)."""
    base_rates = [group["lr"] for group in optimizer_state["param_groups"]]
    # One stand-in parameter a group: the schedule's state depends on the groups' rates, not on the weights.
    stand_in = torch.optim.SGD([{"params": [torch.zeros(1)], "lr": rate} for rate in base_rates])
    schedule = get_scheduler(
        training_args.lr_scheduler_type,
        stand_in,
        num_warmup_steps=training_args.get_warmup_steps(training_args.max_steps),
        num_training_steps=training_args.max_steps,
        scheduler_specific_kwargs=training_args.lr_scheduler_kwargs,
    )
    with warnings.catch_warnings():
        # Stepping the schedule without training steps is the point: torch warns of exactly that.
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(step):
            schedule.step()
    optimizer_state = {**optimizer_state, "param_groups": [
        {**group, "lr": rate, "initial_lr": base}
        for group, rate, base in zip(optimizer_state["param_groups"], schedule.get_last_lr(), base_rates, strict=True)
    ]}
    return optimizer_state, schedule.state_dict()


def branch_checkpoint(checkpoint: str | os.PathLike, output_dir: str | os.PathLike, training_args: TrainingArguments) -> Path:
    """Copy the whole checkpoint ``checkpoint`` of another run into ``output_dir`` as that run's newest
    checkpoint, under the stage's schedule (``training_args``); returns the copy. The copy is written
    whole or not at all (:func:`~hf_punctcase.atomic_files.atomic_directory`), so a stop while it is
    written leaves no half-copied checkpoint to resume from."""
    source = Path(checkpoint)
    if not (source / TRAINER_STATE_NAME).is_file():
        raise FileNotFoundError(f"{source} is not a whole checkpoint (no {TRAINER_STATE_NAME}): a stage branches from one")
    step = checkpoint_step(source)
    if training_args.max_steps <= step:
        raise ValueError(f"max_steps {training_args.max_steps} leaves the stage nothing to train after step {step}")
    target = checkpoint_folder(output_dir, step)
    for cut_off in target.parent.glob(f".{target.name}.*.tmp"):  # what a hard stop left of an earlier copy
        shutil.rmtree(cut_off, ignore_errors=True)
    with atomic_directory(target) as staging:
        shutil.copytree(source, staging, dirs_exist_ok=True)
        if training_args.lr_scheduler_type != SchedulerType.REDUCE_ON_PLATEAU:
            optimizer_state, schedule_state = stage_schedule_state(
                torch.load(staging / OPTIMIZER_NAME, map_location="cpu", weights_only=True), step, training_args
            )
            torch.save(optimizer_state, staging / OPTIMIZER_NAME)
            torch.save(schedule_state, staging / SCHEDULER_NAME)
    schedule = SchedulerType(training_args.lr_scheduler_type).value
    logger.info("branched %s into %s (the %s schedule from step %d)", source, target, schedule, step)
    return target


__all__ = ["branch_checkpoint", "stage_schedule_state"]
