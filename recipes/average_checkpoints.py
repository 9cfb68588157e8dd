#!/usr/bin/env python
"""Average the weights of several checkpoints of one training run into one model folder, loadable,
exportable and shippable like any checkpoint (hf_punctcase.training.averaging).

    python recipes/average_checkpoints.py runs/x/checkpoint-1200 runs/x/checkpoint-1400 -o runs/x-avg
    python recipes/average_checkpoints.py --run runs/x --last 3 -o runs/x-avg           # the newest 3
    python recipes/average_checkpoints.py --run runs/x --last 3 --up-to-step 1600 -o runs/x-avg
    python recipes/average_checkpoints.py --stages runs/a/checkpoint-800 runs/b/checkpoint-800 -o runs/soup

``--run`` takes the run's checkpoints from its output folder and from ``checkpoint_models/``, where a run
with ``keep_checkpoint_models: true`` keeps every checkpoint's model. ``--stages`` averages the ends of
stages that went on from one branch point (``branch_from``), one checkpoint a stage: a model soup.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from hf_punctcase.training.averaging import KEPT_MODELS_DIR, average_checkpoints, run_checkpoints, saved_step


def recorded_command(args: argparse.Namespace) -> str:
    """The command as the averaged model's record and card keep it, its folders named by role (a card must
    not carry a machine's paths): OUTPUT_DIR is the training run's output folder."""
    if args.run:
        selection = ["--run", "OUTPUT_DIR", "--last", str(args.last)]
        selection += ["--up-to-step", str(args.up_to_step)] if args.up_to_step is not None else []
    else:
        # Stages are several runs: STAGE_1_DIR, STAGE_2_DIR, … in the order named.
        runs = [f"STAGE_{number}_DIR" if args.stages else "OUTPUT_DIR" for number in range(1, len(args.checkpoints) + 1)]
        selection = [f"{run}/{Path(checkpoint).parent.name}/{Path(checkpoint).name}"
                     if Path(checkpoint).parent.name == KEPT_MODELS_DIR else f"{run}/{Path(checkpoint).name}"
                     for run, checkpoint in zip(runs, args.checkpoints)]
        selection = ["--stages", *selection] if args.stages else selection
    return shlex.join(["python", "recipes/average_checkpoints.py", *selection, "-o", "AVERAGED_DIR"])


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="*", help="checkpoint folders of one run (or use --run)")
    parser.add_argument("--run", help="a run's output folder: average its newest --last checkpoints")
    parser.add_argument("--last", type=int, help="with --run: how many of its newest checkpoints")
    parser.add_argument("--up-to-step", type=int, help="with --run: only checkpoints saved at this step or before")
    parser.add_argument("-o", "--output", required=True, help="the folder to write (must not exist, unless --overwrite)")
    parser.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    parser.add_argument(
        "--stages", action="store_true",
        help="the named checkpoints are the ends of stages branched from one checkpoint, one a stage (a model soup)",
    )
    args = parser.parse_args(argv)
    if bool(args.run) == bool(args.checkpoints):
        parser.error("name the checkpoints, or a run with --run and --last (not both)")
    if args.run and args.stages:
        parser.error("--stages takes named checkpoints, one a stage, not --run")
    if args.run:
        if not args.last:
            parser.error("--run needs --last N: how many of the run's newest checkpoints to average")
        found = [c for c in run_checkpoints(args.run) if args.up_to_step is None or saved_step(c) <= args.up_to_step]
        if len(found) < args.last:
            parser.error(f"{args.run} has {len(found)} checkpoints{' up to that step' if args.up_to_step else ''}, not {args.last}")
        checkpoints = found[-args.last :]
    elif args.last or args.up_to_step:
        parser.error("--last and --up-to-step go with --run")
    else:
        checkpoints = [Path(c) for c in args.checkpoints]
    try:
        output = average_checkpoints(checkpoints, args.output, overwrite=args.overwrite, command=recorded_command(args),
                                     stages=args.stages)
    except (ValueError, FileExistsError) as error:
        parser.exit(2, f"average_checkpoints.py: {error}\n")
    print(f"wrote {output}: the mean of {', '.join(str(c) for c in checkpoints)}")
    return output


if __name__ == "__main__":
    main()
