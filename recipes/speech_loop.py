"""Turn punctuated text into ASR hypotheses through speech (hf_punctcase.speech, the [asr] extra):
Piper TTS → pink noise / speed → PocketSphinx n-best and Whisper tiny.en 1-best, WER per hypothesis.

The output is JSON lines that the ``asr_hypotheses`` corpus reads (labels transferred from each
reference), plus OUTPUT.summary.json with the WER distribution and the loop's speed, and
OUTPUT.provenance.json naming the corpus the text came from (a model trained on the output carries its
licence, and its card lists it). Rerunning the same command resumes where it stopped.

    # training data: TED train talks (the 5% test share and the dev talks are never read)
    python recipes/speech_loop.py --documents ted-train --max-utterances 2000 --output runs/speech/ted_train.jsonl
    # the TED ASR dev set every model is scored on (reproducible: fixed seed, deterministic voice)
    python recipes/speech_loop.py --documents ted-dev --dev-set --output runs/speech/ted_dev_asr.jsonl
    # the user's punctuated text (.txt or .jsonl with "text")
    python recipes/speech_loop.py --documents my_text.jsonl --output my_asr.jsonl
    # Whisper alone at the ASR dev set's noise, its utterances joined into passages of running speech
    python recipes/speech_loop.py --documents ted-train --utterances-per-document 8 --max-utterances 3000 \
        --recognizers whisper --snr-db 15 10 5 0 --max-wer 0.4 --output runs/speech/ted_train_noisy.jsonl \
        --passages-copy runs/speech/ted_train_noisy_passages.jsonl
    # the ASR errors it saw, for simulated noise at any scale (--asr_noise_model of the training recipes)
    python recipes/speech_loop.py --documents ted-train --max-utterances 2000 --output runs/speech/ted_train.jsonl \
        --noise-model runs/speech/asr_noise.json
    # train on it (--one-best-copy writes the same records with their 1-best only, for comparison)
    python recipes/finetune.py ... --train_corpora ted asr_hypotheses:runs/speech/ted_train.jsonl=2 \
        --asr_noise_model runs/speech/asr_noise.json --asr_noise_corpora ted=0.1
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from itertools import islice
from pathlib import Path

from hf_punctcase.data import data_dir, document_split, read_iwslt_cased, read_ted_talks, read_text_files
from hf_punctcase.data.asr_noise import AsrNoiseModel
from hf_punctcase.atomic_files import atomic_write_text
from hf_punctcase.cards.lineage import write_text_provenance
from hf_punctcase.speech import SpeechLoopConfig, one_best_kept, passages, read_records, run_speech_loop, utterances

#: --documents → the corpus its text is recorded as (the ``LICENCES`` entry a model card shows).
TEXT_CORPORA = {"ted-train": "ted", "ted-dev": "ted_dev"}

#: The dev set's settings: one modern recogniser (PocketSphinx's errors on noisy speech are far from
#: what users' ASR makes), noise from 15 to 0 dB (Whisper tiny.en makes about 6% word errors at 20 to
#: 30 dB, too few for ASR output as users have it), every hypothesis kept, Piper without sampling noise.
DEV_SET = {"recognizers": ("whisper",), "snr_db": (15.0, 10.0, 5.0, 0.0), "max_wer": None, "voice_variation": False}


def documents(name: str, data_root: str | None, seed: int):
    if name == "ted-dev":
        root = data_dir(data_root)
        return list(read_iwslt_cased([root / "iwslt" / "dev2010_cased.txt", root / "iwslt" / "tst2012_cased.txt"]))
    if name == "ted-train":
        # the ted corpus's own train split (its test share held out; dev talks are separate files)
        talks = [(i, t) for i, t in read_ted_talks(data_dir(data_root) / "ted" / "talks.jsonl")
                 if document_split(i, validation=0.0, test=0.05) == "train"]
        random.Random(seed).shuffle(talks)
        return talks
    path = Path(name)
    if not path.is_file():
        raise SystemExit(f"speech_loop: error: --documents {name}: not ted-train, ted-dev or a file")
    return list(read_text_files([path]))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", required=True, help="ted-train, ted-dev, or a .txt / .jsonl file of punctuated text")
    parser.add_argument("--output", required=True, help="JSON lines to write (appended to when resuming)")
    parser.add_argument("--data-dir", default=None, help="corpus folder (default ../shared/data)")
    parser.add_argument("--dev-set", action="store_true", help="dev-set settings: " + json.dumps(DEV_SET))
    parser.add_argument("--max-utterances", type=int, default=None, help="stop after this many utterances")
    parser.add_argument("--utterances-per-document", type=int, default=None,
                        help="take at most this many utterances of each document (spreads a sample over more talks)")
    parser.add_argument("--max-words", type=int, default=30, help="words per utterance at most (whole sentences where they fit)")
    parser.add_argument("--recognizers", nargs="+", default=list(SpeechLoopConfig.recognizers))
    parser.add_argument("--nbest", type=int, default=SpeechLoopConfig.nbest)
    parser.add_argument("--snr-db", nargs="+", default=["clean", "30", "25", "20"],
                        help="pink-noise SNRs drawn from per utterance ('clean': none)")
    parser.add_argument("--length-scales", nargs="+", type=float, default=list(SpeechLoopConfig.length_scales))
    parser.add_argument("--max-wer", type=float, default=SpeechLoopConfig.max_wer, help="drop hypotheses above this WER")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one-best-copy", default=None,
                        help="also write a copy of the output whose records keep their 1-best hypothesis only")
    parser.add_argument("--passages-copy", default=None,
                        help="also write a copy whose records join consecutive utterances of a document (their 1-best "
                             "hypotheses, of the last --recognizers) into passages, as the pipeline reads running speech")
    parser.add_argument("--noise-model", default=None,
                        help="also write the ASR errors of the whole output as an AsrNoiseModel JSON (simulated noise)")
    args = parser.parse_args(argv)

    settings = {
        "recognizers": tuple(args.recognizers),
        "nbest": args.nbest,
        "snr_db": tuple(None if value == "clean" else float(value) for value in args.snr_db),
        "length_scales": tuple(args.length_scales),
        "max_wer": args.max_wer,
        "seed": args.seed,
    }
    config = SpeechLoopConfig(**{**settings, **(DEV_SET if args.dev_set else {})})
    docs = documents(args.documents, args.data_dir, args.seed)
    items = (
        utterance
        for doc_id, text in docs
        for utterance in islice(utterances([(doc_id, text)], args.max_words), args.utterances_per_document)
    )
    summary = run_speech_loop(list(islice(items, args.max_utterances)), args.output, config, processes=args.processes)
    # A model trained on the output carries the licence of the text it was made from (its card says so).
    text_corpus = TEXT_CORPORA.get(args.documents, "text")
    made_by = f"the speech loop's ASR output ({', '.join(config.recognizers)}) of its sentences spoken by piper-tts"
    write_text_provenance(args.output, made_by, [text_corpus], documents=args.documents)
    records = read_records(args.output) if args.one_best_copy or args.passages_copy else []
    if args.one_best_copy:
        write_text_provenance(args.one_best_copy, made_by, [text_corpus], documents=args.documents)
        atomic_write_text(args.one_best_copy, "".join(
            json.dumps({**record, "hypotheses": record["hypotheses"][:1], "wer": record["wer"][:1]}, ensure_ascii=False) + "\n"
            for record in records if one_best_kept(record)
        ))
    if args.passages_copy:
        write_text_provenance(args.passages_copy, made_by, [text_corpus], documents=args.documents)
        joined = passages(records, recognizer=config.recognizers[-1])
        atomic_write_text(args.passages_copy, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in joined))
        summary["passages"] = {"path": args.passages_copy, "passages": len(joined),
                               "utterances": sum(record["utterances"] for record in joined)}
    if args.noise_model:
        noise = AsrNoiseModel.from_speech_loop([args.output])
        noise.save(args.noise_model)
        summary["noise_model"] = {
            "path": args.noise_model, "substitution_rate": noise.substitution_rate, "deletion_rate": noise.deletion_rate,
            "insertion_rate": noise.insertion_rate, "confused_words": len(noise.confusions),
        }
    json.dump(summary, sys.stdout, indent=2)
    print()
    return summary


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
