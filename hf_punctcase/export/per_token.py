"""int8 matrix products with one activation scale per token: an fp32 ONNX graph rewritten so that
each MatMul with a weight multiplies 8-bit integers.

ONNX Runtime's dynamic quantisation gives a whole activation tensor one scale, computed over every
token of every sequence in the batch: one token with a large value coarsens all the others (the
default lost up to 1.5 dev F1 that way), and a sequence's outputs depend on its batch mates. Here each
token (each row of a MatMul's input) gets its own symmetric scale, so its quantisation reads nothing but
its own values:

    s_x   = max(|x_row|) / 127                         one per token
    x_q   = clip(round(x / s_x) + 128, 0, 255)         uint8, zero point 128
    y     = MatMulInteger(x_q, W_q, 128, 128) · s_x · s_w
    W_q   = round(W / s_w) + 128,  s_w = max(|W_col|) / 127   one per output channel

Weights and activations are uint8 around 128: ONNX Runtime's u8×u8 kernels add exact integer
products on every x86 CPU (u8×s8 kernels saturate on CPUs without VNNI). An int8-stored checkpoint's
dequantized weights land back on the grid they were stored on.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

#: The smallest token scale (a token of zeros still divides by something).
_EPSILON = 1e-8


def quantize_per_token(
    source: str | os.PathLike, target: str | os.PathLike, keep_float: Callable[[str], bool] = lambda name: False
) -> int:
    """Rewrite every MatMul of ``source`` whose second input is a 2-D weight as an int8 product with
    per-token activation scales and per-channel weight scales, except those whose node name
    ``keep_float`` accepts; write ``target``. Returns how many MatMuls were rewritten."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    consumers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    constants = [
        numpy_helper.from_array(np.array(127.0, dtype=np.float32), "per_token/127"),
        numpy_helper.from_array(np.array(128.0, dtype=np.float32), "per_token/128"),
        numpy_helper.from_array(np.array(_EPSILON, dtype=np.float32), "per_token/epsilon"),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "per_token/0"),
        numpy_helper.from_array(np.array(255.0, dtype=np.float32), "per_token/255"),
        numpy_helper.from_array(np.array(128, dtype=np.uint8), "per_token/zero_point"),
    ]
    nodes = []
    dropped: set[str] = set()
    rewritten = 0
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if weight is None or len(weight.dims) != 2 or keep_float(node.name):
            nodes.append(node)
            continue
        w = numpy_helper.to_array(weight).astype(np.float32)
        w_scale = np.maximum(np.abs(w).max(axis=0), _EPSILON) / 127.0
        w_q = (np.clip(np.round(w / w_scale), -127, 127) + 128).astype(np.uint8)
        p = f"{node.name or node.output[0]}/per_token"
        constants += [
            numpy_helper.from_array(w_q, f"{p}/W_q"),
            numpy_helper.from_array(w_scale.astype(np.float32), f"{p}/W_scale"),
            numpy_helper.from_array(np.full(w.shape[1], 128, dtype=np.uint8), f"{p}/W_zero_point"),
        ]
        if consumers.get(weight.name, 0) == 1:
            dropped.add(weight.name)
        x = node.input[0]
        nodes += [
            helper.make_node("Abs", [x], [f"{p}/abs"]),
            helper.make_node("ReduceMax", [f"{p}/abs"], [f"{p}/absmax"], axes=[-1], keepdims=1),
            helper.make_node("Max", [f"{p}/absmax", "per_token/epsilon"], [f"{p}/absmax_eps"]),
            helper.make_node("Div", [f"{p}/absmax_eps", "per_token/127"], [f"{p}/x_scale"]),
            helper.make_node("Div", [x, f"{p}/x_scale"], [f"{p}/x_scaled"]),
            helper.make_node("Round", [f"{p}/x_scaled"], [f"{p}/x_rounded"]),
            helper.make_node("Add", [f"{p}/x_rounded", "per_token/128"], [f"{p}/x_shifted"]),
            helper.make_node("Clip", [f"{p}/x_shifted", "per_token/0", "per_token/255"], [f"{p}/x_clipped"]),
            helper.make_node("Cast", [f"{p}/x_clipped"], [f"{p}/x_q"], to=onnx.TensorProto.UINT8),
            helper.make_node(
                "MatMulInteger", [f"{p}/x_q", f"{p}/W_q", "per_token/zero_point", f"{p}/W_zero_point"], [f"{p}/y_int"]
            ),
            helper.make_node("Cast", [f"{p}/y_int"], [f"{p}/y_float"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Mul", [f"{p}/y_float", f"{p}/x_scale"], [f"{p}/y_token"]),
            helper.make_node("Mul", [f"{p}/y_token", f"{p}/W_scale"], [node.output[0]]),
        ]
        rewritten += 1
    kept = [tensor for tensor in graph.initializer if tensor.name not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + constants)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))
    return rewritten


__all__ = ["quantize_per_token"]
