"""On-device restoration without torch or transformers: ONNX Runtime, tokenizers and NumPy only.

    from hf_punctcase.runtime import OnDeviceRestorer

    restore = OnDeviceRestorer("exports/model-int8")       # a folder written by hf-punctcase export-onnx
    restore("so what are the risks i am not technical")["text"]
    # 'So what are the risks? I am not technical.'

The windows, subwords and decoding are :mod:`hf_punctcase.restoration`'s, as in the ``punct-case``
pipeline, so the text is the pipeline's on the same folder. Install only what it needs with the
``[runtime]`` extra's packages (``onnxruntime``, ``tokenizers``, ``numpy``); without torch and
transformers installed, ``import hf_punctcase`` skips the transformers plugin and this subpackage works.
"""

from ..backends.onnxruntime import EXPORT_INFO_FILE, ONNX_MODEL_FILE, OnnxBackend
from .restorer import OnDeviceRestorer, read_export_settings
from .tokenizer import RuntimeTokenizer

__all__ = ["EXPORT_INFO_FILE", "ONNX_MODEL_FILE", "OnDeviceRestorer", "OnnxBackend", "RuntimeTokenizer", "read_export_settings"]
