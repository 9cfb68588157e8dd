"""Trainer callbacks of the training runs."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from ..atomic_files import atomic_write_text
from ..cards.training_records import TRAINING_RECORD
from .averaging import checkpoint_folder, keep_checkpoint_model


class WallClockLimit(TrainerCallback):
    """Ends training after a wall-clock budget, with a last evaluation and checkpoint."""

    def __init__(self, minutes: float):
        self.seconds = minutes * 60
        self.start: float | None = None

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        self.start = time.monotonic()

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        if self.start is not None and time.monotonic() - self.start > self.seconds:
            control.should_training_stop = True
            control.should_evaluate = args.eval_strategy != "no"
            control.should_save = args.save_strategy != "no"
        return control


class CheckpointEveryMinutes(TrainerCallback):
    """Saves a checkpoint once ``minutes`` of training have passed since the last one (or since the leg
    began), besides the checkpoints of the save strategy: where a step is slow, a run stopped at any moment
    loses no more than that. It only adds checkpoints: evaluations, the learning-rate schedule and the data
    order are those of the run without it, and so is a run resumed from one of them."""

    def __init__(self, minutes: float):
        self.seconds = minutes * 60
        self.last_save: float | None = None

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        self.last_save = time.monotonic()

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        if self.last_save is not None and time.monotonic() - self.last_save >= self.seconds:
            control.should_save = True
        return control

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        self.last_save = time.monotonic()


class KeepCheckpointModels(TrainerCallback):
    """Keeps the model of every checkpoint the Trainer saves (all but its optimiser state) in
    ``models_dir/checkpoint-N``, which ``save_total_limit`` does not rotate: the checkpoints to average
    (:func:`~hf_punctcase.training.averaging.average_checkpoints`) or to evaluate after the run. Put it
    after :class:`CheckpointRecord`, so that the kept models hold the record too."""

    def __init__(self, models_dir: str | os.PathLike):
        self.models_dir = Path(models_dir)

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        folder = checkpoint_folder(args.output_dir, state.global_step)
        if state.is_world_process_zero and folder.is_dir():
            keep_checkpoint_model(folder, self.models_dir)


class StopOnTerminate(TrainerCallback):
    """Turns SIGTERM (what ``kill``, batch schedulers and container stops send) during training into a
    checkpoint at the end of the current step and the end of training, so that the same command goes on
    from that step instead of from the last scheduled checkpoint. ``step`` is the step training stopped
    at, or None while no SIGTERM came. Outside the main thread, where Python cannot take signals, and
    outside ``train()``, SIGTERM keeps its own handler."""

    def __init__(self):
        self.step: int | None = None
        self._requested = False
        self._installed = False
        self._previous_handler = None

    def _request(self, signum, frame):
        self._requested = True

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        if threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(signal.SIGTERM, self._request)
            self._installed = True

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        if self._requested and self.step is None:
            self.step = state.global_step
            control.should_save = True
            control.should_training_stop = True
        return control

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        self.restore()
        if self._requested and self.step is None:
            # It came after the last step: training is over, and what remains is not kept from it.
            signal.raise_signal(signal.SIGTERM)

    def restore(self) -> None:
        """Give SIGTERM back its own handler; also where ``train()`` raised before it ended."""
        if self._installed:
            # None: the handler was set outside Python, which cannot be put back; the default is the nearest.
            signal.signal(signal.SIGTERM, signal.SIG_DFL if self._previous_handler is None else self._previous_handler)
            self._installed, self._previous_handler = False, None


class TrainingStopped(Exception):
    """Training ended on SIGTERM with a checkpoint (``checkpoint``, at ``step``), not at its end: no final
    model is saved, and the same command goes on from that checkpoint."""

    def __init__(self, step: int, checkpoint: Path):
        super().__init__(f"stopped by SIGTERM at step {step}: {checkpoint} is saved; the same command goes on from it")
        self.step, self.checkpoint = step, checkpoint


#: What :class:`TrainingProgress` writes into each log entry.
PROGRESS_KEYS = ("words_seen", "train_hours", "train_cpu_hours", "hours_since_step")


def newest_progress_entry(log_history: list[dict]) -> dict:
    """The newest log entry that records how far the run had come ({} if none)."""
    return next((entry for entry in reversed(log_history) if "train_hours" in entry), {})


def recorded_progress(log_history: list[dict]) -> dict:
    """Words seen and hours over every leg of a run, from the newest log entry that records them ({} if none)."""
    entry = newest_progress_entry(log_history)
    return {key: entry[key] for key in PROGRESS_KEYS if key in entry}


class TrainingProgress(TrainerCallback):
    """Writes how far a run has come into every entry of its log history, so that a run stopped and resumed
    across many sittings still says, from its newest checkpoint alone, how much it trained.

    ``words_seen``: examples seen × the mixture's mean words per example (exact on average over the
    mixture, which every epoch visits in full), each leg's steps counted at its own mixture's mean, so
    that a stage resumed from another run's checkpoint on another mixture adds its own words.
    ``train_hours``: wall-clock hours of the ``train()`` calls, evaluations and checkpointing included; ``train_cpu_hours``: CPU time of the training process over
    them, in core-hours, which does not count the time the process was paused or waiting for a core.
    Both are summed over the run's legs: a resumed leg starts from the newest entry its checkpoint holds.
    ``hours_since_step``: the step the hours count from (0, unless the run began before it recorded them).
    """

    def __init__(self, words_per_example: float):
        self.words_per_example = words_per_example
        self.leg_start = self.leg_cpu_start = 0.0
        self.hours_before = self.cpu_hours_before = 0.0
        self.hours_since_step = 0
        self.words_before, self.step_before = 0, 0

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        self.leg_start, self.leg_cpu_start = time.monotonic(), time.process_time()
        earlier = newest_progress_entry(state.log_history)
        self.hours_before = earlier.get("train_hours", 0.0)
        self.cpu_hours_before = earlier.get("train_cpu_hours", 0.0)
        self.hours_since_step = earlier.get("hours_since_step", 0) if earlier else state.global_step
        # The words up to that entry, counted at the mixtures of the legs that trained them.
        self.words_before, self.step_before = (earlier["words_seen"], earlier["step"]) if "words_seen" in earlier else (0, 0)

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, logs=None, **kwargs):
        # The Trainer appends the entry to the log history just before it calls on_log with a copy of it.
        entry = state.log_history[-1]
        examples_per_step = args.train_batch_size * args.gradient_accumulation_steps * args.world_size
        steps = state.global_step - self.step_before
        entry["words_seen"] = round(self.words_before + steps * examples_per_step * self.words_per_example)
        entry["train_hours"] = round(self.hours_before + (time.monotonic() - self.leg_start) / 3600, 6)
        entry["train_cpu_hours"] = round(self.cpu_hours_before + (time.process_time() - self.leg_cpu_start) / 3600, 6)
        entry["hours_since_step"] = self.hours_since_step


def latest_evaluation(log_history: list[dict]) -> dict:
    """The metrics of the newest evaluation in a log history ({} if none)."""
    entry = next((entry for entry in reversed(log_history) if any(key.startswith("eval_") for key in entry)), {})
    return {key: value for key, value in entry.items() if key.startswith("eval_") or key == "epoch"}


class CheckpointRecord(TrainerCallback):
    """Writes the run's training record into every checkpoint the Trainer saves, as the finished run writes
    it into ``final/``: any checkpoint of a long run can then be carded, shipped or pushed as it stands,
    with the data and licences it was trained on and how far it had come. ``record(state, leg_seconds)``
    builds it; ``leg_seconds`` is the wall-clock time of this ``train()`` call so far."""

    def __init__(self, record: Callable[[TrainerState, float], dict]):
        self.record = record
        self.leg_start = time.monotonic()

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        self.leg_start = time.monotonic()

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        # The Trainer calls on_save once the checkpoint folder is written.
        folder = checkpoint_folder(args.output_dir, state.global_step)
        if state.is_world_process_zero and folder.is_dir():
            record = self.record(state, time.monotonic() - self.leg_start)
            atomic_write_text(folder / TRAINING_RECORD, json.dumps(record, indent=2))
