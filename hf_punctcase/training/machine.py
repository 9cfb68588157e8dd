"""The machine a run trains on: described for its record, and bf16 asked of a CPU that only emulates it
turned into fp32."""

from __future__ import annotations

import logging
import os
import platform

import torch
from transformers import TrainingArguments

logger = logging.getLogger(__name__)


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


__all__ = ["describe_machine", "fall_back_from_emulated_bf16"]
