"""Training pieces: tokenise-and-align, the collator, the Trainer loop and compute_metrics."""

import os
import random

import numpy as np
import pytest
import torch
from transformers import Trainer, TrainingArguments

import hf_punctcase
from hf_punctcase.data import labeled_chunks, read_ted_talks
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification
from hf_punctcase.evaluation import compute_metrics_for, score_labels
from hf_punctcase.labels import LabelScheme
from hf_punctcase.tokenization import align_labels, first_subword_positions, tokenize_and_align_labels

from conftest import tiny_config

SCHEME = LabelScheme()


def test_first_subword_alignment():
    word_ids = [None, 0, 0, 1, 2, 2, 2, None]
    assert align_labels(word_ids, [5, 6, 7]) == [-100, 5, -100, 6, 7, -100, -100, -100]
    assert first_subword_positions(word_ids, 4) == [1, 3, 4, -1]


def test_collator_pads_both_label_sets(tiny_tokenizer):
    encoded = tokenize_and_align_labels(
        tiny_tokenizer, [["so", "what"], ["i", "am", "not", "technical"]], [[0, 3], [0, 0, 0, 2]],
        [[1, 0], [1, 0, 0, 0]], max_length=64,
    )
    features = [{k: encoded[k][i] for k in encoded} for i in range(2)]
    batch = DataCollatorForJointTokenClassification(tiny_tokenizer)(features)
    assert batch["input_ids"].shape == batch["punct_labels"].shape == batch["case_labels"].shape
    assert (batch["punct_labels"][0, len(features[0]["input_ids"]):] == -100).all()
    labelled = batch["punct_labels"][batch["punct_labels"] != -100].tolist()
    assert labelled == [0, 3, 0, 0, 0, 2]


def test_ted_reader_filters_and_cleans(tmp_path):
    import json

    talks = [
        {"collection": "ted", "title": "a", "punctuated": True, "duplicate_of": None, "overlaps_iwslt_eval": [],
         "text": "Hello there. (Laughter) It works -- really? [Music] Yes."},
        {"collection": "ted", "title": "b", "punctuated": False, "duplicate_of": None, "overlaps_iwslt_eval": [], "text": "no marks"},
        {"collection": "ted", "title": "c", "punctuated": True, "duplicate_of": "a", "overlaps_iwslt_eval": [], "text": "Dup."},
        {"collection": "ted", "title": "d", "punctuated": True, "duplicate_of": None, "overlaps_iwslt_eval": ["dev2010"], "text": "Dev."},
    ]
    path = tmp_path / "talks.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in talks))
    docs = list(read_ted_talks(path))
    assert [d[0] for d in docs] == ["ted/ted/a"]
    parsed = SCHEME.parse(docs[0][1])
    assert parsed.words == ["hello", "there", "it", "works", "really", "yes"]
    assert parsed.punct == ["O", "PERIOD", "O", "COMMA", "QUESTION", "PERIOD"]


def test_trainer_learns_on_fixture_data(tiny_tokenizer, tmp_path):
    """A few Trainer steps on a tiny model: the loss falls and compute_metrics reports both heads."""
    rng = random.Random(0)
    sentences = ["so what are the risks?", "I am not technical.", "We think that this is a good idea, but you know."]
    documents = [(f"doc{i}", " ".join(rng.choice(sentences) for _ in range(12))) for i in range(16)]
    rows = list(labeled_chunks(documents, SCHEME, chunk_words=40))

    def encode(rows):
        encoded = tokenize_and_align_labels(
            tiny_tokenizer, [r["words"] for r in rows], [r["punct"] for r in rows], [r["case"] for r in rows], 128
        )
        return [{k: encoded[k][i] for k in encoded} for i in range(len(rows))]

    torch.manual_seed(0)
    model = hf_punctcase.JointTokenClassificationModel(tiny_config())
    args = TrainingArguments(
        output_dir=str(tmp_path), max_steps=60, per_device_train_batch_size=8, learning_rate=1e-2, warmup_steps=5,
        logging_steps=10, report_to="none", use_cpu=True, save_strategy="no", seed=0,
    )
    trainer = Trainer(
        model=model, args=args, train_dataset=encode(rows), eval_dataset=encode(rows[:8]),
        data_collator=DataCollatorForJointTokenClassification(tiny_tokenizer), compute_metrics=compute_metrics_for(SCHEME),
    )
    before = trainer.evaluate()["eval_loss"]
    trainer.train()
    metrics = trainer.evaluate()
    assert metrics["eval_loss"] < 0.5 * before
    assert metrics["eval_punct_overall_f1"] > 0.5 and "eval_case_UPPER_FIRST_f1" in metrics


