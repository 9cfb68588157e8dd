"""Seconds per training step of a model on one batch, for the training-speed benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext

import torch


def training_step_times(
    model: torch.nn.Module, batch: dict, steps: int, bf16: bool, loss_fn: Callable | None = None, warmup: int = 2
) -> list[float]:
    """Seconds of each of ``steps`` steps (forward, backward, AdamW update) after ``warmup`` steps that are
    not counted; ``bf16`` runs the forward under CPU bf16 autocast; ``loss_fn(model, batch)`` defaults to the
    model's own loss."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    context = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else nullcontext()
    times = []
    for _ in range(steps + warmup):
        start = time.perf_counter()
        with context:
            loss = loss_fn(model, batch) if loss_fn else model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        times.append(time.perf_counter() - start)
    return times[warmup:]
