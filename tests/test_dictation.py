"""Spoken punctuation: dictated transcripts for training, command spans, and carrying commands out."""

from __future__ import annotations

import random
from collections import Counter

import datasets
import numpy as np
import pytest
import torch
from conftest import tiny_config
from transformers import Trainer, TrainingArguments

import hf_punctcase
from hf_punctcase.data.dictation import LITERAL_USES, dictate
from hf_punctcase.options.dictation import apply_commands, command_spans
from hf_punctcase.labels import COMMAND_LABELS, DEFAULT_CASE_LABELS, DEFAULT_PUNCT_LABELS, LabelScheme
from hf_punctcase.options import COMMAND
from hf_punctcase.tasks import tasks_of
from hf_punctcase.tokenization import tokenize_dataset
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification

SCHEME = LabelScheme()
REPORT = "SUBJECTIVE: She has chest pain. Does it hurt?\nPLAN: Stop the ibuprofen; see me in two weeks!"


def spoken(labeled, command):
    return [w for w, c in zip(labeled.words, command) if c == "WORD"]


def test_every_mark_spoken_at_rate_one_and_none_at_rate_zero():
    labeled, command = dictate(REPORT, SCHEME, random.Random(0), rate=1.0, literal_uses=False, rarer_commands=False)
    spans = [label for _, _, label in command_spans(labeled.words, command)]
    assert spans[:3] == ["COLON", "PERIOD", "QUESTION"] and spans[3] in ("NEWLINE", "PARAGRAPH")
    assert spans[4:] == ["COLON", "SEMICOLON", "EXCLAMATION"]
    assert sum(c != "WORD" for c in command) == sum(end - start for start, end, _ in command_spans(labeled.words, command))
    assert set(labeled.punct) == {"O"}  # every mark was spoken
    assert labeled.case[labeled.words.index("does")] == "UPPER_FIRST"  # the capital after a spoken period stays
    plain, none = dictate(REPORT, SCHEME, random.Random(0), rate=0.0, literal_uses=False)
    reference = SCHEME.parse(REPORT.replace("\n", " "))
    assert set(none) == {"WORD"} and plain.words == reference.words and plain.punct == reference.punct
    assert spoken(labeled, command) == reference.words  # the words meant as words, in order


def test_rarer_commands_are_heard_at_their_shares_and_leave_the_words_alone():
    text = " ".join(["She is well, he is not."] * 2000)
    labeled, command = dictate(text, SCHEME, random.Random(2), rate=1.0, literal_uses=False)
    said = Counter(label for _, _, label in command_spans(labeled.words, command))
    sentence_ends = said["PERIOD"] + said["EXCLAMATION"]
    assert sentence_ends == 2000 and said["COMMA"] + said["SEMICOLON"] + said["COLON"] == 2000
    assert 0.05 < said["EXCLAMATION"] / 2000 < 0.11 and 0.04 < said["SEMICOLON"] / 2000 < 0.08
    assert 0.02 < said["COLON"] / 2000 < 0.06 and 0.03 < said["NEWLINE"] / 2000 < 0.07
    assert spoken(labeled, command) == "she is well he is not".split() * 2000


def test_literal_uses_are_mixed_in_as_words():
    text = " ".join(["She is well."] * 400)
    labeled, command = dictate(text, SCHEME, random.Random(1), rate=1.0)
    joined = " ".join(w for w, c in zip(labeled.words, command) if c == "WORD")
    literal = [s for s in LITERAL_USES if " ".join(SCHEME.parse(s).words) in joined]
    assert len(literal) >= 3


@pytest.mark.parametrize(
    ("words", "labels", "spans"),
    [
        ("chest pain period new paragraph he".split(), ["WORD", "WORD", "PERIOD", "PARAGRAPH", "PARAGRAPH", "WORD"],
         [(2, 3, "PERIOD"), (3, 5, "PARAGRAPH")]),
        ("a question mark".split(), ["WORD", "QUESTION", "QUESTION"], [(1, 3, "QUESTION")]),
        ("full marks".split(), ["WORD", "QUESTION"], []),  # a run that spells no command stays words
        ("pain period period".split(), ["WORD", "PERIOD", "PERIOD"], [(1, 2, "PERIOD"), (2, 3, "PERIOD")]),
        ("pain full stop".split(), ["WORD", "PERIOD", "PERIOD"], [(1, 3, "PERIOD")]),
        # The phrase decides which command: a rare one read under another command's label is carried out.
        ("pain semicolon he".split(), ["WORD", "COMMA", "WORD"], [(1, 2, "SEMICOLON")]),
        ("pain new paragraph".split(), ["WORD", "PERIOD", "PARAGRAPH"], [(1, 3, "PARAGRAPH")]),
        # Every word of the phrase must read as a command.
        ("a question mark".split(), ["WORD", "QUESTION", "WORD"], []),
        ("new line".split(), ["WORD", "NEWLINE"], []),
    ],
)
def test_command_spans(words, labels, spans):
    assert command_spans(words, labels) == spans


