"""The recipes end to end on tiny random models and fixture data: finetune (with LoRA), two-stage,
MLM adaptation with punctuation masking, n-gram sampling, and corpus restoration (tests/test_restore_corpus.py tests its resumption)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import TrainingArguments

import hf_punctcase
from hf_punctcase.cards import lineage, training_records
from hf_punctcase.cards.checkpoint import card_for_checkpoint
from hf_punctcase.training import describe_machine
from hf_punctcase.training.progress import training_curve
from hf_punctcase.training.mlm import DataCollatorForPunctuationMasking, masked_lm_from_encoder, masked_positions_loss

from conftest import write_punctuated_corpus

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
sys.path.insert(0, str(RECIPES))

import finetune  # noqa: E402
import mlm_adapt  # noqa: E402
import two_stage  # noqa: E402
import training_curve as training_curve_recipe  # noqa: E402

TINY_TRAINING = [
    "--per_device_train_batch_size", "4", "--learning_rate", "1e-3", "--max_steps", "6",
    "--eval_strategy", "steps", "--eval_steps", "3", "--save_steps", "3", "--save_total_limit", "1",
    "--load_best_model_at_end", "--metric_for_best_model", "punct_overall_f1",
    "--report_to", "none", "--use_cpu", "--seed", "0", "--disable_tqdm", "true",
    "--window_words", "40", "--max_seq_length", "96",
]
#: TINY_TRAINING without keeping the best checkpoint, so that a resumed leg's final model is its last.
TINY_TRAINING_NO_BEST = [
    a for a in TINY_TRAINING if a not in ("--load_best_model_at_end", "--metric_for_best_model", "punct_overall_f1")
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    return write_punctuated_corpus(tmp_path_factory.mktemp("corpus") / "corpus.jsonl")


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(folder / "model.safetensors")


def test_finetune_recipe_trains_evaluates_and_writes_card(tiny_encoder_dir, corpus, tmp_path):
    final = finetune.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "run"),
        "--train_corpora", f"text:{corpus}=2", "--eval_corpora", f"text:{corpus}", *TINY_TRAINING,
    ])
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["global_step"] == 6
    # weight 2: two passes over the corpus's training windows
    assert summary["train_words"] == 2 * summary["pool_words"][f"text:{corpus}=2"]
    dev = summary["pipeline_dev"]["text"]
    assert 0.0 <= dev["punct_overall_f1"] <= 1.0 and dev["words"] > 0
    # The Trainer scores the dev set in the pipeline's windows: each word once (its context unscored),
    # also where a window overflows the tiny encoder's 128 positions and is cut in two.
    assert summary["eval_windows"] == {"window_words": 200, "context_words": 50}
    assert summary["dev_metrics"]["eval_punct_words"] == summary["dev_metrics"]["eval_case_words"] == dev["words"]
    card = (final / "README.md").read_text()
    assert card.startswith("---\n") and "the user's own text" in card and f"{100 * dev['punct_overall_f1']:.1f}" in card
    restorer = hf_punctcase.load_pipeline(str(final))
    words = [w["word"].lower().rstrip(".?") for w in restorer("so what are the risks")["words"]]
    assert words == ["so", "what", "are", "the", "risks"]

    # Every checkpoint holds the run's record as it stood at that step, so that it is carded as final/ is.
    checkpoints = sorted((tmp_path / "run").glob("checkpoint-*"), key=lambda folder: int(folder.name.split("-")[1]))
    assert checkpoints  # the best one is kept (save_total_limit 1)
    for checkpoint in checkpoints:
        record = json.loads((checkpoint / "training_summary.json").read_text())
        state = json.loads((checkpoint / "trainer_state.json").read_text())
        assert record["global_step"] == state["global_step"] == int(checkpoint.name.split("-")[1])
        evaluations = [entry for entry in state["log_history"] if "eval_punct_overall_f1" in entry]
        assert record["dev_metrics"]["eval_punct_overall_f1"] == evaluations[-1]["eval_punct_overall_f1"]
        assert record["log_history"] == state["log_history"]
        assert {k: record[k] for k in ("command", "train_corpora", "pool_words", "train_words")} == {
            k: summary[k] for k in ("command", "train_corpora", "pool_words", "train_words")
        }
    step = record["global_step"]
    card = card_for_checkpoint(checkpoints[-1])
    assert "the user's own text" in card and f"{step} steps" in card


def test_a_resumed_run_whose_checkpoint_was_rotated_away_still_writes_its_record(tiny_encoder_dir, corpus, tmp_path):
    """With save_total_limit the Trainer deletes the checkpoint a run resumed from once newer ones are
    saved; the record of where it resumed is read before that."""
    args = [
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "run"),
        "--train_corpora", f"text:{corpus}=2", "--eval_corpora", f"text:{corpus}", *TINY_TRAINING_NO_BEST,
    ]
    args += ["--eval_with_context", "false"]  # the dev set in sentence chunks of --window_words, no context
    args += ["--logging_steps", "1"]
    finetune.main([*args, "--max_steps", "3"])  # the last value of a repeated flag wins
    assert (tmp_path / "run" / "checkpoint-3").is_dir()
    final = finetune.main([*args, "--resume_from_checkpoint", str(tmp_path / "run" / "checkpoint-3")])
    assert not (tmp_path / "run" / "checkpoint-3").exists()  # rotated away during the resumed leg
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["resumed_from_step"] == 3 and summary["global_step"] == 6
    assert summary["eval_windows"] == {"sentence_chunks_of": 40}

    # How much the run trained is summed over both legs, and the dev F1 curve says it at each evaluation.
    words_per_step = 4 * summary["train_words"] / summary["train_examples"]
    entries = [e for e in summary["log_history"] if "words_seen" in e]
    assert [e["step"] for e in entries if "eval_punct_overall_f1" in e] == [3, 6, 6]  # the last: the final evaluate()
    # Each leg adds its own steps' words to the words its checkpoint counted (rounded once a leg).
    assert all(abs(e["words_seen"] - e["step"] * words_per_step) <= 1 for e in entries)
    first_leg = next(e for e in entries if e["step"] == 3)
    assert summary["train_cpu_hours"] > first_leg["train_cpu_hours"] > 0
    assert summary["train_hours"] > first_leg["train_hours"] > 0 and summary["hours_since_step"] == 0
    assert summary["words_seen"] == round(first_leg["words_seen"] + 3 * words_per_step)
    points = training_curve(tmp_path / "run")
    assert [p.step for p in points] == [3, 6, 6] and points[-1].train_hours == summary["train_hours"]
    assert points[0].words_seen == first_leg["words_seen"] and 0.0 <= points[0].dev_f1["punct"] <= 1.0
    evaluation = next(e for e in summary["log_history"] if e["step"] == 3 and "eval_loss" in e)
    trained = [e for e in summary["log_history"] if e["step"] <= 3 and "learning_rate" in e][-1]
    assert points[0].dev_loss == float(evaluation["eval_loss"]) and points[0].learning_rate == float(trained["learning_rate"])
    table = training_curve_recipe.main([str(tmp_path / "run"), "--json", str(tmp_path / "curve.json")])
    assert table.splitlines()[0].startswith("| step | words seen | hours |") and len(table.splitlines()) == 5
    assert f"| {float(trained['learning_rate']):.3g} |" in table.splitlines()[2]
    assert json.loads((tmp_path / "curve.json").read_text())[1]["words_seen"] == points[1].words_seen
    assert f"{summary['train_hours']:.1f} h" in training_records.stage_description(summary)


def test_a_stage_on_another_mixture_counts_its_own_words_on_top_of_its_branch_point(tiny_encoder_dir, corpus, tmp_path):
    """A stage that goes on from another run's checkpoint on another mixture (here windows half as long)
    counts its steps at its own mixture's words per example, on top of the words the checkpoint had seen,
    not every step at its own."""
    args = [
        "--encoder", tiny_encoder_dir, "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}",
        *TINY_TRAINING_NO_BEST, "--eval_with_context", "false", "--logging_steps", "1",
    ]
    first = finetune.main([*args, "--output_dir", str(tmp_path / "run"), "--max_steps", "3"])
    first_summary = json.loads((first / "training_summary.json").read_text())
    stage = tmp_path / "stage"
    stage.mkdir()
    shutil.copytree(tmp_path / "run" / "checkpoint-3", stage / "checkpoint-3")
    final = finetune.main([
        *args, "--output_dir", str(stage), "--window_words", "20", "--ignore_data_skip", "true",
        "--resume_from_checkpoint", "latest",
    ])
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["resumed_from_step"] == 3 and summary["global_step"] == 6

    def words_per_step(record: dict) -> float:
        return 4 * record["train_words"] / record["train_examples"]

    assert words_per_step(summary) < 0.75 * words_per_step(first_summary)
    at_branch_point = first_summary["words_seen"]
    assert at_branch_point == round(3 * words_per_step(first_summary))
    stage_entries = [e for e in summary["log_history"] if "words_seen" in e and e["step"] > 3]
    assert stage_entries and all(
        e["words_seen"] == round(at_branch_point + (e["step"] - 3) * words_per_step(summary)) for e in stage_entries
    )
    assert summary["words_seen"] == round(at_branch_point + 3 * words_per_step(summary))


def test_a_decay_stage_branches_from_a_plateau_run_and_decays_the_rate_it_held(tiny_encoder_dir, corpus, tmp_path):
    """A stage on a step-based schedule (warmup-stable-decay) branched from a run on reduce_lr_on_plateau,
    whose scheduler state the Trainer cannot load into a step-based one: the stage starts at the branch
    point's step from the rate the run held, decays it linearly, keeps the run's optimiser moments
    and leaves the run's own checkpoint as it was; a copy cut off while it was written does not count."""
    args = [
        "--encoder", tiny_encoder_dir, "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}",
        *TINY_TRAINING_NO_BEST, "--eval_with_context", "false", "--logging_steps", "1",
    ]
    finetune.main([
        *args, "--output_dir", str(tmp_path / "run"), "--max_steps", "3", "--lr_scheduler_type", "reduce_lr_on_plateau",
    ])
    branch_point = tmp_path / "run" / "checkpoint-3"
    untouched = {name: (branch_point / name).read_bytes() for name in ("optimizer.pt", "scheduler.pt", "model.safetensors")}
    stage = tmp_path / "stage"
    (stage / ".checkpoint-3.cut0ff.tmp").mkdir(parents=True)  # a copy cut off by a hard stop
    final = finetune.main([
        *args, "--output_dir", str(stage), "--branch_from", str(branch_point), "--max_steps", "6",
        "--lr_scheduler_type", "warmup_stable_decay",
        "--lr_scheduler_kwargs", json.dumps({"num_stable_steps": 3, "num_decay_steps": 3, "decay_type": "linear"}),
    ])
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["resumed_from_step"] == 3 and summary["global_step"] == 6
    # its weights come from the branch point: the stage goes on from that run, whose record the card reads
    assert summary["init"] == str(branch_point)
    assert [record["global_step"] for _, record in training_records.training_chain(final, summary)] == [3, 6]
    rates = {e["step"]: e["learning_rate"] for e in summary["log_history"] if "learning_rate" in e}
    assert rates[1] == rates[2] == rates[3] == pytest.approx(1e-3)  # the run's, on its plateau schedule
    # The rate each step trained at (as the Trainer logs it): step s at the schedule's value after s - 1
    # steps, as in an unbroken run on this schedule.
    assert [rates[step] for step in (4, 5, 6)] == pytest.approx([1e-3, 1e-3 * 2 / 3, 1e-3 / 3])
    assert {name: (branch_point / name).read_bytes() for name in untouched} == untouched
    branched = torch.load(stage / "checkpoint-3" / "optimizer.pt", weights_only=True)
    moments = torch.load(branch_point / "optimizer.pt", weights_only=True)["state"]
    assert branched["state"].keys() == moments.keys() and all(
        torch.equal(branched["state"][key]["exp_avg"], moments[key]["exp_avg"]) for key in moments
    )
    assert not (stage / ".checkpoint-3.cut0ff.tmp").exists()