def test_score_labels_by_hand():
    true = ["O", "COMMA", "PERIOD", "O", "QUESTION", "PERIOD"]
    pred = ["COMMA", "COMMA", "PERIOD", "O", "PERIOD", "O"]
    scores = score_labels(SCHEME, true, pred)
    # COMMA: tp 1, fp 1, fn 0; PERIOD: tp 1, fp 1, fn 1; QUESTION: tp 0, fn 1.
    assert np.isclose(scores["punct_COMMA_precision"], 0.5) and np.isclose(scores["punct_COMMA_recall"], 1.0)
    assert np.isclose(scores["punct_PERIOD_f1"], 0.5)
    assert scores["punct_QUESTION_f1"] == 0.0
    # micro over non-O: tp 2, fp 2, fn 2 → P = R = F1 = 0.5
    assert np.isclose(scores["punct_overall_f1"], 0.5)


def test_tokenize_dataset_with_stride(tiny_tokenizer):
    import datasets

    from hf_punctcase.tokenization import tokenize_dataset

    words = [f"w{i % 7}" if i % 5 else "technical" for i in range(120)]
    rows = {"words": [words, ["so", "what"]], "punct": [[i % 4 for i in range(120)], [0, 3]],
            "case": [[-1] * 120, [1, 0]]}
    tokenized = tokenize_dataset(datasets.Dataset.from_dict(rows), tiny_tokenizer, max_length=64, stride=8)
    assert len(tokenized) > 2  # the long example overflowed into several windows
    assert all(len(ids) <= 64 for ids in tokenized["input_ids"])
    assert all(label == -100 for row in tokenized["case_labels"][:-1] for label in row)  # -1 → ignored
    assert [label for label in tokenized["case_labels"][-1] if label != -100] == [1, 0]
    # every word of the long example is labelled at least once (overlapping windows may label some twice)
    assert sum(label != -100 for row in tokenized["punct_labels"][:-1] for label in row) >= len(words)


def test_the_dev_set_in_the_pipelines_windows_scores_each_word_once_in_order(tiny_tokenizer):
    """Windows of 200 words overflow the tiny model's 128 positions: cut without overlap, no word is
    labelled twice, and the context words around each core are not labelled at all."""
    import datasets

    from hf_punctcase.tasks import tasks_of
    from hf_punctcase.training import tokenize_dev_set

    rng = random.Random(0)
    config = tiny_config()
    lengths = {"long": [40] * 13, "short": [30]}
    rows = []
    for doc_id, chunks in lengths.items():
        for length in chunks:
            rows.append({
                "doc_id": doc_id, "domain": "x", "words": [rng.choice(["so", "what", "technical", "w1", "w22"]) for _ in range(length)],
                "punct": [rng.randrange(4) for _ in range(length)], "case": [rng.randrange(2) for _ in range(length)],
            })
    dev = datasets.Dataset.from_list(rows)
    tokens = tokenize_dev_set(dev, tiny_tokenizer, config, True, 96, tasks_of(config))
    assert max(len(ids) for ids in tokens["input_ids"]) == config.max_position_embeddings  # a window was cut
    for column, label_field in (("punct", "punct_labels"), ("case", "case_labels")):
        scored = [label for row in tokens[label_field] for label in row if label != -100]
        assert scored == [label for row in dev[column] for label in row]
    # The loaded examples as they are, to --max_seq_length, without context.
    plain = tokenize_dev_set(dev, tiny_tokenizer, config, False, 96, tasks_of(config))
    assert max(len(ids) for ids in plain["input_ids"]) <= 96


