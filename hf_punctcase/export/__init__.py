"""Export: the trust_remote_code bundle written next to saved checkpoints, and ONNX export
(:func:`~hf_punctcase.export.onnx.export_onnx`)."""

from .onnx import OnnxExport, export_onnx, label_agreement
from .remote_code import REMOTE_CODE_TASK, RemoteCodeExporter, write_bundle

__all__ = ["REMOTE_CODE_TASK", "OnnxExport", "RemoteCodeExporter", "export_onnx", "label_agreement", "write_bundle"]
