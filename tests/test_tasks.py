"""The task list: a task defined in this file alone (sentence boundaries, with an option that writes one
sentence a line) is trained with the Trainer on a tiny model and restored through the pipeline, the CLI,
the demo, an ONNX export and the torch-free runtime, with no change to the library."""

from __future__ import annotations

import random

import datasets
import numpy as np
import pytest
import torch
from conftest import VOCABULARY, run_cli, tiny_config
from transformers import Trainer, TrainingArguments

import hf_punctcase
from hf_punctcase.evaluation import compute_metrics_for, evaluate_dataset
from hf_punctcase.labels import DEFAULT_CASE_LABELS, DEFAULT_PUNCT_LABELS
from hf_punctcase.options import DISFLUENCY
from hf_punctcase.tasks import (
    CASING,
    PUNCTUATION,
    TASKS,
    Task,
    TaskOption,
    register_task,
    task_options,
    tasks_of,
    unregister_task,
)
from hf_punctcase.tokenization import tokenize_dataset
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification

#: The words that end a sentence in the training text, and only there: what the boundary head learns.
END_WORDS = ("home", "yesterday")
INNER_WORDS = [word for word in VOCABULARY if word not in END_WORDS]
TEXT = "so what are the risks home we think that this is a good idea yesterday"


def one_sentence_per_line(restore, inputs, is_split_into_words, **options):
    """The option's run: the restoration with a line break after each word the boundary head ends a sentence with."""
    results = restore(inputs, is_split_into_words, **options)
    for result in [results] if isinstance(results, dict) else results:
        result["text"] = "".join(
            entry["word"] + ("\n" if entry["sentence_end"] else " ") for entry in result["words"]
        ).rstrip()
    return results


BOUNDARY = Task(
    "boundary",
    ("INSIDE", "END"),
    config_field="boundary_labels",
    word_column="boundary",
    output_field="sentence_end",
    score_field="sentence_end_score",
    loss_weight_field="boundary_loss_weight",
    positive_label="END",
    title="sentence boundary",
    option=TaskOption(
        "one_sentence_per_line", help="write each sentence on a line of its own", label="one sentence a line",
        run=one_sentence_per_line,
    ),
)


def boundary_dataset(rng: random.Random, num_documents: int) -> datasets.Dataset:
    """Documents of sentences of 3 to 8 words, each ending with an end word (END, PERIOD)."""
    rows = {"doc_id": [], "words": [], "punct": [], "case": [], "boundary": []}
    for doc in range(num_documents):
        words, punct, boundary = [], [], []
        for _ in range(4):
            words += [rng.choice(INNER_WORDS) for _ in range(rng.randint(2, 7))] + [rng.choice(END_WORDS)]
            boundary += [0] * (len(words) - len(boundary) - 1) + [1]
        punct = [DEFAULT_PUNCT_LABELS.index("PERIOD") if end else 0 for end in boundary]
        rows["doc_id"].append(f"doc{doc}")
        rows["words"].append(words)
        rows["punct"].append(punct)
        rows["case"].append([0] * len(words))
        rows["boundary"].append(boundary)
    features = datasets.Features(
        {
            "doc_id": datasets.Value("string"),
            "words": datasets.Sequence(datasets.Value("string")),
            "punct": datasets.Sequence(datasets.ClassLabel(names=list(DEFAULT_PUNCT_LABELS))),
            "case": datasets.Sequence(datasets.ClassLabel(names=list(DEFAULT_CASE_LABELS))),
            "boundary": datasets.Sequence(datasets.ClassLabel(names=list(BOUNDARY.labels))),
        }
    )
    return datasets.Dataset.from_dict(rows, features=features)


@pytest.fixture(scope="module")
def boundary_task():
    task = register_task(BOUNDARY)
    yield task
    unregister_task(task.name)


@pytest.fixture(scope="module")
def boundary_run(boundary_task, tiny_tokenizer, tmp_path_factory):
    """A tiny joint model with the boundary head, trained a few steps with the Trainer; its folder and metrics."""
    torch.manual_seed(0)
    config = tiny_config(boundary_labels=list(BOUNDARY.labels))
    model = hf_punctcase.JointTokenClassificationModel(config)
    model_tasks = tasks_of(config)
    train = tokenize_dataset(boundary_dataset(random.Random(0), 96), tiny_tokenizer, 64, tasks=model_tasks)
    dev = tokenize_dataset(boundary_dataset(random.Random(1), 16), tiny_tokenizer, 64, tasks=model_tasks)
    folder = tmp_path_factory.mktemp("boundary_model")
    args = TrainingArguments(
        output_dir=str(folder / "run"), report_to="none", use_cpu=True, max_steps=60, learning_rate=3e-3,
        per_device_train_batch_size=8, per_device_eval_batch_size=16, save_strategy="no", logging_strategy="no",
        label_names=[task.label_field for task in model_tasks], seed=0,
    )
    trainer = Trainer(
        model=model, args=args, train_dataset=train, eval_dataset=dev,
        data_collator=DataCollatorForJointTokenClassification(tiny_tokenizer),
        compute_metrics=compute_metrics_for(config),
    )
    trainer.train()
    metrics = trainer.evaluate()
    model.save_pretrained(folder / "model")
    tiny_tokenizer.save_pretrained(folder / "model")
    return str(folder / "model"), metrics


