"""Labels for ASR output, transferred from the reference transcript (Sunkara et al. 2020).

ASR hypotheses carry recognition errors the reference transcript does not: substituted, dropped and
inserted words. Training on them makes a model robust to those errors, but a hypothesis has no
punctuation or casing of its own; its labels come from the reference by aligning the two word
sequences with the Levenshtein edit operations (rapidfuzz), as the ASR-mode metric aligns them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from ..labels import LabeledWords, LabelScheme, strongest_label

#: Casing classes that belong to a position (sentence start) or a plain word, not to one spelling:
#: a substituted word takes them over; ALL_UPPER and MIXED describe the reference word's own spelling.
_POSITIONAL_CASES = frozenset({"LOWER", "UPPER_FIRST"})


def transfer_labels(reference: LabeledWords, hypothesis: Sequence[str]) -> LabeledWords:
    """The hypothesis words (lowercased, as :meth:`LabelScheme.parse` gives words) with labels from the
    reference, aligned word by word.

    - a word aligned to an equal reference word takes both its labels; one aligned to a substituted
      word takes its punctuation, and its casing only when that is LOWER or UPPER_FIRST (else None);
    - the punctuation of reference words the hypothesis dropped goes to the hypothesis word before
      them, the stronger label winning, so that a sentence end is not lost with its last word;
    - an inserted word gets O and no casing label (None: left out of the loss).

    Labels the reference lacks (None: a corpus without casing, unlabelled words) stay None.
    """
    words = [word.lower() for word in hypothesis]
    punct: list[str | None] = []
    case: list[str | None] = []
    for op in Levenshtein.opcodes(reference.words, words):
        if op.tag == "equal":
            punct += reference.punct[op.src_start : op.src_end]
            case += reference.case[op.src_start : op.src_end]
        elif op.tag == "replace":  # one-to-one substitutions
            punct += reference.punct[op.src_start : op.src_end]
            case += [c if c in _POSITIONAL_CASES else None for c in reference.case[op.src_start : op.src_end]]
        elif op.tag == "insert":
            punct += ["O"] * (op.dest_end - op.dest_start)
            case += [None] * (op.dest_end - op.dest_start)
        elif punct:  # delete, after at least one hypothesis word
            known = [p for p in (punct[-1], *reference.punct[op.src_start : op.src_end]) if p is not None]
            punct[-1] = strongest_label(known) if known else None
    return LabeledWords(words, punct, case)


@dataclass(frozen=True)
class AsrHypothesis:
    """One ASR hypothesis with the punctuated, cased reference transcript of the same audio: a corpus
    document whose labels are transferred under the label scheme of the dataset being built."""

    reference: str
    hypothesis: str

    def labeled(self, scheme: LabelScheme) -> LabeledWords:
        return transfer_labels(scheme.parse(self.reference), scheme.parse(self.hypothesis).words)
