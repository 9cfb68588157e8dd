"""punct_case: word-level scores for punctuation and casing restoration.

Self-contained so that ``evaluate.load("<path>/punct_case")`` works offline without the plugin; the
plugin re-exports the class as ``hf_punctcase.metrics.PunctCase``.
"""

from __future__ import annotations

import string

import datasets
import evaluate
import numpy as np
from rapidfuzz.distance import Levenshtein
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

_DESCRIPTION = """
Per-class precision, recall and F1 for punctuation (O, COMMA, PERIOD, QUESTION, ...), casing (LOWER,
UPPER_FIRST, ALL_UPPER, MIXED) or disfluency (FLUENT, DISFLUENT) labels, word by word; the micro average
over every class but the null one ("overall": O for punctuation, LOWER for casing, FLUENT for disfluency,
so that its overall scores are the P/R/F1 of DISFLUENT); the slot error rate (S + D + I) / N over
non-null reference slots; and the confusion matrix.

Plain mode: predictions and references have one label per word and must have equal lengths.
ASR mode (pass `prediction_words` and `reference_words`): the hypothesis words are aligned to the
reference words by Levenshtein edit operations (rapidfuzz) on lowercased words without edge
punctuation; aligned and substituted pairs are scored label against label, a reference word the
hypothesis dropped counts as predicted null, and an inserted hypothesis word as a null reference.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list of label sequences (strings, or ids with `label_names`), one per example.
    references: list of label sequences in the same form; -100 (ids) marks positions to ignore.
    label_names: names of label ids, in id order (needed for ids).
    null_label: the class left out of "overall" and of slot counts (default: "O", "LOWER" for the
        "casing" configuration, "FLUENT" for the "disfluency" configuration; labels given as FLUENT /
        DISFLUENT strings also default to "FLUENT").
    prediction_words / reference_words: per-example word lists; switch on ASR alignment.
Returns:
    {"<CLASS>": {"precision", "recall", "f1", "support"}, ..., "overall_precision", "overall_recall",
     "overall_f1", "slot_error_rate", "confusion_matrix": {"labels": [...], "matrix": [[...]]},
     "words": number of scored pairs}
Example:
    >>> metric = evaluate.load("hf_punctcase/metrics/punct_case")
    >>> metric.compute(predictions=[["O", "PERIOD"]], references=[["O", "QUESTION"]])["overall_f1"]
    0.0
"""

_CITATION = """
@inproceedings{sunkara2020robust,
  title={Robust Prediction of Punctuation and Truecasing for Medical ASR},
  author={Sunkara, Monica and Ronanki, Srikanth and Dixit, Kalpit and Bodapati, Sravan and Kirchhoff, Katrin},
  booktitle={Proceedings of the First Workshop on Natural Language Processing for Medical Conversations},
  year={2020}
}
"""

IGNORE_INDEX = -100
_CANONICAL_ORDER = (
    "O", "COMMA", "PERIOD", "QUESTION", "EXCLAMATION", "COLON", "SEMICOLON",
    "LOWER", "UPPER_FIRST", "ALL_UPPER", "MIXED",
    "FLUENT", "DISFLUENT",
)
#: The null class of each configuration (the default configuration's is "O").
_NULL_LABEL_OF_CONFIG = {"casing": "LOWER", "disfluency": "FLUENT"}
_EDGE_PUNCTUATION = string.punctuation + "“”‘’«»…"


def _normalise(word: str) -> str:
    return word.strip(_EDGE_PUNCTUATION).lower()


