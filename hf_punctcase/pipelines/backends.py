"""Backends: subword ids in, per-task probabilities out. The pipeline and restoration never touch a
model's outputs directly; a backend names each head's probabilities by task (``"punct"``, ``"case"``,
and any further head a model family carries), as NumPy arrays on the CPU."""

from __future__ import annotations

import numpy as np
import torch

#: Output fields that hold a task head's logits: ``<task>_logits``. ``logits`` itself is an alias
#: (for transformers' token-classification pipeline), not a task of its own.
_LOGITS_SUFFIX = "_logits"


class TorchBackend:
    """Runs a torch model of any family whose output has one ``<task>_logits`` field per head."""

    def __init__(self, model: torch.nn.Module):
        self.model = model

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, np.ndarray]:
        output = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        probs = {}
        for name, value in output.items():
            if name.endswith(_LOGITS_SUFFIX) and value is not None:
                # float() first: bf16 has no NumPy dtype; cpu() for a model on an accelerator.
                probs[name[: -len(_LOGITS_SUFFIX)]] = value.float().softmax(-1).cpu().numpy()
        return probs


def native_bf16_cpu() -> bool:
    """Whether this CPU has bf16 matrix units (AMX), where bf16 inference is faster than fp32 at the
    same dev F1 (benchmarks/speed.py, docs/benchmarks.md)."""
    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(probe and probe())


__all__ = ["TorchBackend", "native_bf16_cpu"]
