"""The licence of a checkpoint, from the licences of the data it was trained on: the card's
``license`` / ``license_name`` metadata and the sentence its training-data section states."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .facts import TrainingDataset


#: The licences of the training corpora (hf_punctcase.data.LICENCES) that have a Hub licence id: a card
#: whose data all share one of them is under it; any other mix is "other", described in the card.
HUB_LICENCES = {
    "CC BY 4.0": "cc-by-4.0",
    "CC0": "cc0-1.0",
    "CC BY-SA 3.0": "cc-by-sa-3.0",
    "CC BY-SA 4.0": "cc-by-sa-4.0",
    "CC BY-NC-ND 3.0": "cc-by-nc-nd-3.0",
    "CC BY-NC-SA 3.0": "cc-by-nc-sa-3.0",
    "CC BY-NC-SA 4.0": "cc-by-nc-sa-4.0",
}


def is_non_commercial(licence: str) -> bool:
    """A licence that forbids commercial use: a corpus licence hf_punctcase.data lists as such, or one a
    base checkpoint's card gave (a Hub id such as cc-by-nc-4.0, or a name saying non-commercial)."""
    from ..data.builder import NON_COMMERCIAL

    return licence in NON_COMMERCIAL or "non-commercial" in licence.lower() or bool(re.search(r"\bnc\b", licence.lower()))


def licence_metadata(datasets: Sequence[TrainingDataset]) -> tuple[str, str | None]:
    """``(license, license_name)`` of a checkpoint trained on ``datasets``: a non-commercial licence among
    them makes the whole checkpoint non-commercial; one shared licence with a Hub id is that licence."""
    licences = {d.licence for d in datasets}
    if not licences:
        return "unknown", None
    if any(map(is_non_commercial, licences)):
        return "other", "non-commercial"
    if len(licences) == 1 and next(iter(licences)) in HUB_LICENCES:
        return HUB_LICENCES[next(iter(licences))], None
    if "unknown" in licences:
        return "unknown", None
    return "other", "as-the-training-data"


def licence_text(datasets: Sequence[TrainingDataset]) -> str:
    """The licence in words, as the card's training-data section states it."""
    licences = sorted({d.licence for d in datasets})
    if not licences:
        return "unknown (no training data recorded)"
    non_commercial = [licence for licence in licences if is_non_commercial(licence)]
    if non_commercial:
        return f"non-commercial (trained on {', '.join(non_commercial)} data)"
    return f"as the training data: {', '.join(licences)}"


def licence_note(datasets: Sequence[TrainingDataset]) -> str:
    """The card's note on what use the checkpoint's training data allows."""
    if any(is_non_commercial(d.licence) for d in datasets):
        ted = any(d.corpus.startswith("ted") or "TED" in d.name for d in datasets)
        return (
            "Licence: some of the training text is under non-commercial licences "
            "(Training data), so this checkpoint is for non-commercial use only"
            + ("; read the TED terms (no derivatives) before redistributing it." if ted else ".")
        )
    if not datasets or any(d.licence in ("unknown", "as the user's data") for d in datasets):
        return "Licence: the licence of some of the training text is not recorded (Training data); check it before any use."
    return (
        "Licence: no corpus of the training text forbids commercial use (Training data lists each one's licence); "
        "their terms follow the checkpoint (attribution, and share-alike where a corpus asks for it)."
    )