def test_a_run_stopped_by_sigterm_saves_its_step_and_the_same_command_goes_on_from_it(tiny_encoder_dir, corpus, tmp_path):
    """SIGTERM during training (a scheduler's stop, ``kill``) costs at most the step under way: the run saves
    a checkpoint at the end of that step, writes no final model, says so in one line and exits with 143."""
    out = tmp_path / "run"
    args = [
        "--encoder", tiny_encoder_dir, "--output_dir", str(out), "--resume_from_checkpoint", "latest",
        "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}", *TINY_TRAINING,
        "--eval_steps", "1000", "--save_steps", "1000", "--logging_steps", "1",
    ]
    command = subprocess.Popen(
        [sys.executable, str(RECIPES / "finetune.py"), *args, "--max_steps", "100000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        for line in command.stdout:  # the Trainer prints each log entry: training has begun
            if "'loss'" in line:
                break
        command.terminate()
        _, stderr = command.communicate(timeout=300)
    finally:
        command.kill()
    assert command.returncode == 143, stderr
    checkpoints = list(out.glob("checkpoint-*"))
    assert len(checkpoints) == 1 and not (out / "final").exists()
    step = int(checkpoints[0].name.split("-")[1])
    assert 1 <= step < 1000
    assert stderr.splitlines()[-1] == (
        f"finetune.py: stopped by SIGTERM at step {step}: {checkpoints[0]} is saved; the same command goes on from it"
    )
    assert json.loads((checkpoints[0] / "trainer_state.json").read_text())["global_step"] == step
    assert json.loads((checkpoints[0] / "training_summary.json").read_text())["global_step"] == step

    final = finetune.main([*args, "--max_steps", str(step + 2)])
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["resumed_from_step"] == step and summary["global_step"] == step + 2


def test_early_stopping_counts_the_evaluations_of_every_leg_of_a_resumed_run(tiny_encoder_dir, corpus, tmp_path):
    """--early_stopping_patience counts the evaluations without improvement over the whole run: a run
    stopped and started again ends at the step the run without the stop ends at, not patience
    evaluations after its last start (a run resumed every few hours would never end itself)."""
    args = [
        "--encoder", tiny_encoder_dir, "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}",
        *TINY_TRAINING, "--eval_steps", "1", "--save_steps", "1", "--early_stopping_patience", "2",
        "--save_total_limit", "3", "--learning_rate", "0",  # the dev F1 of step 1 is never improved on
    ]
    whole = finetune.main([*args, "--output_dir", str(tmp_path / "whole"), "--max_steps", "10"])
    assert json.loads((whole / "training_summary.json").read_text())["global_step"] == 3

    finetune.main([*args, "--output_dir", str(tmp_path / "legs"), "--max_steps", "2"])
    resumed = finetune.main([
        *args, "--output_dir", str(tmp_path / "legs"), "--max_steps", "10", "--resume_from_checkpoint", "latest",
    ])
    summary = json.loads((resumed / "training_summary.json").read_text())
    assert summary["resumed_from_step"] == 2 and summary["global_step"] == 3


def test_checkpoints_every_few_minutes_add_checkpoints_and_change_nothing_else(tiny_encoder_dir, corpus, tmp_path):
    """--checkpoint_minutes saves between the scheduled checkpoints; the run's losses, evaluations and
    weights are those of the run without it, and SIGTERM has its own handler back after training."""
    import signal

    handler = signal.getsignal(signal.SIGTERM)
    scheduled = [a for a in TINY_TRAINING if a not in ("--save_total_limit", "1")]
    args = [
        "--encoder", tiny_encoder_dir, "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}",
        *scheduled, "--max_steps", "4", "--eval_steps", "2", "--save_steps", "2", "--logging_steps", "1",
    ]
    plain = finetune.main([*args, "--output_dir", str(tmp_path / "plain")])
    timed = finetune.main([*args, "--output_dir", str(tmp_path / "timed"), "--checkpoint_minutes", "1e-9"])
    steps = {run: sorted(int(c.name.split("-")[1]) for c in (tmp_path / run).glob("checkpoint-*")) for run in ("plain", "timed")}
    assert steps == {"plain": [2, 4], "timed": [1, 2, 3, 4]}
    history = {
        run: [{k: v for k, v in entry.items() if k == "step" or "loss" in k or "f1" in k} for entry in
              json.loads((folder / "training_summary.json").read_text())["log_history"]]
        for run, folder in (("plain", plain), ("timed", timed))
    }
    assert history["plain"] == history["timed"] and any("eval_loss" in entry for entry in history["plain"])
    plain_weights, timed_weights = _weights(plain), _weights(timed)
    assert all(torch.equal(plain_weights[name], timed_weights[name]) for name in plain_weights)
    assert signal.getsignal(signal.SIGTERM) is handler


def test_finetune_from_the_embedded_default_on_the_users_text_and_dev_file(corpus, tmp_path):
    """`default` is the model shipped in the package (no Hub); with a validation file every document of
    the user's text trains, and the file is the dev set."""
    dev = write_punctuated_corpus(tmp_path / "dev.jsonl", num_documents=4, seed=3)
    final = finetune.main([
        "--model_name_or_path", "default", "--output_dir", str(tmp_path / "run"), "--train_corpora", f"text:{corpus}",
        "--validation_file", dev, "--model_card", "false", *TINY_TRAINING, "--max_steps", "2", "--eval_steps", "2",
        "--save_steps", "2",  # the last of a repeated flag wins
    ])
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["init"] == "default" and summary["global_step"] == 2
    with open(corpus, encoding="utf-8") as handle:
        all_words = sum(len(hf_punctcase.labels.LabelScheme().parse(json.loads(line)["text"])) for line in handle)
    assert summary["pool_words"][f"text:{corpus}=1"] == all_words  # no document held back for validation or test
    assert summary["eval_corpora"] == [] and summary["validation_file"] == dev and summary["text_split"] == "all"
    assert "punct_overall_f1" in {k.removeprefix("eval_") for k in summary["dev_metrics"]}
    assert summary["training_machine"] == describe_machine(TrainingArguments(output_dir=str(tmp_path), use_cpu=True))
    shipped = hf_punctcase.JointTokenClassificationModel.from_pretrained(hf_punctcase.DEFAULT_MODEL_DIR).config
    trained = hf_punctcase.JointTokenClassificationModel.from_pretrained(final).config
    assert trained.encoder.hidden_size == shipped.encoder.hidden_size
    # the shipped lexicon, with this run's words added
    assert trained.mixed_case_lexicon == {**shipped.mixed_case_lexicon, "iphone": "iPhone"}


def test_quantization_aware_finetune_saves_a_plain_checkpoint_that_stores_as_it_computed(tiny_encoder_dir, corpus, tmp_path):
    from hf_punctcase.quantization import quantize_checkpoint

    final = finetune.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "run"), "--quantization_aware_training",
        "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}", "--model_card", "false", *TINY_TRAINING,
    ])
    assert json.loads((final / "training_summary.json").read_text())["global_step"] == 6
    checkpoint = next((tmp_path / "run").glob("checkpoint-*"))
    assert set(_weights(final)) == set(_weights(checkpoint))  # plain names in both
    model = hf_punctcase.JointTokenClassificationModel.from_pretrained(final)
    assert not any(type(module).__name__.startswith("FakeQuantized") for module in model.modules())
    stored = hf_punctcase.load_pipeline(str(quantize_checkpoint(final, tmp_path / "int8")), dtype=torch.float32)
    words = [w["word"] for w in stored("so what are the risks")["words"]]
    assert [w.lower().rstrip(".?") for w in words] == ["so", "what", "are", "the", "risks"]
    with pytest.raises(ValueError, match="not with --lora_r"):
        finetune.main(["--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "x"), "--quantization_aware_training", "--lora_r", "4"])


def test_top_layers_reinitialised_and_layerwise_learning_rates(tiny_encoder_dir, corpus, tmp_path):
    """The fixes for an encoder whose top layers make a segment's tokens alike: its last layers drawn
    afresh, and each encoder layer's learning rate a factor below the one above it."""
    from hf_punctcase.labels import LabelScheme
    from hf_punctcase.training import ModelArguments
    from hf_punctcase.training.model import build_model

    encoder_weights = load_file(Path(tiny_encoder_dir) / "model.safetensors")
    model, _, _ = build_model(ModelArguments(encoder=tiny_encoder_dir, reinitialize_top_layers=1), LabelScheme(), {})
    weights = {f"encoder.{name}": tensor for name, tensor in encoder_weights.items()}
    own = dict(model.named_parameters())
    for name, stored in weights.items():
        if name not in own or not name.endswith(".weight") or "LayerNorm" in name:
            continue  # a random encoder's biases and layer norms start where fresh ones do
        drawn_afresh = ".layer.1." in name
        assert torch.equal(own[name].detach(), stored) != drawn_afresh, name
    top = model.encoder.encoder.layer[1]
    assert torch.equal(top.output.LayerNorm.weight, torch.ones_like(top.output.LayerNorm.weight))
    assert not top.attention.self.query.bias.any()
    with pytest.raises(ValueError, match="1 to 1 of the encoder's 2 layers, not 2"):
        build_model(ModelArguments(encoder=tiny_encoder_dir, reinitialize_top_layers=2), LabelScheme(), {})
    with pytest.raises(ValueError, match="not to a checkpoint"):
        ModelArguments(model_name_or_path="default", reinitialize_top_layers=1)
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
        ModelArguments(encoder=tiny_encoder_dir, layer_learning_rate_decay=1.5)

    final = finetune.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "run"), "--reinitialize_top_layers", "1",
        "--layer_learning_rate_decay", "0.5", "--lr_scheduler_type", "constant", "--weight_decay", "0.01",
        "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}", "--model_card", "false", *TINY_TRAINING,
    ])
    assert json.loads((final / "training_summary.json").read_text())["global_step"] == 6
    checkpoint = next((tmp_path / "run").glob("checkpoint-*"))
    groups = torch.load(checkpoint / "optimizer.pt", weights_only=True)["param_groups"]
    # The heads at the run's rate, the two layers at 1/2 and 1/4 of it, the embeddings at 1/8; weight
    # decay on the weights the Trainer decays, none on biases and layer norms.
    assert sorted({group["lr"] for group in groups}) == pytest.approx([1e-3 / 8, 1e-3 / 4, 1e-3 / 2, 1e-3])
    assert {group["weight_decay"] for group in groups} == {0.0, 0.01}
    trained = hf_punctcase.JointTokenClassificationModel.from_pretrained(final)
    assert sum(len(group["params"]) for group in groups) == len(list(trained.parameters()))


