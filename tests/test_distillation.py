"""Knowledge distillation: the soft-target loss, teacher logits cached per word and carried to the
student's subwords through datasets, the collator, the DistillationTrainer and the distill recipe."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import datasets
import pytest
import torch
from transformers import TrainingArguments

import hf_punctcase
from hf_punctcase.training.collator import DataCollatorForJointTokenClassification
from hf_punctcase.training.distillation import (
    DistillationTrainer,
    add_teacher_logits,
    distillation_loss,
    soft_target_kl,
    teacher_word_logits,
)
from hf_punctcase.tokenization import TEACHER_CASE, TEACHER_MASK, TEACHER_PUNCT, tokenize_dataset

from conftest import tiny_config, write_punctuated_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "recipes"))
import distill  # noqa: E402
import finetune  # noqa: E402

WORDS = [
    ["so", "what", "are", "the", "risks", "i", "am", "not", "technical"],
    ["nasa", "bought", "an", "iphone", "yesterday"],
    ["the", "doctor", "asked", "whether", "the", "patient", "had", "any", "pain"],
]


def _labelled_rows(words_batch):
    return {
        "words": words_batch,
        "punct": [[i % 2 for i, _ in enumerate(words)] for words in words_batch],
        "case": [[0] * len(words) for words in words_batch],
    }


def test_soft_target_kl_by_hand():
    torch.manual_seed(0)
    student, teacher = torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    mask = torch.tensor([[1, 1, 0, 1, 0], [0, 1, 1, 0, 0]])
    temperature = 3.0
    expected = 0.0
    for b, t in mask.nonzero().tolist():
        p_teacher = (teacher[b, t] / temperature).softmax(-1)
        p_student = (student[b, t] / temperature).softmax(-1)
        expected += float((p_teacher * (p_teacher.log() - p_student.log())).sum())
    expected = expected / int(mask.sum()) * temperature**2
    assert soft_target_kl(student, teacher, mask, temperature).item() == pytest.approx(expected, rel=1e-5)
    # Masked-out positions do not count; identical scores cost nothing.
    changed = student.clone()
    changed[mask == 0] += 10.0
    assert soft_target_kl(changed, teacher, mask, temperature).item() == pytest.approx(expected, rel=1e-5)
    assert soft_target_kl(teacher, teacher, mask, temperature).item() == pytest.approx(0.0, abs=1e-6)


def test_distillation_loss_weights_both_heads_and_has_gradients():
    torch.manual_seed(1)
    student_punct = torch.randn(1, 6, 4, requires_grad=True)
    student_case = torch.randn(1, 6, 4, requires_grad=True)
    teacher_punct, teacher_case = torch.randn(1, 6, 4), torch.randn(1, 6, 4)
    mask = torch.ones(1, 6, dtype=torch.long)
    loss = distillation_loss(student_punct, student_case, teacher_punct, teacher_case, mask, 2.0, 0.6)
    expected = 0.6 * soft_target_kl(student_punct, teacher_punct, mask, 2.0) + soft_target_kl(student_case, teacher_case, mask, 2.0)
    assert loss.item() == pytest.approx(expected.item())
    loss.backward()
    assert student_punct.grad.abs().sum() > 0 and student_case.grad.abs().sum() > 0
    empty = distillation_loss(student_punct, student_case, teacher_punct, teacher_case, torch.zeros_like(mask))
    assert empty.item() == 0.0 and empty.requires_grad


def test_teacher_word_logits_are_the_first_subword_scores(tiny_model, tiny_tokenizer):
    punct_rows, case_rows = teacher_word_logits(tiny_model, tiny_tokenizer, WORDS)
    encoding = tiny_tokenizer(WORDS[1], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        outputs = tiny_model(**encoding)
    word_ids = encoding.word_ids(0)
    first = [word_ids.index(w) for w in range(len(WORDS[1]))]
    assert torch.allclose(torch.tensor(punct_rows[1]), outputs.punct_logits[0, first], atol=1e-5)
    assert torch.allclose(torch.tensor(case_rows[1]), outputs.case_logits[0, first], atol=1e-5)
    # Words beyond the teacher's subword budget get no target (NaN), not a wrong one.
    punct_rows, _ = teacher_word_logits(tiny_model, tiny_tokenizer, [WORDS[0]], max_length=5)
    truncated = tiny_tokenizer(WORDS[0], is_split_into_words=True, truncation=True, max_length=5)
    kept = max(w for w in truncated.word_ids() if w is not None) + 1
    assert 0 < kept < len(WORDS[0])
    assert [math.isnan(row[0]) for row in punct_rows[0]] == [False] * kept + [True] * (len(WORDS[0]) - kept)


def test_cached_teacher_logits_round_trip_through_datasets(tiny_model, tiny_tokenizer, tmp_path):
    dataset = datasets.Dataset.from_dict(_labelled_rows(WORDS))
    labelled = add_teacher_logits(dataset, tiny_model, tiny_tokenizer, batch_size=2)
    labelled.save_to_disk(str(tmp_path / "cache"))
    reloaded = datasets.load_from_disk(str(tmp_path / "cache"))
    assert reloaded.features[TEACHER_PUNCT] == labelled.features[TEACHER_PUNCT]
    assert reloaded[TEACHER_PUNCT] == labelled[TEACHER_PUNCT] and reloaded[TEACHER_CASE] == labelled[TEACHER_CASE]
    punct_rows, _ = teacher_word_logits(tiny_model, tiny_tokenizer, WORDS)
    assert torch.allclose(torch.tensor(reloaded[2][TEACHER_PUNCT]), torch.tensor(punct_rows[2]), atol=1e-6)

    # Tokenised for the student, each word's row sits on its first subword, under mask 1.
    tokens = tokenize_dataset(reloaded, tiny_tokenizer, max_length=64)
    for example, words_rows in zip(tokens, reloaded[TEACHER_PUNCT]):
        mask = torch.tensor(example[TEACHER_MASK])
        labelled_positions = torch.tensor(example["punct_labels"]) != -100
        assert torch.equal(mask.bool(), labelled_positions)
        assert torch.allclose(torch.tensor(example[TEACHER_PUNCT])[mask.bool()], torch.tensor(words_rows))

    batch = DataCollatorForJointTokenClassification(tiny_tokenizer)([tokens[0], tokens[1]])
    length = batch["input_ids"].shape[1]
    assert batch[TEACHER_PUNCT].shape == (2, length, 4) and batch[TEACHER_PUNCT].dtype == torch.float32
    assert batch[TEACHER_MASK].shape == (2, length)
    assert batch[TEACHER_MASK][1].sum() == len(WORDS[1])
    assert torch.equal(batch[TEACHER_MASK] != 0, batch["punct_labels"] != -100)


def test_trainer_mixes_hard_and_soft_losses(tiny_model, tiny_tokenizer, tmp_path):
    dataset = add_teacher_logits(datasets.Dataset.from_dict(_labelled_rows(WORDS)), tiny_model, tiny_tokenizer)
    tokens = tokenize_dataset(dataset, tiny_tokenizer, max_length=64)
    batch = DataCollatorForJointTokenClassification(tiny_tokenizer)(list(tokens))
    torch.manual_seed(3)
    student = hf_punctcase.JointTokenClassificationModel(tiny_config()).eval()
    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    with torch.no_grad():
        hard = student(**{k: v for k, v in batch.items() if not k.startswith("teacher")}).loss
        outputs = student(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        soft = distillation_loss(
            outputs.punct_logits, outputs.case_logits, batch[TEACHER_PUNCT], batch[TEACHER_CASE], batch[TEACHER_MASK],
            temperature=2.0, punct_loss_weight=student.config.punct_loss_weight,
        )
        for weight in (0.0, 0.3, 1.0):
            trainer = DistillationTrainer(model=student, args=args, temperature=2.0, distill_weight=weight)
            loss = trainer.compute_loss(student, dict(batch))
            assert loss.item() == pytest.approx(((1 - weight) * hard + weight * soft).item(), rel=1e-5)
    assert soft.item() > 0
    with pytest.raises(ValueError, match="distill_weight"):
        DistillationTrainer(model=student, args=args, distill_weight=1.5)


def test_distill_recipe_trains_a_student_and_reuses_the_cache(tiny_encoder_dir, tmp_path):
    corpus = write_punctuated_corpus(tmp_path / "corpus.jsonl", num_documents=30)
    cache = tmp_path / "teacher_logits"
    teacher = str(finetune.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "teacher"), "--train_corpora", f"text:{corpus}",
        "--eval_corpora", f"text:{corpus}", "--max_steps", "2", "--per_device_train_batch_size", "4",
        "--report_to", "none", "--use_cpu", "--disable_tqdm", "true", "--window_words", "40", "--max_seq_length", "96",
    ]))
    common = [
        "--teacher", teacher, "--encoder", tiny_encoder_dir, "--teacher_logits_cache", str(cache),
        "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}",
        "--temperature", "2", "--distill_weight", "0.7",
        "--per_device_train_batch_size", "4", "--learning_rate", "1e-3", "--max_steps", "4",
        "--eval_strategy", "steps", "--eval_steps", "2", "--save_steps", "2", "--save_total_limit", "1", "--logging_steps", "1",
        "--report_to", "none", "--use_cpu", "--seed", "0", "--disable_tqdm", "true",
        "--window_words", "40", "--max_seq_length", "96",
    ]
    final = distill.main([*common, "--output_dir", str(tmp_path / "first")])
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["global_step"] == 4
    record = summary["distillation"]
    assert record["teacher"] == teacher and record["distill_weight"] == 0.7 and record["teacher_seconds"] > 0
    assert cache.is_dir()
    losses = [entry["loss"] for entry in summary["log_history"] if "loss" in entry]
    assert len(losses) == 4 and all(math.isfinite(loss) and loss > 0 for loss in losses)
    card = (final / "README.md").read_text()
    assert f"distilled from {teacher} (temperature 2, soft-target weight 0.7)" in card
    assert "teacher's data" in card  # the student carries the licences of its teacher's data
    student = hf_punctcase.JointTokenClassificationModel.from_pretrained(final)
    assert student.config.encoder.hidden_size == 32

    again = distill.main([
        *common, "--output_dir", str(tmp_path / "second"), "--model_card", "false", "--model_name_or_path", str(final),
        "--label_smoothing", "0.1", "--punct_class_weights", "1", "1", "1", "3",
    ])
    continued = hf_punctcase.JointTokenClassificationModel.from_pretrained(again)
    assert continued.config.label_smoothing == 0.1 and continued.config.punct_class_weights == [1.0, 1.0, 1.0, 3.0]
    record = json.loads((again / "training_summary.json").read_text())["distillation"]
    assert record["teacher_logits_cache"] == str(cache) and "teacher_seconds" not in record

    other = tmp_path / "other.jsonl"
    write_punctuated_corpus(other, num_documents=12, seed=5)
    with pytest.raises(ValueError, match="another training mixture"):
        distill.main([*common, "--output_dir", str(tmp_path / "third"), "--train_corpora", f"text:{other}"])
