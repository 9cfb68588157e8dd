#!/usr/bin/env bash
# What a lent GPU runs first, in one call of the device tool (a few minutes): words/s of the default and
# the accurate model at batch 64 against transformers' token-classification pipeline on the same GPU
# (benchmarks/speed.py, interleaved rounds), in the plan's choice there and in bf16, and that choice.
# The GPU machine's image has torch and transformers but neither datasets, rapidfuzz, evaluate nor
# OpenVINO, and no copy of ../shared/data: the package runs from its source (PYTHONPATH), which needs
# none of them for this, and the one transcript travels in gpu_data/ (ignored by git, named in carry):
#
#   mkdir -p gpu_data/iwslt && cp ../shared/data/iwslt/dev2010_cased.txt gpu_data/iwslt/
#   device run: command "bash benchmarks/gpu_lease.sh", carry ["gpu_data"], timeout_s 420
#
# What travels to that machine is the whole working tree, and a call carries at most 64 MiB: the embedded
# weights alone are 183 MB (the default 73 MB and the accurate model 110 MB, int8), so this run waits
# for a way to send them (a tree without them plus the weights in parts, or a larger allowance).
#
# The figures come back under $OUT (runs/gpu_lease where it is not set): plan.txt, speed_<model>.json
# and .md, and the log. DEVICE=cpu runs the same steps on the CPU (a check before a lease; slow).
set -euo pipefail
OUT=${OUT:-runs/gpu_lease}
DEVICE=${DEVICE:-cuda}
REPEATS=${REPEATS:-5}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
    python3 -c "
import torch, transformers, hf_punctcase.loading as loading
print('torch', torch.__version__, 'transformers', transformers.__version__)
for model in ('default', 'accurate'):
    print(model, loading.plan_execution(model, device='$DEVICE'))"
} 2>&1 | tee "$OUT/plan.txt"
for model in default accurate; do
    python3 benchmarks/speed.py --model "$model" --device "$DEVICE" --dtypes auto bfloat16 --batch-size 64 --stock \
        --interleave --repeats "$REPEATS" --latency-repeats 9 --data-dir gpu_data \
        --json "$OUT/speed_$model.json" --markdown "$OUT/speed_$model.md" 2>&1 | tee "$OUT/log_$model.txt"
done
