#!/usr/bin/env python
"""Static int8 of the default's OpenVINO graph with NNCF's post-training quantisation, for CPUs without
bf16 units: builds an OpenVINO folder; ``dev_eval.py`` and ``speed.py`` then measure it as any OpenVINO
export (it loads through the same ``pipeline("punct-case", model=FOLDER)``).

    pip install nncf                                  # not a dependency of the package
    python benchmarks/openvino_int8.py --out runs/openvino_int8 --corpora ted swda mts_dialog aci_bench
    python benchmarks/dev_eval.py --model runs/openvino_int8/graph --no-truecase
    python benchmarks/speed.py --model runs/openvino_int8/graph default --runtimes openvino onnxruntime --interleave --repeats 5

From the default's OpenVINO graph (the fp32 IR that the pipeline builds and caches), ``nncf.quantize``
with the transformer model type (its SmoothQuant and its rules for attention) and the mixed preset
(weights int8 symmetric per output channel, activations int8 asymmetric per tensor), calibrated on
windows of training documents cut as the pipeline cuts them (:mod:`hf_punctcase.export.calibration`;
``--corpora``, an equal share each, never a dev or test document). ``--weights-only`` quantises the
products with a weight matrix only, as the per-token graph does, leaving attention's products of two
activations in floating point; ``--float-products`` leaves the products named in floating point.
What is not int8 runs in the CPU's precision (bf16 with avx512_bf16 or AMX, else fp32), as for every
OpenVINO graph.
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
    parser.add_argument("--corpora", nargs="+", default=["ted"],
                        help="training corpora whose windows calibrate, an equal share each (default: ted)")
    parser.add_argument("--weights-only", action="store_true",
                        help="leave attention's products of two activations in floating point")
    parser.add_argument("--float-products", nargs="+", default=[], metavar="NAME_PART",
                        help="leave in floating point the MatMuls whose graph names hold one of these parts: "
                        "'_classifier/' for the task heads, 'output/dense/' for each layer's second feed-forward product")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()

    import nncf
    import openvino
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from hf_punctcase.embedded import DEFAULT_MODEL_DIR
    from hf_punctcase.export.cache import build_graph
    from hf_punctcase.export.calibration import calibration_windows
    from hf_punctcase.formats.openvino import OPENVINO_MODEL_FILE
    from hf_punctcase.runtime import OnDeviceRestorer

    start = time.perf_counter()
    model = AutoModelForTokenClassification.from_pretrained(DEFAULT_MODEL_DIR, dtype="float32")
    tokenizer = AutoTokenizer.from_pretrained(DEFAULT_MODEL_DIR)
    source = build_graph(DEFAULT_MODEL_DIR, model, tokenizer, "openvino")
    out = Path(args.out)
    fp32 = out / "fp32"
    if not (fp32 / "model.onnx").is_file():
        # The fp32 ONNX export's restorer gives the engine that cuts and tokenises windows as the pipeline does.
        from hf_punctcase.export.onnx_graph import write_export

        shutil.rmtree(fp32, ignore_errors=True)
        fp32.mkdir(parents=True)
        write_export(model, tokenizer, fp32, source="default")
    del model
    windows = calibration_windows(OnDeviceRestorer(fp32).engine, args.windows, args.corpora, args.data_dir)

    graph = openvino.Core().read_model(str(source / OPENVINO_MODEL_FILE))
    names = []
    if args.float_products:
        # The graph keeps the torch modules' names: /model/punct_classifier/MatMul, .../layer.5/output/dense/MatMul.
        names += [node.get_friendly_name() for node in graph.get_ops() if node.get_type_name() == "MatMul"
                  and any(part in node.get_friendly_name() for part in args.float_products)]
    if args.weights_only:
        # A MatMul whose second input is not a constant (through a Convert, where the IR stores one) is a
        # product of two activations: attention's scores and its weighted sum.
        def activation_product(node) -> bool:
            second = node.input_value(1).get_node()
            while second.get_type_name() == "Convert":
                second = second.input_value(0).get_node()
            return second.get_type_name() != "Constant"

        names += [node.get_friendly_name() for node in graph.get_ops()
                  if node.get_type_name() == "MatMul" and activation_product(node)]
    ignored = nncf.IgnoredScope(names=names) if names else None
    quantized = nncf.quantize(
        graph, nncf.Dataset(windows), model_type=nncf.ModelType.TRANSFORMER, preset=nncf.QuantizationPreset.MIXED,
        subset_size=len(windows), ignored_scope=ignored,
    )
    target = out / "graph"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("openvino_model.*", "cache_record.json"))
    openvino.save_model(quantized, str(target / OPENVINO_MODEL_FILE), compress_to_fp16=False)
    print(json.dumps({
        "graph": str(target), "calibration_windows": len(windows), "corpora": args.corpora,
        "weights_only": args.weights_only, "float_products": args.float_products, "ignored_matmuls": len(ignored.names) if ignored else 0,
        "size_bytes": sum(f.stat().st_size for f in target.iterdir()), "nncf": nncf.__version__,
        "seconds": round(time.perf_counter() - start, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
