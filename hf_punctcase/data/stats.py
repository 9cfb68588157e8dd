"""Words and label counts per corpus and split (``hf-punctcase stats``)."""

from __future__ import annotations

from collections import Counter

import datasets

from ..labels import MISSING_LABEL
from .disfluency import DISFLUENCY_LABELS


def split_stats(dataset: datasets.Dataset) -> dict:
    """Examples, words and label counts of one split (labels a source cannot give are counted apart)."""
    punct_names = dataset.features["punct"].feature.names
    case_names = dataset.features["case"].feature.names
    punct, case, disfluency = Counter(), Counter(), Counter()
    words = 0
    for batch in dataset.iter(batch_size=1000):
        for row in batch["punct"]:
            words += len(row)
            punct.update(row)
        for row in batch["case"]:
            case.update(row)
        for row in batch["disfluency"]:
            disfluency.update(row)
    return {
        "examples": len(dataset),
        "words": words,
        **{name: punct[i] for i, name in enumerate(punct_names) if name != "O"},
        **{name: case[i] for i, name in enumerate(case_names) if name != "LOWER"},
        "no casing": case[MISSING_LABEL],
        "disfluent": disfluency[DISFLUENCY_LABELS.index("DISFLUENT")],
    }


def stats_table(rows: list[tuple[str, str, dict]]) -> str:
    """Markdown table of ``(corpus, split, split_stats)`` rows."""
    columns = list(rows[0][2]) if rows else []
    lines = ["| corpus | split | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for corpus, split, stats in rows:
        lines.append(f"| {corpus} | {split} | " + " | ".join(f"{stats[c]:,}" for c in columns) + " |")
    return "\n".join(lines)