def test_lora_adapters_save_load_and_merge_with_identical_outputs(tiny_encoder_dir, corpus, tmp_path):
    from hf_punctcase.training.lora import load_lora

    final = finetune.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "lora"), "--lora_r", "4",
        "--train_corpora", f"text:{corpus}", "--eval_corpora", f"text:{corpus}", "--model_card", "false",
        *TINY_TRAINING,
    ])
    adapter_dir = tmp_path / "lora" / "adapter"
    assert (adapter_dir / "adapter_config.json").is_file()
    merged = hf_punctcase.JointTokenClassificationModel.from_pretrained(final).eval()
    # The adapters are relative to the base model: rebuild it exactly as the recipe did.
    torch.manual_seed(0)
    base = hf_punctcase.JointTokenClassificationModel.from_encoder(tiny_encoder_dir, **_config_of(merged))
    adapted = load_lora(base, adapter_dir).eval()
    trained = [n for n, p in adapted.named_parameters() if "lora_" in n]
    assert trained, "no LoRA weights were loaded"
    inputs = {"input_ids": torch.randint(5, 200, (2, 17)), "attention_mask": torch.ones(2, 17, dtype=torch.long)}
    with torch.no_grad():
        from_adapters = adapted(**inputs)
        from_merged = merged(**inputs)
    torch.testing.assert_close(from_adapters.punct_logits, from_merged.punct_logits, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(from_adapters.case_logits, from_merged.case_logits, rtol=1e-4, atol=1e-5)
    # and LoRA really changed the encoder: the merged query weights differ from the base ones
    base_query = base.encoder.encoder.layer[0].attention.self.query.base_layer.weight
    assert not torch.allclose(merged.encoder.encoder.layer[0].attention.self.query.weight, base_query)


def _config_of(model) -> dict:
    config = model.config
    return {
        "punct_labels": list(config.punct_labels), "case_labels": list(config.case_labels),
        "case_conditioning": config.case_conditioning, "punct_loss_weight": config.punct_loss_weight,
        "mixed_case_lexicon": config.mixed_case_lexicon,
    }


def test_two_stage_starts_stage2_from_stage1_weights(tiny_encoder_dir, corpus, tmp_path):
    import yaml

    options = {
        "encoder": tiny_encoder_dir, "eval_corpora": [f"text:{corpus}"], "model_card": False,
        "per_device_train_batch_size": 4, "learning_rate": 1e-3, "max_steps": 6, "eval_strategy": "steps",
        "eval_steps": 3, "save_steps": 3, "save_total_limit": 1, "load_best_model_at_end": True,
        "metric_for_best_model": "punct_overall_f1", "report_to": "none", "use_cpu": True, "seed": 0,
        "disable_tqdm": True, "window_words": 40, "max_seq_length": 96,
    }
    config = {
        "output_dir": str(tmp_path / "two_stage"),
        "common": options,
        "stage1": {"train_corpora": [f"text:{corpus}"]},
        # learning rate 0: stages 2 and 3 can only end where they started
        "stage2": {"train_corpora": [f"text:{corpus}"], "learning_rate": 0.0, "max_steps": 3},
        "stage3": {"train_corpora": [f"text:{corpus}"], "learning_rate": 0.0, "max_steps": 3, "window_words": 30},
    }
    path = tmp_path / "two_stage.yaml"
    path.write_text(yaml.safe_dump(config))
    final = two_stage.main([str(path)])
    assert final == tmp_path / "two_stage" / "stage3" / "final"
    stage1 = _weights(tmp_path / "two_stage" / "stage1" / "final")
    stage3 = _weights(final)
    assert stage1.keys() == stage3.keys()
    for name in stage1:
        torch.testing.assert_close(stage1[name], stage3[name], rtol=0, atol=0)
    for k in (2, 3):
        summary = json.loads((tmp_path / "two_stage" / f"stage{k}" / "final" / "training_summary.json").read_text())
        assert summary["init"] == str(tmp_path / "two_stage" / f"stage{k - 1}" / "final")
    # and stage 1 did train: its weights are not the encoder's
    encoder = load_file(Path(tiny_encoder_dir) / "model.safetensors")
    key = next(k for k in encoder if k.endswith("attention.self.query.weight"))
    assert not torch.equal(encoder[key], stage1["encoder." + key])


def test_punctuation_masking_rate_measured_on_a_sample(tiny_tokenizer):
    torch.manual_seed(0)
    collator = DataCollatorForPunctuationMasking(tiny_tokenizer, mlm_probability=0.15, punctuation_fraction=0.5, seed=0)
    text = "so what are the risks ? i am not technical . we think that this is a good idea , but you know ."
    examples = [tiny_tokenizer(text) for _ in range(400)]
    batch = collator(examples)
    labels, original = batch["labels"], torch.tensor([e["input_ids"] for e in examples])
    masked = labels != -100
    special = torch.tensor([tiny_tokenizer.get_special_tokens_mask(e["input_ids"], already_has_special_tokens=True) for e in examples]).bool()
    assert not (masked & special).any()
    punct_ids = torch.tensor(tiny_tokenizer.convert_tokens_to_ids([".", ",", "?"]))
    is_punct = torch.isin(original, punct_ids)
    rate = masked.sum().item() / (~special).sum().item()
    punct_share = (masked & is_punct).sum().item() / masked.sum().item()
    assert 0.13 < rate < 0.17, rate
    assert 0.45 < punct_share < 0.55, punct_share
    # labels hold the original tokens where masked; ~80% of those inputs became [MASK]
    assert torch.equal(labels[masked], original[masked])
    replaced = (batch["input_ids"][masked] == tiny_tokenizer.mask_token_id).float().mean().item()
    assert 0.7 < replaced < 0.9
    # random masking hits punctuation only at its natural share (4 of 25 maskable tokens here)
    plain = DataCollatorForPunctuationMasking(tiny_tokenizer, punctuation_fraction=0.0, seed=0)(examples)
    plain_masked = plain["labels"] != -100
    assert (plain_masked & is_punct).sum().item() / plain_masked.sum().item() < 0.25


def test_masked_positions_loss_equals_the_full_forward_loss_and_gradients(tiny_encoder_dir, tiny_tokenizer):
    model = masked_lm_from_encoder(tiny_encoder_dir).eval()  # no dropout, so both passes see one network
    collator = DataCollatorForPunctuationMasking(tiny_tokenizer, seed=0)
    text = "so what are the risks ? i am not technical . we think that this is a good idea , but you know ."
    batch = collator([tiny_tokenizer(text), tiny_tokenizer(text[:40])])
    assert (batch["labels"] != -100).any()

    full = model(**batch).loss
    full.backward()
    full_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    selected = masked_positions_loss(model, batch)
    selected.backward()
    torch.testing.assert_close(selected, full)
    for name, param in model.named_parameters():
        torch.testing.assert_close(param.grad, full_grads[name], msg=name)
    # normalised by the Trainer's count over an accumulated batch instead of this batch's
    count = (batch["labels"] != -100).sum()
    torch.testing.assert_close(masked_positions_loss(model, batch, num_items_in_batch=3 * count), full.detach() / 3)


def test_mlm_adapt_output_is_an_encoder_finetune_accepts(tiny_encoder_dir, corpus, tmp_path):
    model = masked_lm_from_encoder(tiny_encoder_dir)
    assert model.get_output_embeddings().weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    final = mlm_adapt.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "mlm"), "--corpora", f"text:{corpus}",
        "--masking", "punctuation", "--block_size", "32", "--per_device_train_batch_size", "8", "--max_steps", "8",
        "--learning_rate", "1e-3", "--logging_steps", "1", "--save_strategy", "no", "--report_to", "none",
        "--use_cpu", "--seed", "0", "--disable_tqdm", "true",
    ])
    summary = json.loads((final / "mlm_summary.json").read_text())
    losses = [loss for _, loss in summary["loss_curve"]]
    assert len(losses) == 8 and min(losses[-3:]) < losses[0]
    joint = hf_punctcase.JointTokenClassificationModel.from_encoder(final)
    adapted = load_file(final / "model.safetensors")
    key = next(k for k in adapted if k.endswith("layer.0.attention.self.query.weight"))
    torch.testing.assert_close(joint.encoder.encoder.layer[0].attention.self.query.weight, adapted[key])
    original = load_file(Path(tiny_encoder_dir) / "model.safetensors")
    assert not torch.equal(original[key.removeprefix("bert.")], adapted[key])

    # A joint model finetuned from the adapted encoder: its card names the MLM stage, its text and licence.
    tuned = finetune.main([
        "--encoder", str(final), "--output_dir", str(tmp_path / "tuned"), "--train_corpora", f"text:{corpus}",
        "--eval_corpora", f"text:{corpus}", *TINY_TRAINING,
    ])
    card = (tuned / "README.md").read_text()
    assert "adapted by punctuation-masking MLM on" in card
    assert "| the user's own text — MLM adaptation | see Training | as the user's data |" in card
    assert "- Command: `python recipes/mlm_adapt.py --encoder" in card and " ; then python recipes/finetune.py" in card
    assert "- Time: MLM adaptation (punctuation masking):" in card


