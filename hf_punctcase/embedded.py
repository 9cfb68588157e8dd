"""The models shipped inside the package, by the names users give them (torch-free).

``"default"`` is the 6-layer transformer (int8-stored safetensors, see model_cards/default.md);
``"accurate"`` the 12-layer transformer, more accurate and about twice as slow (int8-stored
safetensors, model_cards/accurate.md); ``"on-device"`` the small CNN-BiLSTM as an int8 ONNX graph
(model_cards/on_device.md), which the pipeline runs with ONNX Runtime and
:class:`hf_punctcase.runtime.OnDeviceRestorer` runs without torch; ``"open"`` the default's architecture
and recipe trained only on text whose licences allow commercial use (int8-stored safetensors,
model_cards/open.md): punctuation and casing, no disfluency, command or paragraph head.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: The default checkpoint: ``pipeline("punct-case")`` with no model loads it.
DEFAULT_MODEL_DIR = PACKAGE_DIR / "default_model"
#: The accurate model: all 12 layers of the default's encoder, stored int8 as the default is.
ACCURATE_MODEL_DIR = PACKAGE_DIR / "accurate_model"
#: The on-device model: an int8 ONNX export of the CNN-BiLSTM family.
ON_DEVICE_MODEL_DIR = PACKAGE_DIR / "on_device_model"
#: The model a company may use: the default's architecture and recipe on corpora that all allow commercial use.
OPEN_MODEL_DIR = PACKAGE_DIR / "open_model"
#: Name → folder of every embedded model.
EMBEDDED_MODELS = {
    "default": DEFAULT_MODEL_DIR,
    "accurate": ACCURATE_MODEL_DIR,
    "on-device": ON_DEVICE_MODEL_DIR,
    "open": OPEN_MODEL_DIR,
}


def embedded_model_dir(name: str | os.PathLike | None) -> Path | None:
    """The folder of the embedded model called ``name`` (None also names the default), or None when
    ``name`` is not one of :data:`EMBEDDED_MODELS`' names."""
    if name is None:
        return DEFAULT_MODEL_DIR
    return EMBEDDED_MODELS.get(name) if isinstance(name, str) else None


__all__ = [
    "ACCURATE_MODEL_DIR", "DEFAULT_MODEL_DIR", "EMBEDDED_MODELS", "ON_DEVICE_MODEL_DIR", "OPEN_MODEL_DIR", "embedded_model_dir",
]