def test_the_dev_set_defaults_and_the_split_of_the_users_files():
    from hf_punctcase.training import DataArguments

    assert DataArguments().dev_corpora == ["ted"] and DataArguments().file_split is None
    with_file = DataArguments(validation_file="dev.jsonl")
    assert with_file.dev_corpora == [] and with_file.file_split == "train"  # every document of text:FILE trains
    assert DataArguments(validation_file="dev.jsonl", text_split="hash").file_split is None
    assert DataArguments(text_split="all").file_split == "train"
    assert DataArguments(validation_file="dev.jsonl", eval_corpora=["swda"]).dev_corpora == ["swda"]
    with pytest.raises(ValueError, match="text_split"):
        DataArguments(text_split="everything")


def test_dev_sets_from_the_users_files(tmp_path, monkeypatch):
    """A dev file of its own is scored whole; a training file is scored on what training leaves out,
    and where training takes all of it, nothing is left and that is an error."""
    from hf_punctcase.data import CorpusSpec
    from hf_punctcase.training import load_dev_sets

    from conftest import write_punctuated_corpus

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    train = write_punctuated_corpus(tmp_path / "train.jsonl", num_documents=40)
    dev = write_punctuated_corpus(tmp_path / "dev.jsonl", num_documents=3, seed=1)
    train_specs = [CorpusSpec.parse(f"text:{train}")]

    sets = load_dev_sets([CorpusSpec.parse(f"text:{dev}")], None, 50, train_specs=train_specs, file_split="train")
    assert sorted(set(sets["text"]["doc_id"])) == ["dev/doc0", "dev/doc1", "dev/doc2"]
    by_file = load_dev_sets([], None, 50, validation_file=dev, train_specs=train_specs, file_split="train")
    assert by_file["dev.jsonl"]["words"] == sets["text"]["words"]

    held_out = load_dev_sets([CorpusSpec.parse(f"text:{train}")], None, 50, train_specs=train_specs)["text"]
    assert 0 < len(set(held_out["doc_id"])) < 40  # the hash split's validation share
    with pytest.raises(ValueError, match="none are left"):
        load_dev_sets([CorpusSpec.parse(f"text:{train}")], None, 50, train_specs=train_specs, file_split="train")
    with pytest.raises(ValueError, match="also a training corpus"):
        load_dev_sets([], None, 50, validation_file=train, train_specs=train_specs)
    with pytest.raises(ValueError, match="no dev set"):
        load_dev_sets([], None, 50)


def test_the_training_machine_is_the_one_that_ran():
    from hf_punctcase.training import describe_machine

    machine = describe_machine(TrainingArguments(output_dir="unused", use_cpu=True))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert machine.endswith(f", {cores} logical cores") and len(machine) > len(f", {cores} logical cores")


def test_sampled_sentences_are_packed_into_pseudo_documents():
    from hf_punctcase.training.ngram import Sentence
    from hf_punctcase.training.sampling import pack_documents

    ids = SCHEME.punct2id
    sentences = [
        Sentence("a", ["so", "what", "are", "the", "risks"], [0, 0, 0, 0, ids["QUESTION"]], [1, 0, 0, 0, 0]),
        Sentence("a", ["nasa", "said", "so"], [0, 0, ids["PERIOD"]], [2, 0, -1]),
        Sentence("b", ["we", "went", "home"], [0, 0, -1], [1, 0, 0]),
    ]
    documents = pack_documents(sentences, SCHEME, document_words=6)
    assert documents == [
        {"id": "sampled/0", "text": "So what are the risks? NASA said so.", "sources": ["a"]},
        {"id": "sampled/1", "text": "We went home", "sources": ["b"]},
    ]