def test_the_declared_tasks_are_listed_once_in_order():
    assert list(TASKS)[:3] == ["punct", "case", "disfl"]
    assert tasks_of(tiny_config()) == (PUNCTUATION, CASING)
    assert DISFLUENCY in tasks_of({"punct_labels": ["O"], "case_labels": ["LOWER"], "disfluency_labels": ["FLUENT", "DISFLUENT"]})
    assert task_options()[0].name == "remove_disfluencies" and DISFLUENCY.option.flag == "--remove-disfluencies"


def test_a_task_must_be_new_and_well_formed():
    with pytest.raises(ValueError, match="already registered"):
        register_task(DISFLUENCY)
    with pytest.raises(ValueError, match="already used by task 'disfl'"):
        register_task(Task("fillers", ("NO", "YES"), config_field="disfluency_labels", word_column="fillers",
                           output_field="filler", score_field="filler_score"))
    with pytest.raises(ValueError, match="two or more distinct labels"):
        Task("one", ("A",), config_field="one_labels", word_column="one", output_field="one", score_field="one_score")
    with pytest.raises(ValueError, match="one every model has"):
        unregister_task("punct")


def test_an_extra_task_trains_with_the_trainer_and_is_scored(boundary_run):
    folder, metrics = boundary_run
    assert metrics["eval_boundary_overall_f1"] > 0.9, metrics
    assert "eval_punct_overall_f1" in metrics and "eval_case_overall_f1" in metrics
    model = hf_punctcase.AutoModelForJointTokenClassification.from_pretrained(folder)
    assert model.boundary_classifier.out_features == 2


def test_an_extra_task_restores_through_the_pipeline(boundary_run):
    folder, _ = boundary_run
    pipe = hf_punctcase.load_pipeline(folder, dtype=torch.float32)
    assert pipe.model_tasks == (PUNCTUATION, CASING, BOUNDARY)
    result = pipe(TEXT, return_probabilities=True)
    ends = [entry["word"].rstrip(".,?") for entry in result["words"] if entry["sentence_end"]]
    assert ends == ["home", "yesterday"]
    assert all(0.0 <= entry["sentence_end_score"] <= 1.0 for entry in result["words"])
    assert result["probabilities"]["boundary"].shape == (len(TEXT.split()), 2)
    scores = evaluate_dataset(pipe, boundary_dataset(random.Random(2), 8))
    assert scores["boundary_overall_f1"] > 0.9
    # The task's option: one sentence a line, the same words.
    lines = pipe(TEXT, one_sentence_per_line=True)["text"].split("\n")
    assert len(lines) == 2 and " ".join(lines).split() == result["text"].split()


def test_an_extra_tasks_option_is_a_cli_flag_and_a_demo_switch(boundary_run, monkeypatch, capsys):
    folder, _ = boundary_run
    from hf_punctcase.cli import main

    with pytest.raises(SystemExit):
        main(["restore", "--help"])
    assert "--one-sentence-per-line" in capsys.readouterr().out
    code, out, err = run_cli(monkeypatch, capsys, ["restore", "--model", folder, "--one-sentence-per-line", TEXT])
    assert code == 0, err
    assert len(out.strip().split("\n")) == 2
    code, out, err = run_cli(monkeypatch, capsys, ["restore", "--model", folder, "--remove-disfluencies", TEXT])
    assert code != 0 and "needs a model with a disfluency head" in err

    from hf_punctcase.demo import Restorers, restore_transcript

    restorers = Restorers({"boundary": folder})
    text = restore_transcript(restorers, TEXT, "boundary", one_sentence_per_line=True)[0]
    assert len(text.split("\n")) == 2


def test_an_extra_task_travels_to_onnx_and_the_torch_free_runtime(boundary_run, tmp_path):
    pytest.importorskip("onnx")
    from hf_punctcase.export.onnx import export_onnx
    from hf_punctcase.runtime import OnDeviceRestorer

    folder, _ = boundary_run
    export_onnx(folder, tmp_path / "onnx")
    expected = hf_punctcase.load_pipeline(folder, dtype=torch.float32)(TEXT)
    runtime = OnDeviceRestorer(tmp_path / "onnx")
    assert BOUNDARY in runtime.model_tasks
    result = runtime(TEXT)
    assert [w["sentence_end"] for w in result["words"]] == [w["sentence_end"] for w in expected["words"]]
    np.testing.assert_allclose(
        [w["sentence_end_score"] for w in result["words"]], [w["sentence_end_score"] for w in expected["words"]], atol=1e-4
    )
    assert runtime(TEXT, one_sentence_per_line=True)["text"].count("\n") == 1


def test_a_head_task_the_model_lacks_refuses_its_labels(boundary_task, tiny_tokenizer):
    model = hf_punctcase.JointTokenClassificationModel(tiny_config())
    ids = torch.tensor([[2, 17, 40, 3]])
    with pytest.raises(ValueError, match="no sentence boundary head"):
        model(input_ids=ids, boundary_labels=torch.zeros_like(ids))
