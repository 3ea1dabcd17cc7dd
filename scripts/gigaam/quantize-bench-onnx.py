#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The int8 twin of the benchmark ONNX model, for onnxruntime's side of
bench/compare-gigaam.sh: every MatMul whose B is a constant 2-D weight
(outside the front-end) becomes dynamic quantisation, the recipe of
onnxruntime's own quantize_dynamic with per-channel weights:

  A -> DynamicQuantizeLinear -> (A_q uint8, a_scale, a_zero_point)
  MatMulInteger (A_q, W_q, a_zero_point) -> int32      W_q int8 [K, N], per column
  Cast (float) * (a_scale * w_scale [N])               w_scale = max |W[:, n]| / 127

which onnxruntime's graph optimiser fuses into one DynamicQuantizeMatMul.
The rest (attention's products of activations, the convolutions, the
front-end) stays f32.

  quantize-bench-onnx.py gigaam-v3-full.onnx gigaam-v3-full-int8.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def quantize(model):
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    nodes, done = [], 0
    for node in graph.node:
        w = inits.get(node.input[1]) if node.op_type == "MatMul" else None
        if w is None or len(w.dims) != 2 or node.name.startswith("/frontend"):
            nodes.append(node)
            continue
        wf = numpy_helper.to_array(w).astype(np.float32)
        scale = np.abs(wf).max(axis=0) / 127.0
        scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
        wq = np.clip(np.rint(wf / scale), -127, 127).astype(np.int8)
        p = f"{node.name or node.output[0]}/int8"
        graph.initializer.append(numpy_helper.from_array(wq, p + "/w"))
        graph.initializer.append(numpy_helper.from_array(scale, p + "/w_scale"))
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [node.input[0]],
                             [p + "/a", p + "/a_scale", p + "/a_zero"], name=p + "/quantize"),
            helper.make_node("MatMulInteger", [p + "/a", p + "/w", p + "/a_zero"], [p + "/sum"],
                             name=p + "/matmul"),
            helper.make_node("Cast", [p + "/sum"], [p + "/sum_f"], to=onnx.TensorProto.FLOAT,
                             name=p + "/cast"),
            helper.make_node("Mul", [p + "/a_scale", p + "/w_scale"], [p + "/scale"],
                             name=p + "/scale"),
            helper.make_node("Mul", [p + "/sum_f", p + "/scale"], [node.output[0]],
                             name=p + "/rescale"),
        ]
        done += 1
    del graph.node[:]
    graph.node.extend(nodes)
    # the f32 weights the quantised products replaced
    used = {i for n in graph.node for i in n.input}
    keep = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return done


def main():
    src, dst = sys.argv[1], sys.argv[2]
    model = onnx.load(src)
    done = quantize(model)
    onnx.save(model, dst)
    print(f"quantize-bench-onnx: {done} MatMuls in int8 -> {dst}")


if __name__ == "__main__":
    main()