def restored(words, punct, case, command, timed=None):
    """A restoration as the pipeline gives it, from labels (with the times of timed input words)."""
    entries = []
    for i, (word, p, c, k) in enumerate(zip(words, punct, case, command)):
        entries.append({
            "word": SCHEME.render_word(word, p, c), "punctuation": p, "casing": c, "punct_score": 0.9,
            "case_score": 0.9, "command": k, "command_score": 0.8,
            **({"start": timed[i]["start"], "end": timed[i]["end"]} if timed else {}),
        })
    return {"text": " ".join(e["word"] for e in entries), "words": entries, "sentences": []}


def test_commands_become_marks_and_breaks_and_the_rest_stays():
    words = "chest pain period he denies fever comma cough new paragraph assessment colon the sigmoid colon is normal".split()
    punct = ["O", "COMMA", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "O", "PERIOD"]
    case = ["UPPER_FIRST"] + ["LOWER"] * 16
    command = ["WORD", "WORD", "PERIOD", "WORD", "WORD", "WORD", "COMMA", "WORD", "PARAGRAPH", "PARAGRAPH", "WORD",
               "COLON", "WORD", "WORD", "WORD", "WORD", "WORD"]
    timed = [{"word": w, "start": float(i), "end": i + 0.5} for i, w in enumerate(words)]
    result = apply_commands(restored(words, punct, case, command, timed), timed)
    # The dictated period replaces the predicted comma (no doubling); a capital follows it and the break.
    assert result["text"] == "Chest pain. He denies fever, cough\n\nAssessment: the sigmoid colon is normal."
    assert len(result["words"]) == len(words)
    removed = [e["word"] for e in result["words"] if e["removed"]]
    assert removed == ["period", "comma", "new", "paragraph", "colon"]
    assert all(e["start_char"] is None and "start" in e for e in result["words"] if e["removed"])
    for entry in result["words"]:
        if not entry["removed"]:
            assert result["text"][entry["start_char"]:entry["end_char"]] == entry["word"]
    assert result["words"][1]["dictated"] == ["PERIOD"] and result["words"][1]["punctuation"] == "PERIOD"
    assert result["words"][7]["dictated"] == ["PARAGRAPH"]
    assert [s["text"] for s in result["sentences"]] == ["Chest pain.", "He denies fever, cough", "Assessment: the sigmoid colon is normal."]
    assert result["sentences"][1]["first_word"] == 3 and result["sentences"][1]["end"] == 7.5


def test_a_command_with_no_word_before_it_is_dropped_and_a_text_of_commands_is_empty():
    result = apply_commands(restored(["period"], ["PERIOD"], ["LOWER"], ["PERIOD"]), ["period"])
    assert result["text"] == "" and result["words"][0]["removed"]


# ---- end to end on a tiny model ---------------------------------------------------------------------

SENTENCES = [
    "The patient had chest pain.", "Does it hurt?", "She has a fever, a cough and a headache.", "We think it works.",
    "The doctor asked whether the patient had any pain.", "It was really hard to say.",
] * 3 + list(LITERAL_USES[:6])


