"""The records training leaves with a checkpoint, and the card's account of the training they describe:
``training_summary.json`` (the finetuning recipe's, one per stage, each naming the checkpoint it went on
from as ``init``), ``mlm_summary.json`` (an encoder's MLM adaptation) and a Trainer checkpoint's
``trainer_state.json``."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path


def mlm_record(encoder: str | None) -> dict | None:
    """The record recipes/mlm_adapt.py left with a domain-adapted encoder (mlm_summary.json), if any."""
    path = Path(encoder) / "mlm_summary.json" if encoder else None
    return json.loads(path.read_text()) if path is not None and path.is_file() else None


def mlm_corpora(record: dict) -> list[str]:
    """The corpus specs an MLM adaptation record names: its corpora and unlabelled text."""
    if "corpora" in record:
        return [*record["corpora"], *record.get("unlabeled", [])]
    # Records written before the corpora were stored: read them off the recorded command line.
    names, collecting = [], False
    for token in shlex.split(record.get("command", "")):
        if token.startswith("--"):
            collecting = token in ("--corpora", "--unlabeled")
        elif collecting:
            names.append(token)
    return names


def checkpoint_step(checkpoint: str | os.PathLike | None) -> int | None:
    """The step a Trainer checkpoint was saved at, or None without one. A recipe resumed from a checkpoint
    records it, so that its card does not pass the time of the last leg off as the time of the whole run."""
    if not checkpoint:
        return None
    return json.loads((Path(checkpoint) / "trainer_state.json").read_text())["global_step"]


def _timed_steps(record: dict) -> str:
    minutes, steps, resumed = record["train_seconds"] / 60, record["global_step"], record.get("resumed_from_step")
    if "train_hours" in record:
        # Summed over every leg of a run that was stopped and resumed (TrainingProgress).
        hours = f"{record['train_hours']:.1f} h ({record['train_cpu_hours']:.1f} CPU core-hours)"
        since = record.get("hours_since_step", 0)
        return f"{steps} steps, {hours}" if not since else f"{steps} steps (steps {since}–{steps} took {hours})"
    if resumed is None:
        return f"{minutes:.0f} min, {steps} steps"
    return f"{steps} steps (resumed from step {resumed}; steps {resumed}–{steps} took {minutes:.0f} min)"


def mlm_description(record: dict) -> str:
    """An MLM adaptation in words, for the card's training time: masking, steps, time and words."""
    return (
        f"MLM adaptation ({record.get('masking', 'random')} masking): {_timed_steps(record)} over "
        f"{record['words']:,} words"
    )


#: The finetuning recipe's record of training, in its final folder and in each checkpoint it saves.
TRAINING_RECORD = "training_summary.json"


def training_record(folder: Path) -> dict | None:
    """The finetuning recipe's record of a checkpoint folder (training_summary.json), if any."""
    path = folder / TRAINING_RECORD
    return json.loads(path.read_text()) if path.is_file() else None


def stage_description(summary: dict) -> str:
    """A training stage in words, for the card's training time: steps, time, epochs and words seen, the
    teacher it was distilled from, and the checkpoints its weights average."""
    epoch = summary.get("epoch", (summary.get("dev_metrics") or {}).get("epoch"))
    text = _timed_steps(summary)
    if epoch is not None:
        text += f", {epoch:.2f} epoch of {summary['train_words']:,} words (≈ {epoch * summary['train_words'] / 1e6:.1f}M words seen)"
    if summary.get("distillation"):
        record = summary["distillation"]
        text += (
            f", distilled from {record['teacher']} (temperature {record['temperature']:g}, soft-target weight "
            f"{record['distill_weight']:g})"
        )
    if summary.get("averaged_checkpoints"):
        entries = summary["averaged_checkpoints"]
        if "stage" in entries[0]:  # a soup of stages names each; averaging never mixes the two kinds
            ends = ", ".join(f"{entry['stage']} at step {entry['step']:,}" for entry in entries)
            text += f"; the weights are the mean of the ends of stages branched from one checkpoint: {ends}"
        else:
            steps = ", ".join(f"{entry['step']:,}" for entry in entries)
            text += f"; the weights are the mean of the run's checkpoints at steps {steps}"
    return text


def training_chain(folder: Path, summary: dict) -> list[tuple[Path, dict]]:
    """This checkpoint's training record and those of the checkpoints it went on from (``init``)."""
    chain, seen = [(folder, summary)], {folder.resolve()}
    while chain[-1][1].get("init"):
        previous = Path(chain[-1][1]["init"])
        record = training_record(previous) if previous.is_dir() else None
        if record is None or previous.resolve() in seen:
            break
        seen.add(previous.resolve())
        chain.append((previous, record))
    return chain[::-1]