def test_a_resumed_mlm_run_records_where_it_resumed(tiny_encoder_dir, corpus, tmp_path):
    """A run resumed from a checkpoint: its record, and the card line made from it, say that the time is the last leg's."""
    args = [
        "--encoder", tiny_encoder_dir, "--output_dir", str(tmp_path / "mlm"), "--corpora", f"text:{corpus}",
        "--block_size", "32", "--per_device_train_batch_size", "8", "--max_steps", "4", "--learning_rate", "1e-3",
        "--logging_steps", "1", "--save_steps", "2", "--report_to", "none", "--use_cpu", "--seed", "0",
        "--disable_tqdm", "true",
    ]
    first = json.loads((mlm_adapt.main(args) / "mlm_summary.json").read_text())
    assert first["resumed_from_step"] is None and first["global_step"] == 4
    assert training_records.mlm_description(first).startswith("MLM adaptation (punctuation masking): 0 min, 4 steps over ")

    resumed = mlm_adapt.main([*args, "--resume_from_checkpoint", str(tmp_path / "mlm" / "checkpoint-2")])
    summary = json.loads((resumed / "mlm_summary.json").read_text())
    assert summary["resumed_from_step"] == 2 and summary["global_step"] == 4
    assert [step for step, _ in summary["loss_curve"]] == [1, 2, 3, 4]  # the first leg's losses come with the checkpoint
    assert "4 steps (resumed from step 2; steps 2–4 took 0 min) over " in training_records.mlm_description(summary)