def test_a_resume_passes_over_a_checkpoint_cut_off_while_it_was_saved(tmp_path, caplog):
    """A run killed while the Trainer wrote a checkpoint leaves one without its state: "latest" resumes
    from the newest whole one, saying which it passed over."""
    import logging

    from hf_punctcase.training.run import latest_whole_checkpoint

    assert latest_whole_checkpoint(tmp_path / "none yet") is None
    for step, whole in ((5, True), (10, True), (20, False), (15, False)):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"weights")
        if whole:
            (folder / "trainer_state.json").write_text("{}")
    (tmp_path / "checkpoint-final").mkdir()
    with caplog.at_level(logging.WARNING):
        assert latest_whole_checkpoint(tmp_path) == str(tmp_path / "checkpoint-10")
    assert [message.split(" was cut off")[0] for message in caplog.messages] == [str(tmp_path / "checkpoint-20"), str(tmp_path / "checkpoint-15")]
    (tmp_path / "checkpoint-10" / "trainer_state.json").unlink()
    (tmp_path / "checkpoint-5" / "trainer_state.json").unlink()
    assert latest_whole_checkpoint(tmp_path) is None


def test_head_flags_give_the_joint_transformer_its_heads_from_a_checkpoint_or_an_encoder(
    tiny_model_dir, tiny_encoder_dir, tiny_cnn_dir
):
    from hf_punctcase.labels import COMMAND_LABELS, LabelScheme, PARAGRAPH_LABELS
    from hf_punctcase.options import COMMAND, PARAGRAPH
    from hf_punctcase.tasks import head_tasks
    from hf_punctcase.training import ModelArguments
    from hf_punctcase.training.model import build_model

    scheme = LabelScheme()
    heads = {"command_head": True, "paragraph_head": True, "command_loss_weight": 0.7, "paragraph_loss_weight": 0.2}
    for source in ({"model_name_or_path": tiny_model_dir}, {"encoder": tiny_encoder_dir}):
        model, _, _ = build_model(ModelArguments(**source, **heads), scheme, {})
        config = model.config
        assert head_tasks(config) == (COMMAND, PARAGRAPH)
        assert (config.command_labels, config.paragraph_labels) == (list(COMMAND_LABELS), list(PARAGRAPH_LABELS))
        assert (config.command_loss_weight, config.paragraph_loss_weight) == (0.7, 0.2)
        assert model.command_classifier.out_features == len(COMMAND_LABELS)
    # Without the flags, no head and no loss weight of one in the config.
    plain, _, _ = build_model(ModelArguments(encoder=tiny_encoder_dir), scheme, {})
    assert head_tasks(plain.config) == () and "command_loss_weight" not in plain.config.to_diff_dict()
    with pytest.raises(ValueError, match="--paragraph_head is for the joint transformer, not a cnn_bilstm_punct_case checkpoint"):
        build_model(ModelArguments(model_name_or_path=tiny_cnn_dir, paragraph_head=True), scheme, {})


def test_sigterm_during_training_asks_for_a_checkpoint_and_a_stop_and_its_handler_comes_back(tmp_path):
    """The real signal, in this process: during training it only marks a stop at the end of the step;
    after training (or when train() raised, through ``restore``) SIGTERM has its own handler again, and
    a SIGTERM that came after the last step reaches that handler."""
    import signal

    from transformers import TrainerControl, TrainerState

    from hf_punctcase.training import StopOnTerminate

    received = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        args, state = TrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True), TrainerState()
        stop, control = StopOnTerminate(), TrainerControl()
        stop.on_train_begin(args, state, control)
        state.global_step = 7
        stop.on_step_end(args, state, control)
        assert not control.should_save and not control.should_training_stop and stop.step is None
        signal.raise_signal(signal.SIGTERM)
        state.global_step = 8
        stop.on_step_end(args, state, control)
        assert control.should_save and control.should_training_stop and stop.step == 8 and received == []
        stop.on_train_end(args, state, control)
        signal.raise_signal(signal.SIGTERM)
        assert received == [signal.SIGTERM]

        late = StopOnTerminate()
        late.on_train_begin(args, state, TrainerControl())
        signal.raise_signal(signal.SIGTERM)  # after the last step's end: training is over
        late.on_train_end(args, state, TrainerControl())
        assert late.step is None and received == [signal.SIGTERM] * 2

        crashed = StopOnTerminate()
        crashed.on_train_begin(args, state, TrainerControl())
        crashed.restore()  # what run() does when train() raises
        signal.raise_signal(signal.SIGTERM)
        assert received == [signal.SIGTERM] * 3
    finally:
        signal.signal(signal.SIGTERM, previous)
