#!/usr/bin/env python
"""Static int8 with calibration, against the per-token int8 graph that the plan runs on CPUs without bf16
units: builds the graph; ``dev_eval.py`` and ``speed.py`` then measure it as any ONNX export.

    python benchmarks/static_int8.py --out runs/static_int8                 # minmax, 256 windows
    python benchmarks/static_int8.py --out runs/static_int8_ma --moving-average
    python benchmarks/static_int8.py --out runs/static_int8_mix --corpora ted swda mts_dialog aci_bench
    python benchmarks/dev_eval.py --model runs/static_int8/graph --no-truecase --sets TED SwDA MTS ACI
    python benchmarks/dev_eval.py --model default --runtime onnxruntime --no-truecase --sets TED SwDA MTS ACI
    python benchmarks/speed.py --model runs/static_int8/graph default --runtimes onnxruntime --interleave --repeats 5

From the embedded default: its fp32 ONNX export (the folder the pipeline's own export writes), then ONNX
Runtime's static quantisation (``quantize_static``: QDQ, weights int8 per output channel, activations
uint8 per tensor with scales fixed by calibration) of the same MatMuls the per-token graph quantises
(the products with a weight matrix, not attention's products of two activations; and
``hf_punctcase.export.cache.keeps_float`` keeps the feed-forward output projections and the heads in
fp32). Calibration runs the fp32 graph on windows of training documents (``--corpora``: TED talks by
default; never a dev or test document), lowercased and unpunctuated, tokenised and cut as the pipeline
cuts them, one window a call. Fixed
activation scales read nothing of a window's batch mates, so the graph runs whole batches.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="working folder; the graph is written to OUT/graph")
    parser.add_argument("--windows", type=int, default=256, help="calibration windows (default: %(default)s)")
    parser.add_argument("--method", choices=["minmax", "percentile", "entropy"], default="minmax")
    parser.add_argument("--moving-average", action="store_true",
                        help="minmax: each tensor's range the moving average of the windows' ranges, not their extremes")
    parser.add_argument("--corpora", nargs="+", default=["ted"],
                        help="training corpora whose windows calibrate, an equal share each (default: ted)")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()

    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from hf_punctcase.embedded import DEFAULT_MODEL_DIR
    from hf_punctcase.export.calibration import calibration_windows
    from hf_punctcase.export.cache import keeps_float
    from hf_punctcase.export.onnx_graph import write_export
    from hf_punctcase.runtime import OnDeviceRestorer
    from hf_punctcase.backends.onnxruntime import EXPORT_INFO_FILE, ONNX_MODEL_FILE

    out = Path(args.out)
    fp32, graph = out / "fp32", out / "graph"
    start = time.perf_counter()
    if not (fp32 / ONNX_MODEL_FILE).is_file():
        shutil.rmtree(fp32, ignore_errors=True)
        fp32.mkdir(parents=True)
        model = AutoModelForTokenClassification.from_pretrained(DEFAULT_MODEL_DIR, dtype="float32")
        write_export(model, AutoTokenizer.from_pretrained(DEFAULT_MODEL_DIR), fp32, source="default")
    # The fp32 export's own restorer: its engine cuts and tokenises windows as the pipeline does.
    fp32_restorer = OnDeviceRestorer(fp32)
    windows = calibration_windows(fp32_restorer.engine, args.windows, args.corpora, args.data_dir)
    del fp32_restorer

    class Windows(CalibrationDataReader):
        def __init__(self):
            self._items = iter(windows)

        def get_next(self):
            return next(self._items, None)

    traced = onnx.load(fp32 / ONNX_MODEL_FILE, load_external_data=False).graph
    weights = {initializer.name for initializer in traced.initializer}
    matmuls = [node for node in traced.node if node.op_type == "MatMul"]
    # As the per-token graph: only products with a weight matrix (not attention's products of two
    # activations), less those the cached graph keeps in fp32.
    excluded = [node.name for node in matmuls if node.input[1] not in weights or keeps_float(node.name)]
    shutil.rmtree(graph, ignore_errors=True)
    shutil.copytree(fp32, graph, ignore=shutil.ignore_patterns(ONNX_MODEL_FILE, EXPORT_INFO_FILE))
    method = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile, "entropy": CalibrationMethod.Entropy}[args.method]
    quantize_static(
        str(fp32 / ONNX_MODEL_FILE), str(graph / ONNX_MODEL_FILE), Windows(),
        quant_format=QuantFormat.QDQ, op_types_to_quantize=["MatMul"], per_channel=True,
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, nodes_to_exclude=excluded,
        calibrate_method=method, extra_options={"CalibMovingAverage": args.moving_average},
    )
    info = json.loads((fp32 / EXPORT_INFO_FILE).read_text())
    info.update(precision="int8", quantization={
        "method": f"static int8 ({args.method}{' moving average' if args.moving_average else ''} calibration, "
        f"{len(windows)} training windows of {', '.join(args.corpora)})",
        "weight_type": "int8", "per_channel": True, "op_types": ["MatMul"],
    }, size_bytes=(graph / ONNX_MODEL_FILE).stat().st_size)
    (graph / EXPORT_INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
    print(json.dumps({
        "graph": str(graph), "calibration_windows": len(windows), "method": args.method, "moving_average": args.moving_average, "corpora": args.corpora,
        "matmuls": len(matmuls), "quantized": len(matmuls) - len(excluded), "size_bytes": info["size_bytes"],
        "seconds": round(time.perf_counter() - start, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