def test_card_reads_the_corpora_of_an_older_mlm_record_off_its_command():
    record = {"command": "python recipes/mlm_adapt.py --output_dir x --corpora ted swda=0.5 --unlabeled ted_unpunctuated --bf16"}
    assert training_records.mlm_corpora(record) == ["ted", "swda=0.5", "ted_unpunctuated"]
    assert [d.licence for d in lineage.mlm_datasets(record)] == ["CC BY-NC-ND 3.0", "CC BY-NC-SA 3.0", "CC BY-NC-ND 3.0"]


def test_restore_corpus_streams_a_jsonl_file_through_datasets_in_input_order(tiny_model_dir, tmp_path):
    texts = [f"so what are the risks number {i} i am not technical" for i in range(9)] + ["", "we think"]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": i, "text": text}) + "\n" for i, text in enumerate(texts)))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    command = [
        sys.executable, str(RECIPES / "restore_corpus.py"), "--engine", "datasets", "--input", str(source),
        "--output", str(tmp_path / "out.jsonl"), "--model", tiny_model_dir, "--batch_size", "4", "--block_size", "3",
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(r["id"], r["text"]) for r in records] == list(enumerate(texts))
    # loaded as the recipe loads it (the dtype the machine's plan picks)
    assert [r["restored"] for r in records] == [r["text"] for r in hf_punctcase.load_pipeline(tiny_model_dir)(texts)]
    assert not (tmp_path / "out.jsonl.blocks").exists()
    provenance = lineage.read_provenance(tmp_path / "out.jsonl")  # which model labelled it, for the cards trained on it
    assert provenance["model"] == tiny_model_dir and provenance["options"]["output_field"] == "restored"
    # the tiny model has neither a training record nor a card: what it was trained on is unknown
    assert {row["licence"] for row in provenance["model_training_data"]} == {"unknown"}