def dictation_dataset(seed: int, num_documents: int) -> datasets.Dataset:
    rng = random.Random(seed)
    rows = {"doc_id": [], "words": [], "punct": [], "case": [], "command": []}
    for doc in range(num_documents):
        text = "\n".join(" ".join(rng.choice(SENTENCES) for _ in range(3)) for _ in range(2))
        labeled, command = dictate(text, SCHEME, rng, literal_uses=False)
        rows["doc_id"].append(str(doc))
        rows["words"].append(labeled.words)
        rows["punct"].append([SCHEME.punct2id[p] for p in labeled.punct])
        rows["case"].append([SCHEME.case2id[c] if c else -1 for c in labeled.case])
        rows["command"].append([COMMAND_LABELS.index(c) for c in command])
    features = datasets.Features({
        "doc_id": datasets.Value("string"),
        "words": datasets.Sequence(datasets.Value("string")),
        "punct": datasets.Sequence(datasets.ClassLabel(names=list(DEFAULT_PUNCT_LABELS))),
        "case": datasets.Sequence(datasets.ClassLabel(names=list(DEFAULT_CASE_LABELS))),
        "command": datasets.Sequence(datasets.ClassLabel(names=list(COMMAND_LABELS))),
    })
    return datasets.Dataset.from_dict(rows, features=features)


@pytest.fixture(scope="module")
def command_model(tiny_tokenizer, tmp_path_factory):
    torch.manual_seed(0)
    config = tiny_config(command_labels=list(COMMAND_LABELS))
    model = hf_punctcase.JointTokenClassificationModel(config)
    model_tasks = tasks_of(config)
    train = tokenize_dataset(dictation_dataset(0, 320), tiny_tokenizer, 128, tasks=model_tasks)
    folder = tmp_path_factory.mktemp("command_model")
    args = TrainingArguments(
        output_dir=str(folder / "run"), report_to="none", use_cpu=True, max_steps=300, learning_rate=3e-3,
        per_device_train_batch_size=8, save_strategy="no", logging_strategy="no",
        label_names=[task.label_field for task in model_tasks], seed=0,
    )
    Trainer(model=model, args=args, train_dataset=train, data_collator=DataCollatorForJointTokenClassification(tiny_tokenizer)).train()
    model.save_pretrained(folder / "model")
    tiny_tokenizer.save_pretrained(folder / "model")
    return str(folder / "model")


def test_spoken_punctuation_through_the_pipeline(command_model):
    pipe = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)
    assert COMMAND in pipe.model_tasks
    text = "the patient had chest pain period does it hurt question mark new paragraph we think it works"
    labelled = pipe(text, return_commands=True)
    assert [e["command"] for e in labelled["words"]][5] == "PERIOD"
    # Calls that neither carry out commands nor ask for them do not run the head.
    assert not any("command" in e or "command_score" in e for e in pipe(text)["words"])
    result = pipe(text, spoken_punctuation=True, return_sentences=True)
    words = text.split()
    assert [e["word"].lower().rstrip(".,?!:;") for e in result["words"]] == words  # one entry per input word, in order
    kept = [e for e in result["words"] if not e["removed"]]
    assert result["text"].split() == [e["word"] for e in kept]
    assert "period" not in result["text"].lower() and "chest pain." in result["text"].lower()
    # Where the model reads "new paragraph" as a command, the text breaks there (a tiny model may not).
    new = words.index("new")
    assert ("\n\n" in result["text"]) == all(result["words"][i]["removed"] for i in (new, new + 1))
    # Without the option the command words are words.
    assert len(labelled["text"].split()) == len(words)


def test_evaluating_a_dataset_scores_the_command_head_that_default_calls_leave_out(command_model):
    from hf_punctcase.evaluation import evaluate_dataset

    pipe = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)
    scores = evaluate_dataset(pipe, dictation_dataset(5, 8))
    assert scores["command_overall_f1"] > 0.5


def test_a_word_is_a_command_where_the_commands_together_outweigh_the_threshold(command_model, tmp_path):
    import json
    import shutil

    text = "the patient had chest pain period does it hurt question mark new paragraph we think it works comma"
    pipe = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)
    probabilities = np.asarray(pipe(text, return_probabilities=True)["probabilities"]["command"])
    commands = 1.0 - probabilities[:, 0]
    # A threshold between two words' command probabilities that decides some word otherwise than 0.5.
    values = sorted(set(commands.tolist()))
    cuts = [(a + b) / 2 for a, b in zip(values, values[1:])]
    threshold = next(cut for cut in cuts if (commands > cut).sum() != (commands > 0.5).sum())
    folder = tmp_path / "model"
    shutil.copytree(command_model, folder)
    config = json.loads((folder / "config.json").read_text())
    config["command_threshold"] = threshold
    (folder / "config.json").write_text(json.dumps(config))
    for model, cut in ((command_model, 0.5), (str(folder), threshold)):
        result = hf_punctcase.load_pipeline(model, dtype=torch.float32)(text, return_commands=True)
        expected = [
            COMMAND_LABELS[1 + int(np.argmax(row[1:]))] if command > cut else "WORD"
            for row, command in zip(probabilities, commands)
        ]
        assert [entry["command"] for entry in result["words"]] == expected


