"""Which split a document belongs to: a corpus's own splits where it has them, otherwise a stable hash
of the document id (:func:`document_split`), so that no document is in two splits."""

from __future__ import annotations

import hashlib

#: Split names a corpus can give.
SPLITS = ("train", "validation", "test")

#: How the annotated Switchboard calls are split (by call; 26 / 7 / 3 calls of the 36).
SWITCHBOARD_SPLIT = {"validation": 0.1, "test": 0.1}


def document_split(doc_id: str, validation: float = 0.05, test: float = 0.05) -> str:
    """A stable split for a document from a hash of its id (the same on every machine and run)."""
    bucket = int(hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    if bucket < test:
        return "test"
    if bucket < test + validation:
        return "validation"
    return "train"
