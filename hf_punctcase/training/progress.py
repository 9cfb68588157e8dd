"""A training run's dev F1 curve, with how much the run had trained at each evaluation.

    from hf_punctcase.training.progress import training_curve, curve_markdown
    print(curve_markdown(training_curve("runs/cnn_bilstm/long")))

The curve is read from the Trainer's log history: the newest checkpoint's ``trainer_state.json`` in a run
folder (or the ``training_summary.json`` of its ``final`` folder, when that went further), a checkpoint
folder, or a final folder. Words seen and hours come from what
:class:`~hf_punctcase.training.callbacks.TrainingProgress` writes into each entry; entries logged before a
run recorded them get the words from the run's words per step, and no hours.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from transformers.trainer_utils import get_last_checkpoint

from ..cards.training_records import training_record

_TASK_ORDER = {"punct": 0, "case": 1, "disfl": 2}
_OVERALL_F1 = re.compile(r"^eval_(?P<task>\w+?)_overall_f1$")


@dataclass
class CurvePoint:
    """One evaluation of a run: its step, what the run had trained by then, dev F1 by task
    (``{"punct": 0.61, "case": 0.77}``), the dev loss, and the learning rate of the newest training log
    entry (a schedule that cuts the rate when the dev loss stalls shows where it did)."""

    step: int
    words_seen: int | None
    train_hours: float | None
    train_cpu_hours: float | None
    loss: float | None
    hours_since_step: int = 0
    dev_f1: dict[str, float] = field(default_factory=dict)
    dev_loss: float | None = None
    learning_rate: float | None = None


def _history_of(folder: Path) -> list[dict] | None:
    state = folder / "trainer_state.json"
    record = json.loads(state.read_text()) if state.is_file() else training_record(folder)
    return record["log_history"] if record is not None else None


def log_history(path: str | os.PathLike) -> list[dict]:
    """The longest log history a run folder, a checkpoint folder or a final folder holds."""
    folder = Path(path)
    candidates = [folder]
    if folder.is_dir():
        newest = get_last_checkpoint(str(folder))
        candidates += [Path(newest)] if newest else []
        candidates.append(folder / "final")
    histories = [history for history in map(_history_of, candidates) if history]
    if not histories:
        raise FileNotFoundError(f"{folder} holds no trainer_state.json or training_summary.json, in itself, a checkpoint or final/")
    # The furthest step; at the same step, final/ also holds the last evaluation after training.
    return max(histories, key=lambda history: (max((entry.get("step", 0) for entry in history), default=0), len(history)))


def training_curve(path: str | os.PathLike) -> list[CurvePoint]:
    """Every evaluation in a run's log history, in step order (see the module's docstring)."""
    history = sorted(log_history(path), key=lambda entry: entry.get("step", 0))
    recorded = [entry for entry in history if "words_seen" in entry and entry.get("step")]
    words_per_step = recorded[-1]["words_seen"] / recorded[-1]["step"] if recorded else None
    points: list[CurvePoint] = []
    loss = learning_rate = None
    # Entries of one step (a training loss, then an evaluation) share their step: carry the loss and the
    # learning rate forward.
    for entry in history:
        if "loss" in entry:
            loss = entry["loss"]
        learning_rate = entry.get("learning_rate", learning_rate)
        dev_f1 = {m["task"]: float(v) for k, v in entry.items() if (m := _OVERALL_F1.match(k))}
        if not dev_f1:
            continue
        step = entry["step"]
        words = entry.get("words_seen")
        if words is None and words_per_step is not None:
            words = round(step * words_per_step)
        points.append(CurvePoint(
            step, words, entry.get("train_hours"), entry.get("train_cpu_hours"), loss, entry.get("hours_since_step", 0), dev_f1,
            _number(entry.get("eval_loss")), _number(learning_rate),
        ))
    return points


def _number(value) -> float | None:
    # The Trainer logs some values as strings when it rounds them for printing.
    return None if value is None else float(value)


def curve_markdown(points: list[CurvePoint]) -> str:
    """The curve as a Markdown table: one row an evaluation, F1 in points."""
    tasks = sorted({task for point in points for task in point.dev_f1}, key=lambda t: (_TASK_ORDER.get(t, len(_TASK_ORDER)), t))

    def cell(value, spec: str) -> str:
        return "–" if value is None else format(value, spec)

    lines = [
        "| step | words seen | hours | CPU core-hours | learning rate | training loss | dev loss | "
        + " | ".join(f"dev {t} F1" for t in tasks) + " |",
        "|---:" * (7 + len(tasks)) + "|",
    ]
    for point in points:
        words = "–" if point.words_seen is None else f"{point.words_seen / 1e6:.2f}M"
        lines.append(
            f"| {point.step:,} | {words} | {cell(point.train_hours, '.2f')} | {cell(point.train_cpu_hours, '.2f')} "
            f"| {cell(point.learning_rate, '.3g')} | {cell(point.loss, '.4f')} | {cell(point.dev_loss, '.4f')} | "
            + " | ".join(cell(None if t not in point.dev_f1 else 100 * point.dev_f1[t], ".1f") for t in tasks)
            + " |"
        )
    since = max((point.hours_since_step for point in points if point.train_hours is not None), default=0)
    if since:
        lines.append(f"\nHours count from step {since:,}: the run recorded them from there on.")
    return "\n".join(lines)
