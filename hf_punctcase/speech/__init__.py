"""The offline speech loop (the ``[asr]`` extra): punctuated text → Piper TTS → noise → PocketSphinx /
Whisper hypotheses with word error rates, for ``asr_hypotheses`` training data and ASR dev sets.

``recipes/speech_loop.py`` runs it from the command line. Importing this package needs nothing of the
extra; the classes load piper-tts, pocketsphinx, faster-whisper and their model packages when built.
"""

from .loop import (
    SENTENCE_ENDS,
    SpeechLoop,
    SpeechLoopConfig,
    Utterance,
    run_speech_loop,
    summarize,
    utterances,
)
from .normalization import normalize_transcript, spell_numbers
from .records import one_best_kept, passages, read_records

__all__ = [
    "SENTENCE_ENDS",
    "SpeechLoop",
    "SpeechLoopConfig",
    "Utterance",
    "normalize_transcript",
    "one_best_kept",
    "passages",
    "read_records",
    "run_speech_loop",
    "spell_numbers",
    "summarize",
    "utterances",
]
