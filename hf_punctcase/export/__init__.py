"""Export: the trust_remote_code bundle written next to saved checkpoints."""

from .remote_code import REMOTE_CODE_TASK, RemoteCodeExporter, write_bundle

__all__ = ["REMOTE_CODE_TASK", "RemoteCodeExporter", "write_bundle"]
