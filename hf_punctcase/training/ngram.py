"""Selecting external text close to a target domain by n-gram perplexity (Sunkara et al. 2021, §3).

A 4-gram LM is estimated on in-domain text as ASR gives it (lowercase words, no punctuation) with
IRSTLM (Debian package ``irstlm``; modified shift-beta smoothing, an ARPA file), every sentence of an
external corpus is scored with the ``kenlm`` Python module, and the lowest-perplexity sentences are
kept, with their original punctuation and casing, as training text.

Install: ``apt-get install irstlm`` and ``CMAKE_POLICY_VERSION_MINIMUM=3.5 pip install kenlm``
(the kenlm sdist predates CMake 4; the variable lets it configure).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..data.builder import SENTENCE_END

if TYPE_CHECKING:
    import kenlm

IRSTLM_SMOOTHING = ("msb", "wb", "sb", "kn", "mkn")  # modified shift-beta, Witten-Bell, shift-beta, Kneser-Ney


@dataclass
class Sentence:
    """One sentence of a labelled example: its words (lowercase) and label ids."""

    doc_id: str
    words: list[str]
    punct: list[int]
    case: list[int]

    @property
    def lm_text(self) -> str:
        return " ".join(self.words)


def split_sentences(rows: Iterable[dict], punct_names: Sequence[str]) -> Iterator[Sentence]:
    """Sentences of labelled examples (``load_punct_case_dataset`` rows), cut after . ? !."""
    ends = {i for i, name in enumerate(punct_names) if name in SENTENCE_END}
    for row in rows:
        start = 0
        for i, label in enumerate(row["punct"]):
            if label in ends or i == len(row["punct"]) - 1:
                yield Sentence(row["doc_id"], row["words"][start : i + 1], row["punct"][start : i + 1], row["case"][start : i + 1])
                start = i + 1


def irstlm_tool(name: str) -> str:
    """Path of an IRSTLM program (``$IRSTLM/bin``, then PATH, then Debian's /usr/lib/irstlm/bin)."""
    candidates = []
    if os.environ.get("IRSTLM"):
        candidates.append(Path(os.environ["IRSTLM"]) / "bin" / name)
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    candidates.append(Path("/usr/lib/irstlm/bin") / name)
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    raise FileNotFoundError(f"IRSTLM's {name!r} was not found: install it (apt-get install irstlm) or set $IRSTLM")


def train_ngram_lm(
    sentences: Iterable[str], output: str | os.PathLike, order: int = 4, smoothing: str = "msb"
) -> Path:
    """Estimate an n-gram LM on ``sentences`` (one per item, words separated by spaces) with IRSTLM's
    ``tlm`` and write it as ARPA to ``output``. ``smoothing``: msb (modified shift-beta, the default
    for real corpora), wb (Witten-Bell, robust on tiny corpora), sb, kn, mkn."""
    if smoothing not in IRSTLM_SMOOTHING:
        raise ValueError(f"smoothing must be one of {IRSTLM_SMOOTHING}, got {smoothing!r}")
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "train.txt"
        count = 0
        with open(text, "w", encoding="utf-8") as handle:
            for sentence in sentences:
                sentence = " ".join(sentence.split())
                if sentence:
                    handle.write(f"<s> {sentence} </s>\n")
                    count += 1
        if count == 0:
            raise ValueError("no in-domain sentence to train the n-gram LM on")
        command = [irstlm_tool("tlm"), f"-tr={text}", f"-n={order}", f"-lm={smoothing}", f"-o={output}"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0 or not output.is_file():
            raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return output


def load_lm(lm: str | os.PathLike | kenlm.Model):
    import kenlm

    return lm if isinstance(lm, kenlm.Model) else kenlm.Model(str(lm))


def perplexities(lm, sentences: Iterable[str]) -> list[float]:
    """Per-sentence perplexity under an ARPA (or KenLM binary) model, with <s> and </s>."""
    model = load_lm(lm)
    return [model.perplexity(sentence) for sentence in sentences]


def oov_rates(lm, sentences: Iterable[str]) -> list[float]:
    """Per-sentence share of words the LM has never seen. Perplexity alone rewards sentences made of
    unknown words (they all score as <unk>), so selection also bounds this rate."""
    model = load_lm(lm)
    rates = []
    for sentence in sentences:
        words = sentence.split()
        rates.append(sum(word not in model for word in words) / max(len(words), 1))
    return rates


def select_by_perplexity(
    sentences: Sequence[Sentence],
    scores: Sequence[float],
    max_words: int,
    min_words: int = 3,
    oov: Sequence[float] | None = None,
    max_oov_rate: float = 1.0,
) -> list[int]:
    """Indices of the lowest-perplexity sentences (of at least ``min_words`` words, and at most
    ``max_oov_rate`` unknown words when ``oov`` rates are given) up to ``max_words`` words, in their
    original order so that kept neighbours read as running text."""
    if len(sentences) != len(scores) or (oov is not None and len(oov) != len(scores)):
        raise ValueError(f"{len(sentences)} sentences but {len(scores)} scores")
    eligible = (
        i for i, s in enumerate(sentences) if len(s.words) >= min_words and (oov is None or oov[i] <= max_oov_rate)
    )
    ranked = sorted(eligible, key=lambda i: scores[i])
    kept, total = [], 0
    for index in ranked:
        if total + len(sentences[index].words) > max_words:
            break
        kept.append(index)
        total += len(sentences[index].words)
    return sorted(kept)