def test_the_likeliest_label_of_a_command_may_be_word_and_the_word_still_a_command():
    row = np.array([0.45, 0.05, 0.05, 0.05, 0.0, 0.0, 0.0, 0.05, 0.35], dtype=np.float32)
    assert COMMAND.word_fields(row, COMMAND_LABELS, passed_through=False)["command"] == "PARAGRAPH"
    assert COMMAND.word_fields(row, COMMAND_LABELS, passed_through=False, threshold=0.6)["command"] == "WORD"
    assert COMMAND.word_fields(row, COMMAND_LABELS, passed_through=True)["command"] == "WORD"


def test_spoken_punctuation_needs_the_head(tiny_pipeline):
    with pytest.raises(ValueError, match="spoken command head"):
        tiny_pipeline("so what period", spoken_punctuation=True)


def test_spoken_punctuation_in_a_stream_is_the_pipelines(command_model):
    from hf_punctcase import StreamingRestorer

    pipe = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)
    text = ("the patient had chest pain period does it hurt question mark new paragraph we think it works period "
            "she has a fever comma a cough and a headache period")
    words = text.split()
    whole = pipe(text, spoken_punctuation=True)
    stream = StreamingRestorer(pipe, window_words=200, context_words=50, spoken_punctuation=True)
    entries = []
    for start in range(0, len(words), 3):
        entries += stream.push(words[start:start + 3])
    entries += stream.flush()
    assert len(entries) == len(words)
    assert [(e["word"], e["removed"], e.get("dictated")) for e in entries] == [
        (e["word"], e["removed"], e.get("dictated")) for e in whole["words"]
    ]
    assert [(e["start_char"], e["end_char"]) for e in entries] == [(e["start_char"], e["end_char"]) for e in whole["words"]]


def test_a_stream_refuses_spoken_punctuation_without_the_head(tiny_pipeline):
    from hf_punctcase import StreamingRestorer

    with pytest.raises(ValueError, match="spoken command head"):
        StreamingRestorer(tiny_pipeline, spoken_punctuation=True)


def test_spoken_punctuation_from_the_cli_the_demo_and_the_torch_free_runtime(command_model, tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnx")
    from hf_punctcase.cli import main
    from hf_punctcase.demo import Restorers, restore_transcript
    from hf_punctcase.export.onnx import export_onnx
    from hf_punctcase.runtime import OnDeviceRestorer

    text = "the patient had chest pain period does it hurt question mark new paragraph we think it works"
    expected = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)(text, spoken_punctuation=True)
    monkeypatch.setattr("sys.argv", ["hf-punctcase"])
    code = main(["restore", "--model", command_model, "--spoken-punctuation", text])
    out = capsys.readouterr().out
    assert code == 0 and out == expected["text"] + "\n"
    restorers = Restorers({"dictation": command_model})
    assert restore_transcript(restorers, text, "dictation", spoken_punctuation=True)[0] == expected["text"]
    export_onnx(command_model, tmp_path / "onnx")
    runtime = OnDeviceRestorer(tmp_path / "onnx")
    assert COMMAND in runtime.model_tasks
    result = runtime(text, spoken_punctuation=True)
    assert result["text"] == expected["text"]
    assert [e["removed"] for e in result["words"]] == [e["removed"] for e in expected["words"]]