# ---- a fault the user can fix is one line, exit 2 ----

RECIPE_FAULTS = {
    "mistyped option": (["--output_dir", "OUT", "--max_stepz", "3"], "unknown option --max_stepz; did you mean --max_steps"),
    "value of the wrong type": (["--output_dir", "OUT", "--max_steps", "three"], "invalid int value: 'three'"),
    "value an argument refuses": (["--output_dir", "OUT", "--model_family", "rnn"], "model_family"),
    "stray argument": (["--output_dir", "OUT", "stray"], "unexpected argument 'stray'"),
    "corpus file not there": (
        ["--output_dir", "OUT", "--train_corpora", "text:NOPE/a.jsonl", "--max_steps", "1"],
        "--train_corpora text:NOPE/a.jsonl: no file NOPE/a.jsonl",
    ),
    "validation file not there": (
        ["--output_dir", "OUT", "--validation_file", "NOPE/dev.jsonl", "--max_steps", "1"], "--validation_file: no file NOPE/dev.jsonl"
    ),
    "config not there": (["NOPE/run.yaml"], "NOPE/run.yaml: [Errno 2] No such file or directory"),
    "misspelt config key": (["CONFIG"], "unknown key max_stepz; did you mean max_steps"),
}


@pytest.mark.parametrize("fault", RECIPE_FAULTS, ids=list(RECIPE_FAULTS))
def test_a_training_recipe_fault_is_one_line(fault, tmp_path, capsys):
    argv, message = RECIPE_FAULTS[fault]
    config = tmp_path / "run.yaml"
    config.write_text(f"output_dir: {tmp_path / 'out'}\nmax_stepz: 3\n")
    replace = {"OUT": str(tmp_path / "out"), "CONFIG": str(config)}
    argv = [replace.get(item, item.replace("NOPE", str(tmp_path / "nope"))) for item in argv]
    message = message.replace("NOPE", str(tmp_path / "nope"))
    assert hf_punctcase.training.run_recipe(finetune.main, argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and message in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_a_recipe_run_as_a_command_prints_its_fault_and_nothing_else(tmp_path):
    """As a user runs it: no traceback, usage text or warning of an imported library around the line."""
    result = subprocess.run(
        [sys.executable, str(RECIPES / "finetune.py"), "--output_dir", str(tmp_path / "out"), "--max_stepz", "3"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "finetune.py: error: unknown option --max_stepz; did you mean --max_steps or --save_steps or --eval_steps?"
    ]


def test_lora_without_peft_says_which_extra_installs_it(monkeypatch):
    import builtins

    from hf_punctcase.training.lora import add_lora

    real_import = builtins.__import__

    def without_peft(name, *args, **kwargs):
        if name == "peft" or name.startswith("peft."):
            raise ImportError("No module named 'peft'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_peft)
    monkeypatch.delitem(sys.modules, "peft", raising=False)
    with pytest.raises(ImportError, match=r"hf_punctcase\[train\]"):
        add_lora(None)
