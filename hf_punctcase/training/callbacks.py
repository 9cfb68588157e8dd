"""Trainer callbacks of the training runs."""

from __future__ import annotations

import time

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments


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
