"""Checkpoint averaging (hf_punctcase.training.averaging, recipes/average_checkpoints.py) and the models a
run keeps of its checkpoints (``keep_checkpoint_models``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

import hf_punctcase
from hf_punctcase.cards.checkpoint import card_for_checkpoint
from hf_punctcase.training.averaging import KEPT_MODELS_DIR, average_checkpoints, run_checkpoints, saved_step

from conftest import write_punctuated_corpus

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
sys.path.insert(0, str(RECIPES))

import average_checkpoints as average_recipe  # noqa: E402
import finetune  # noqa: E402


@pytest.fixture(scope="module")
def kept_run(tiny_encoder_dir, tmp_path_factory) -> Path:
    """A tiny run that saves at every step, keeps one Trainer checkpoint and the model of every one."""
    corpus = write_punctuated_corpus(tmp_path_factory.mktemp("corpus") / "corpus.jsonl")
    output = tmp_path_factory.mktemp("run") / "run"
    finetune.main([
        "--encoder", tiny_encoder_dir, "--output_dir", str(output), "--train_corpora", f"text:{corpus}",
        "--eval_corpora", f"text:{corpus}", "--per_device_train_batch_size", "4", "--learning_rate", "1e-3",
        "--max_steps", "4", "--eval_strategy", "steps", "--eval_steps", "2", "--save_steps", "1",
        "--save_total_limit", "1", "--report_to", "none", "--use_cpu", "--seed", "0", "--disable_tqdm", "true",
        "--window_words", "40", "--max_seq_length", "96", "--model_card", "false", "--keep_checkpoint_models",
    ])
    return output


def test_a_run_keeps_the_model_of_every_checkpoint_without_its_optimiser_state(kept_run):
    assert [c.name for c in kept_run.glob("checkpoint-*")] == ["checkpoint-4"]  # save_total_limit rotated the rest
    kept = sorted((kept_run / KEPT_MODELS_DIR).iterdir())
    assert [saved_step(folder) for folder in kept] == [1, 2, 3, 4]
    for folder in kept:
        names = {file.name for file in folder.iterdir()}
        assert {"model.safetensors", "config.json", "training_summary.json", "trainer_state.json"} <= names
        assert not names & {"optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"}
        assert json.loads((folder / "training_summary.json").read_text())["global_step"] == saved_step(folder)
    last = load_file(kept[-1] / "model.safetensors")
    checkpoint = load_file(kept_run / "checkpoint-4" / "model.safetensors")
    assert all(torch.equal(last[name], checkpoint[name]) for name in checkpoint)
    # The run's checkpoints, oldest first, one per step: the kept models and the Trainer's own.
    assert [saved_step(folder) for folder in run_checkpoints(kept_run)] == [1, 2, 3, 4]


def test_the_average_of_a_runs_checkpoints_is_the_mean_of_their_weights_and_restores_text(kept_run, tmp_path):
    output = average_recipe.main(["--run", str(kept_run), "--last", "3", "-o", str(tmp_path / "averaged")])
    sources = [load_file(kept_run / KEPT_MODELS_DIR / f"checkpoint-{step}" / "model.safetensors") for step in (2, 3, 4)]
    averaged = load_file(output / "model.safetensors")
    assert set(averaged) == set(sources[0])
    moved = 0
    for name, tensor in averaged.items():
        mean = sum(source[name].double() for source in sources) / 3
        assert tensor.dtype == sources[0][name].dtype
        assert torch.allclose(tensor.double(), mean, atol=1e-7), name
        moved += not torch.equal(tensor, sources[-1][name])
    assert moved  # the checkpoints differ, so the mean is not the newest
    record = json.loads((output / "training_summary.json").read_text())
    assert [entry["step"] for entry in record["averaged_checkpoints"]] == [2, 3, 4]
    assert all(entry["words_seen"] for entry in record["averaged_checkpoints"])
    card = card_for_checkpoint(output)
    assert "the mean of the run's checkpoints at steps 2, 3, 4" in card
    # Folders by role: a card carries no path of the machine it was made on.
    assert "; then python recipes/average_checkpoints.py --run OUTPUT_DIR --last 3 -o AVERAGED_DIR" in card
    assert str(tmp_path) not in card  # the training command names the folders it was given, as ever
    assert not any(output.glob("optimizer.pt"))
    restored = hf_punctcase.load_pipeline(str(output))("so what are the risks i am not technical")
    assert [word["word"].lower().strip(",.?") for word in restored["words"]] == "so what are the risks i am not technical".split()
    # --up-to-step pins a selection made while the run goes on.
    pinned = average_recipe.main(["--run", str(kept_run), "--last", "2", "--up-to-step", "3", "-o", str(tmp_path / "pinned")])
    assert [entry["step"] for entry in json.loads((pinned / "training_summary.json").read_text())["averaged_checkpoints"]] == [2, 3]


def _checkpoint(folder: Path, step: int, tensors: dict[str, torch.Tensor]) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def test_buffers_other_than_floats_are_kept_and_steps_order_by_number(tmp_path):
    table = torch.tensor([True, False, True])
    run = tmp_path / "run"
    _checkpoint(run / "checkpoint-9", 9, {"w": torch.tensor([1.0, 2.0]), "starts": table})
    _checkpoint(run / "checkpoint-10", 10, {"w": torch.tensor([3.0, 6.0]), "starts": table})
    _checkpoint(run / "checkpoint-100", 100, {"w": torch.tensor([5.0, 10.0]), "starts": table})
    assert [saved_step(c) for c in run_checkpoints(run)] == [9, 10, 100]
    output = average_recipe.main(["--run", str(run), "--last", "2", "-o", str(tmp_path / "out")])
    weights = load_file(output / "model.safetensors")
    assert torch.equal(weights["w"], torch.tensor([4.0, 8.0])) and torch.equal(weights["starts"], table)
    named = average_recipe.main([str(run / "checkpoint-9"), str(run / "checkpoint-100"), "-o", str(tmp_path / "named")])
    assert not (named / "training_summary.json").exists()  # these folders have no training record to extend
    assert average_recipe.recorded_command(average_recipe.argparse.Namespace(
        run=None, checkpoints=[str(run / "checkpoint-9"), str(tmp_path / "checkpoint_models" / "checkpoint-100")],
        last=None, up_to_step=None, stages=False,
    )) == "python recipes/average_checkpoints.py OUTPUT_DIR/checkpoint-9 OUTPUT_DIR/checkpoint_models/checkpoint-100 -o AVERAGED_DIR"


def test_the_ends_of_stages_from_one_branch_point_average_into_a_soup_one_a_stage(tmp_path):
    from hf_punctcase.cards.training_records import stage_description

    def stage_end(run: str, kept: bool, weights: list[float]) -> Path:
        folder = tmp_path / run / (f"{KEPT_MODELS_DIR}/checkpoint-8" if kept else "checkpoint-8")
        _checkpoint(folder, 8, {"w": torch.tensor(weights)})
        record = {"global_step": 8, "words_seen": 800, "train_words": 100, "epoch": 8.0, "train_seconds": 60}
        (folder / "training_summary.json").write_text(json.dumps(record))
        return folder

    decay = stage_end("decay_stage", True, [1.0, 2.0])
    captions = stage_end("captions_stage", False, [3.0, 4.0])
    # Without --stages two checkpoints at one step are two copies of one run's step, and refused.
    with pytest.raises(SystemExit):
        average_recipe.main([str(decay), str(captions), "-o", str(tmp_path / "refused")])
    assert not (tmp_path / "refused").exists()
    soup = average_recipe.main(["--stages", str(decay), str(captions), "-o", str(tmp_path / "soup")])
    assert torch.equal(load_file(soup / "model.safetensors")["w"], torch.tensor([2.0, 3.0]))
    record = json.loads((soup / "training_summary.json").read_text())
    assert [entry["stage"] for entry in record["averaged_checkpoints"]] == ["decay_stage", "captions_stage"]
    assert record["averaging_command"] == (
        "python recipes/average_checkpoints.py --stages STAGE_1_DIR/checkpoint_models/checkpoint-8 "
        "STAGE_2_DIR/checkpoint-8 -o AVERAGED_DIR"
    )
    assert "the mean of the ends of stages branched from one checkpoint: decay_stage at step 8, captions_stage at step 8" in (
        stage_description(record)
    )
    # One checkpoint a stage: two of one run are not a soup of stages.
    earlier = _checkpoint(tmp_path / "decay_stage" / KEPT_MODELS_DIR / "checkpoint-4", 4, {"w": torch.zeros(2)})
    with pytest.raises(ValueError, match="two of the checkpoints are of one run"):
        average_checkpoints([earlier, decay, captions], tmp_path / "out", stages=True)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "second, message",
    [
        ({"w": torch.zeros(3), "starts": torch.tensor([True])}, "is (torch.float32, (3,)) in"),
        ({"w": torch.zeros(2, dtype=torch.float16), "starts": torch.tensor([True])}, "torch.float16"),
        ({"w": torch.zeros(2), "starts": torch.tensor([False])}, "only floating-point weights are averaged"),
        ({"w": torch.zeros(2)}, "hold different tensors (starts"),
    ],
    ids=["shape", "dtype", "buffer", "names"],
)
def test_checkpoints_that_do_not_match_are_refused_and_nothing_is_written(tmp_path, second, message):
    first = _checkpoint(tmp_path / "a", 1, {"w": torch.ones(2), "starts": torch.tensor([True])})
    other = _checkpoint(tmp_path / "b", 2, second)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        average_checkpoints([first, other], tmp_path / "out")
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_what_averaging_cannot_take_gets_one_clear_error(tmp_path):
    first = _checkpoint(tmp_path / "a", 1, {"w": torch.ones(2)})
    second = _checkpoint(tmp_path / "b", 2, {"w": torch.zeros(2)})
    same_step = _checkpoint(tmp_path / "c", 2, {"w": torch.zeros(2)})
    with pytest.raises(ValueError, match="two or more"):
        average_checkpoints([first], tmp_path / "out")
    with pytest.raises(ValueError, match="named twice"):
        average_checkpoints([first, tmp_path / "a" / "." ], tmp_path / "out")
    with pytest.raises(ValueError, match="same step"):
        average_checkpoints([first, second, same_step], tmp_path / "out")
    (tmp_path / "b" / "model.safetensors").rename(tmp_path / "b" / "weights.bin")
    with pytest.raises(ValueError, match="has no safetensors weights"):
        average_checkpoints([first, second], tmp_path / "out")
    (tmp_path / "c" / "model.safetensors").rename(tmp_path / "c" / "model-00001-of-00001.safetensors")
    with pytest.raises(ValueError, match="holds weight files"):
        average_checkpoints([first, same_step], tmp_path / "out")
    with pytest.raises(ValueError, match="not a model folder"):
        average_checkpoints([first, tmp_path], tmp_path / "out")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("kept")
    (tmp_path / "b" / "weights.bin").rename(tmp_path / "b" / "model.safetensors")
    with pytest.raises(FileExistsError):
        average_checkpoints([first, second], tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mine.txt"]
    average_checkpoints([first, second], tmp_path / "out", overwrite=True)
    assert torch.equal(load_file(tmp_path / "out" / "model.safetensors")["w"], torch.full((2,), 0.5))


def test_the_recipe_says_what_is_wrong_in_one_line(tmp_path, capsys):
    first = _checkpoint(tmp_path / "a", 1, {"w": torch.ones(2)})
    with pytest.raises(SystemExit) as stopped:
        average_recipe.main([str(first), "-o", str(tmp_path / "out")])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip() == "average_checkpoints.py: averaging needs two or more checkpoints, got 1"
    for argv in (["--run", str(tmp_path), "-o", "x"], [str(first), "--run", str(tmp_path), "--last", "1", "-o", "x"],
                 [str(first), str(first), "--last", "1", "-o", "x"], ["--run", str(tmp_path), "--last", "2", "-o", "x"]):
        with pytest.raises(SystemExit) as stopped:
            average_recipe.main(argv)
        assert stopped.value.code == 2
