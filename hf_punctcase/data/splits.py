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


#: The held-out documents of each sharded corpus, by corpus: whole documents, never a part of one.
#: The hashed corpora keep a share of their documents (podcast episodes, court arguments, articles,
#: books) for validation and as much for test; the UN debates keep whole sessions, by year.
SHARDED_HOLDOUT: dict[str, dict] = {
    "changelog": {"validation": 0.01, "test": 0.01},
    "scotus": {"validation": 0.01, "test": 0.01},
    "wikipedia_2015": {"validation": 0.005, "test": 0.005},
    "gutenberg": {"validation": 0.03, "test": 0.03},
    "ungd": {"validation_years": ("2005",), "test_years": ("2015",)},
}


def sharded_document_id(name: str, document: dict) -> str:
    """The id of one document of sharded corpus ``name``: its shard id under the corpus's name."""
    return f"{name}/{document['id']}"


def sharded_split(name: str, document: dict) -> str:
    """The split of one document of a sharded corpus (:data:`SHARDED_HOLDOUT`)."""
    holdout = SHARDED_HOLDOUT[name]
    if "validation_years" in holdout:
        year = str(document.get("date", ""))[:4]
        if year in holdout["test_years"]:
            return "test"
        return "validation" if year in holdout["validation_years"] else "train"
    return document_split(sharded_document_id(name, document), **holdout)