def align_label_pairs(
    prediction_words: list[str],
    predictions: list[str],
    reference_words: list[str],
    references: list[str],
    null_label: str,
) -> list[tuple[str, str]]:
    """(reference label, predicted label) pairs after aligning hypothesis words to reference words."""
    if len(prediction_words) != len(predictions) or len(reference_words) != len(references):
        raise ValueError(
            f"ASR mode needs one label per word: {len(prediction_words)} hypothesis words with "
            f"{len(predictions)} labels, {len(reference_words)} reference words with {len(references)} labels"
        )
    pairs = []
    operations = Levenshtein.opcodes([_normalise(w) for w in reference_words], [_normalise(w) for w in prediction_words])
    for op in operations:
        if op.tag in ("equal", "replace"):
            pairs += zip(references[op.src_start : op.src_end], predictions[op.dest_start : op.dest_end])
        elif op.tag == "delete":
            pairs += [(ref, null_label) for ref in references[op.src_start : op.src_end]]
        else:  # insert
            pairs += [(null_label, pred) for pred in predictions[op.dest_start : op.dest_end]]
    return pairs


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PunctCase(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Sequence(datasets.Value("string")),
                        "references": datasets.Sequence(datasets.Value("string")),
                    }
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Sequence(datasets.Value("int64")),
                        "references": datasets.Sequence(datasets.Value("int64")),
                    }
                ),
            ],
        )

    def _compute(
        self,
        predictions,
        references,
        label_names: list[str] | None = None,
        null_label: str | None = None,
        prediction_words: list[list[str]] | None = None,
        reference_words: list[list[str]] | None = None,
    ) -> dict:
        predictions = [self._names(seq, label_names) for seq in predictions]
        references = [self._names(seq, label_names) for seq in references]
        if null_label is None:
            null_label = _NULL_LABEL_OF_CONFIG.get(self.config_name, "O")
            given = {label for seq in (*predictions, *references) for label in seq if label is not None}
            if given and given <= {"FLUENT", "DISFLUENT"}:
                null_label = "FLUENT"

        pairs: list[tuple[str, str]] = []
        if prediction_words is not None or reference_words is not None:
            if prediction_words is None or reference_words is None:
                raise ValueError("ASR mode needs both prediction_words and reference_words")
            if not len(prediction_words) == len(reference_words) == len(predictions):
                raise ValueError("prediction_words, reference_words and predictions need one entry per example")
            for hyp_words, hyp, ref_words, ref in zip(prediction_words, predictions, reference_words, references):
                pairs += align_label_pairs(hyp_words, hyp, ref_words, ref, null_label)
        else:
            for i, (hyp, ref) in enumerate(zip(predictions, references)):
                if len(hyp) != len(ref):
                    raise ValueError(
                        f"example {i}: {len(hyp)} predicted labels but {len(ref)} reference labels; plain mode "
                        "scores word against word (pass prediction_words and reference_words to align ASR output)"
                    )
                pairs += [(r, p) for r, p in zip(ref, hyp) if r is not None]
        return self.scores_from_pairs(pairs, null_label, label_names)

    @staticmethod
    def _names(sequence, label_names):
        if label_names is None:
            if sequence and not isinstance(sequence[0], str):
                raise ValueError("label ids need label_names")
            return list(sequence)
        return [None if (not isinstance(x, str) and x == IGNORE_INDEX) else (x if isinstance(x, str) else label_names[x]) for x in sequence]

    @staticmethod
    def scores_from_pairs(pairs: list[tuple[str, str]], null_label: str, label_names=None) -> dict:
        """All scores from (reference label, predicted label) pairs."""
        true = [r for r, _ in pairs]
        pred = [p for _, p in pairs]
        seen = set(true) | set(pred) | {null_label} | set(label_names or ())
        order = [c for c in _CANONICAL_ORDER if c in seen] + sorted(seen - set(_CANONICAL_ORDER))
        classes = [c for c in order if c != null_label]
        result: dict = {"words": len(pairs)}
        if pairs:
            p, r, f, support = precision_recall_fscore_support(true, pred, labels=classes, zero_division=0)
            for i, name in enumerate(classes):
                result[name] = {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": int(support[i])}
            p, r, f, _ = precision_recall_fscore_support(true, pred, labels=classes, average="micro", zero_division=0)
        else:
            for name in classes:
                result[name] = {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
            p = r = f = 0.0
        result.update(overall_precision=float(p), overall_recall=float(r), overall_f1=float(f))
        true_arr, pred_arr = np.array(true, dtype=object), np.array(pred, dtype=object)
        reference_slots = int((true_arr != null_label).sum())
        substitutions = int(((true_arr != null_label) & (pred_arr != null_label) & (true_arr != pred_arr)).sum())
        deletions = int(((true_arr != null_label) & (pred_arr == null_label)).sum())
        insertions = int(((true_arr == null_label) & (pred_arr != null_label)).sum())
        result["slot_error_rate"] = (substitutions + deletions + insertions) / reference_slots if reference_slots else 0.0
        matrix = confusion_matrix(true, pred, labels=order) if pairs else np.zeros((len(order), len(order)), dtype=int)
        result["confusion_matrix"] = {"labels": order, "matrix": matrix.tolist()}
        return result