def test_subtitles_leave_out_command_words_and_cut_at_dictated_breaks(command_model, tmp_path, monkeypatch, capsys):
    import json

    from hf_punctcase.cli import main
    from hf_punctcase.subtitles import restore_cues

    text = "the patient had chest pain period does it hurt question mark new paragraph we think it works"
    timed = [{"word": " " + w, "start": i * 0.5, "end": i * 0.5 + 0.4} for i, w in enumerate(text.split())]
    pipe = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)
    words, cues = restore_cues(pipe, timed, spoken_punctuation=True)
    removed = {i for i, entry in enumerate(words) if entry["removed"]}
    assert removed and all(not (set(range(cue.first_word, cue.last_word + 1)) <= removed) for cue in cues)
    cue_text = " ".join(cue.text for cue in cues)
    assert cue_text.split() == [entry["word"] for entry in words if not entry["removed"]]
    assert any(cue.text.endswith("pain.") for cue in cues)  # the dictated period ends its cue
    (tmp_path / "talk.json").write_text(json.dumps(timed))
    code = main(["subtitles", str(tmp_path / "talk.json"), "--model", command_model, "--spoken-punctuation"])
    out = capsys.readouterr().out
    assert code == 0 and "period" not in out.lower() and "question mark" not in out.lower()


def test_spoken_punctuation_with_return_commands_too(command_model):
    """return_commands=True adds each word's command_score; without it only a command's words carry one."""
    pipe = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)
    text = "the patient had chest pain period does it hurt"
    scored = pipe(text, spoken_punctuation=True, return_commands=True)
    plain = pipe(text, spoken_punctuation=True)
    assert all("command_score" in entry for entry in scored["words"])
    assert [entry["removed"] for entry in plain["words"] if "command_score" in entry] == [True]
    without_scores = [{k: v for k, v in e.items() if e["removed"] or k != "command_score"} for e in scored["words"]]
    assert without_scores == plain["words"] and scored["text"] == plain["text"]


class _TasksSeen:
    """A pipeline's backend, run as it is, that records the tasks of each call."""

    def __init__(self, backend):
        self.backend, self.calls = backend, []

    def __call__(self, input_ids, attention_mask, tasks=None):
        self.calls.append(tuple(tasks))
        return self.backend(input_ids, attention_mask, tasks=tasks)


def test_spoken_punctuation_runs_the_command_head_only_on_windows_that_hold_a_command_phrase(command_model):
    pipe = hf_punctcase.load_pipeline(command_model, dtype=torch.float32)
    words = ("the patient had chest pain and we think it works today " * 12).split()
    words[100:100] = ["question", "mark"]  # in the fifth of six windows' cores of 20 words
    windows = {"window_words": 40, "context_words": 10, "batch_size": 1}
    expected = pipe(words, is_split_into_words=True, spoken_punctuation=True, return_commands=True, **windows)
    seen = pipe.backend = _TasksSeen(pipe.backend)
    result = pipe(words, is_split_into_words=True, spoken_punctuation=True, **windows)
    assert ["command" in tasks for tasks in seen.calls] == [False] * 5 + [True] + [False]
    assert result["text"] == expected["text"]
    assert [(e["word"], e["command"], e["removed"]) for e in result["words"]] == [
        (e["word"], e["command"], e["removed"]) for e in expected["words"]
    ]
    # A text with no command phrase never runs the head; asking for its labels runs it everywhere.
    seen.calls.clear()
    pipe(words[:100], is_split_into_words=True, spoken_punctuation=True, **windows)
    assert seen.calls and not any("command" in tasks for tasks in seen.calls)
    seen.calls.clear()
    pipe(words[:100], is_split_into_words=True, spoken_punctuation=True, return_commands=True, **windows)
    assert seen.calls and all("command" in tasks for tasks in seen.calls)


def test_the_torch_free_runtime_runs_the_command_head_only_where_a_phrase_is(command_model, tmp_path):
    from hf_punctcase.export.onnx import export_onnx
    from hf_punctcase.runtime import OnDeviceRestorer

    export_onnx(command_model, tmp_path / "onnx")
    runtime = OnDeviceRestorer(tmp_path / "onnx", batch_size=2)
    seen = runtime.backend = _TasksSeen(runtime.backend)
    texts = ["the patient had chest pain and we think it works", "does it hurt question mark we think so"] * 2
    results = runtime(texts, spoken_punctuation=True, window_words=40, context_words=10)
    # Two windows a call: each call holding the second text runs the head, for both of its windows.
    assert seen.calls == [("punct", "case", "command")] * 2
    assert results == [runtime(text, spoken_punctuation=True, window_words=40, context_words=10) for text in texts]
    assert [r["text"] for r in results] == [
        r["text"] for r in runtime(texts, spoken_punctuation=True, return_commands=True, window_words=40, context_words=10)
    ]
