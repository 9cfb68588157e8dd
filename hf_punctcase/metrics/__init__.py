"""The punct_case metric, as a class and as an ``evaluate`` module folder.

    metric = evaluate.load(hf_punctcase.metrics.PUNCT_CASE_METRIC_PATH)            # or "casing"
    metric = hf_punctcase.metrics.PunctCase()                                      # same, as a class


The metric needs the ``metric`` extra (``pip install "hf_punctcase[metric]"``: evaluate and scikit-learn),
which a plain install, which restores, leaves out.
"""

from pathlib import Path

from ..extras import require_extra

require_extra("metric", "hf_punctcase.metrics", {"evaluate": "evaluate", "sklearn": "scikit-learn"})

from .punct_case.punct_case import PunctCase, align_label_pairs  # noqa: E402

#: Folder to pass to ``evaluate.load``.
PUNCT_CASE_METRIC_PATH = str(Path(__file__).resolve().parent / "punct_case")

__all__ = ["PUNCT_CASE_METRIC_PATH", "PunctCase", "align_label_pairs"]
