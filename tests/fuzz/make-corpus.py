#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpora of the fuzz targets (docs/fuzzing.md).

  tests/fuzz/make-corpus.py

writes tests/fuzz/corpus/<target>/seed-*: small valid or nearly valid
inputs that reach deep into each parser, from which libFuzzer mutates.
Standard library only, plus clang for the kernel objects. The inputs are
the same on every run (fixed values, no randomness), so the committed files
can be checked against a rerun. Regression inputs (the other files of the
corpus folders) are kept as they are.

  onnx    the ONNX reader's test fixture, every tensor data type in raw and
          typed fields, and nested subgraphs
  silero  graphs shaped like Silero VAD v4 and v5 (the rate switch, the STFT
          basis) whose weights are too small or kept outside: the real
          files are 1-2 MB
  gigaam  two tiny GigaAM models (v3 and v2, d_model 4) that load, and a
          safetensors file of every data type
  elf     kernel-like objects from clang -c with the JIT's flags
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures")


def write(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def values(n, scale=0.5):
    """n fixed, finite values in [-scale, scale]."""
    return [scale * math.sin(1.0 + 0.7 * k) for k in range(n)]


# ---- protobuf wire format and the ONNX messages (onnx/onnx.proto) ----

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_varint(field, v):
    return varint(field << 3) + varint(v)


def pb_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(field << 3 | 2) + varint(len(b)) + b


def pb_fixed32(field, bits):
    return varint(field << 3 | 5) + struct.pack("<I", bits)


def pb_fixed64(field, bits):
    return varint(field << 3 | 1) + struct.pack("<Q", bits)


FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = 1, 2, 3, 4, 5, 6, 7, 8, 9
FLOAT16, DOUBLE, UINT32, UINT64, BFLOAT16 = 10, 11, 12, 13, 16


def tensor(name, dims, dtype, raw=None, fields=b"", external=False):
    """A TensorProto; `fields` holds typed data fields already encoded."""
    msg = pb_bytes(1, b"".join(varint(d) for d in dims)) if dims else b""
    msg += pb_varint(2, dtype) + pb_bytes(8, name) + fields
    if raw is not None:
        msg += pb_bytes(9, raw)
    if external:
        msg += pb_bytes(13, pb_bytes(1, "location") + pb_bytes(2, "weights.bin"))
        msg += pb_varint(14, 1)
    return msg


def f32_raw(vals):
    return struct.pack("<%df" % len(vals), *vals)


def attr(name, atype, payload):
    return pb_bytes(1, name) + payload + pb_varint(20, atype)


def attr_graph(name, graph_msg):
    return attr(name, 5, pb_bytes(6, graph_msg))


def attr_tensor(name, tensor_msg):
    return attr(name, 4, pb_bytes(5, tensor_msg))


def node(op, inputs, outputs, name="", attrs=()):
    msg = b"".join(pb_bytes(1, i) for i in inputs) + b"".join(pb_bytes(2, o) for o in outputs)
    if name:
        msg += pb_bytes(3, name)
    msg += pb_bytes(4, op) + b"".join(pb_bytes(5, a) for a in attrs)
    return msg


def graph(name, nodes=(), initializers=(), inputs=(), outputs=()):
    msg = b"".join(pb_bytes(1, n) for n in nodes) + pb_bytes(2, name)
    msg += b"".join(pb_bytes(5, t) for t in initializers)
    msg += b"".join(pb_bytes(11, pb_bytes(1, i)) for i in inputs)
    msg += b"".join(pb_bytes(12, pb_bytes(1, o)) for o in outputs)
    return msg


def model(graph_msg, opset=16):
    return (pb_varint(1, 8) + pb_bytes(2, "make-corpus") + pb_bytes(3, "1")
            + pb_bytes(8, pb_bytes(1, "") + pb_varint(2, opset)) + pb_bytes(7, graph_msg))


# ---- onnx ----

def onnx_seeds():
    shutil.copyfile(os.path.join(FIXTURES, "onnx-tiny.onnx"),
                    os.path.join(CORPUS, "onnx", "seed-fixture-tiny.onnx"))
    f = values(6)
    typed = [
        tensor("f_raw", [2, 3], FLOAT, raw=f32_raw(f)),
        tensor("f_packed", [2, 3], FLOAT, fields=pb_bytes(4, f32_raw(f))),
        tensor("f_unpacked", [2], FLOAT,
               fields=b"".join(pb_fixed32(4, struct.unpack("<I", struct.pack("<f", v))[0])
                               for v in f[:2])),
        tensor("d_packed", [3], DOUBLE, fields=pb_bytes(10, struct.pack("<3d", *f[:3]))),
        tensor("d_raw", [1], DOUBLE, raw=struct.pack("<d", -2.5)),
        tensor("h_raw", [3], FLOAT16, raw=struct.pack("<3e", 1.0, -0.5, 6e-5)),
        tensor("h_typed", [2], FLOAT16, fields=pb_bytes(5, varint(0x3C00) + varint(0x8001))),
        tensor("bf_typed", [2], BFLOAT16, fields=pb_bytes(5, varint(0x3F80) + varint(0xC000))),
        tensor("i8_raw", [4], INT8, raw=bytes([0, 1, 0x7F, 0x80])),
        tensor("u16_typed", [2], UINT16, fields=pb_varint(5, 65535) + pb_varint(5, 7)),
        tensor("i32_packed", [3], INT32, fields=pb_bytes(5, varint(-1) + varint(5) + varint(300))),
        tensor("i64_unpacked", [2], INT64, fields=pb_varint(7, 16000) + pb_varint(7, -3)),
        tensor("i64_raw", [], INT64, raw=struct.pack("<q", 8000)),
        tensor("u32_typed", [1], UINT32, fields=pb_varint(11, 1 << 31)),
        tensor("u64_packed", [2], UINT64, fields=pb_bytes(11, varint(1 << 63) + varint(2))),
        tensor("b_raw", [3], BOOL, raw=bytes([0, 1, 2])),
        tensor("s_typed", [2], STRING, fields=pb_bytes(6, "ab") + pb_bytes(6, "")),
        tensor("empty", [0, 4], FLOAT, raw=b""),
        tensor("ext", [1000, 1000], FLOAT, external=True),
    ]
    write("onnx", "typed.onnx", model(graph("typed", initializers=typed)))

    # If in a Loop in an If, Constant values at each depth, an unnamed node,
    # attributes of every kind
    leaf = graph("leaf", nodes=[node("Constant", [], ["c2"], attrs=[
        attr_tensor("value", tensor("", [2], INT32, raw=struct.pack("<2i", 1, -1)))])],
        outputs=["c2"])
    loop_body = graph("body", nodes=[
        node("If", ["cond"], ["y"], "inner_if",
             [attr_graph("then_branch", leaf), attr_graph("else_branch", leaf)])],
        inputs=["i", "cond"], outputs=["cond", "y"])
    branch = graph("branch", nodes=[
        node("Loop", ["n", "", "x"], ["z"], "", [attr_graph("body", loop_body)]),
        node("Constant", [], ["c1"], "k1", [attr_tensor("value", tensor("", [], FLOAT,
                                                                          raw=f32_raw([3.0])))]),
    ], outputs=["z"])
    misc = [
        attr("alpha", 1, pb_fixed32(2, 0x3F000000)),
        attr("axis", 2, pb_varint(3, -1)),
        attr("mode", 3, pb_bytes(4, "linear")),
        attr("scales", 6, pb_bytes(7, f32_raw([1.0, 2.0]))),
        attr("pads", 7, pb_bytes(8, varint(0) + varint(1))),
        attr("names", 8, pb_bytes(9, "a") + pb_bytes(9, "b")),
        attr("ts", 9, pb_bytes(10, tensor("t0", [1], INT64, raw=struct.pack("<q", 7)))),
        attr("gs", 10, pb_bytes(11, leaf)),
        pb_bytes(1, "untyped") + pb_varint(3, 4),
    ]
    main = graph("main", nodes=[
        node("Equal", ["sr", "k16"], ["eq"], "eq0"),
        node("If", ["eq"], ["out"], "If_0",
             [attr_graph("then_branch", branch), attr_graph("else_branch", branch)]),
        node("Resize", ["out"], ["r"], "resize", misc),
    ], initializers=[tensor("k16", [], INT64, raw=struct.pack("<q", 16000))],
        inputs=["sr", "x", "n"], outputs=["r"])
    write("onnx", "nested.onnx", model(main))


# ---- silero ----

def rate_switch(then_g, else_g, sr_value=16000, sr_as_constant=True, extra_init=()):
    """A main graph with Equal (sr, k) -> If, k = sr_value, as Silero has it."""
    k = tensor("" if sr_as_constant else "k", [], INT64, raw=struct.pack("<q", sr_value))
    nodes = []
    inits = list(extra_init)
    if sr_as_constant:
        nodes.append(node("Constant", [], ["k"], "Constant_0", [attr_tensor("value", k)]))
    else:
        inits.append(k)
    nodes += [
        node("Equal", ["sr", "k"], ["eq"], "Equal_0"),
        node("If", ["eq"], ["out", "stateN"], "If_0",
             [attr_graph("then_branch", then_g), attr_graph("else_branch", else_g)]),
    ]
    return model(graph("main_graph", nodes, inits, ["input", "state", "sr"], ["out", "stateN"]))


def v5_branch(name, L, external):
    F = L // 2 + 1
    if external:
        basis = tensor("stft.forward_basis_buffer", [2 * F, 1, L], FLOAT, external=True)
    else:  # too small: [2F, 1, L] is expected
        basis = tensor("stft.forward_basis_buffer", [2, 1, 2], FLOAT, raw=f32_raw(values(4)))
    conv = node("Conv", ["input", "stft.forward_basis_buffer"], ["stft"], name + "_conv",
                [attr("strides", 7, pb_bytes(8, varint(L // 2)))])
    return graph(name, [conv], [basis], ["input"], ["stft"])


def silero_seeds():
    write("silero", "v5-small-basis.onnx",
          rate_switch(v5_branch("then", 256, False), v5_branch("else", 128, False)))
    write("silero", "v5-external-basis.onnx",
          rate_switch(v5_branch("then", 256, True), v5_branch("else", 128, True)))
    v4_basis = tensor("model.feature_extractor.forward_basis_buffer", [2, 1, 2], FLOAT,
                      raw=f32_raw(values(4)))
    down = tensor("1110", [16, 16, 1], FLOAT, external=True)
    lstm_then = graph("lstm", [node("LSTM", ["x", "W", "R", "B"], ["h"], "LSTM_0"),
                               node("LSTM", ["h", "W2", "R2", "B2"], ["h2"], "LSTM_1")])
    v4_then = graph("then", [node("Conv", ["x", "1110"], ["y"], "Conv_5",
                                  [attr("strides", 7, pb_bytes(8, varint(2)))]),
                             node("If", ["c"], ["h2"], "If_1",
                                  [attr_graph("then_branch", lstm_then),
                                   attr_graph("else_branch", lstm_then)])])
    write("silero", "v4-small-basis.onnx",
          rate_switch(v4_then, v4_then, sr_as_constant=False, extra_init=[v4_basis, down]))
    write("silero", "not-16k.onnx",
          rate_switch(v5_branch("then", 256, False), v5_branch("else", 128, False),
                      sr_value=8000))


# ---- gigaam (docs/gigaam-model.md) ----

def safetensors(tensors, metadata):
    """tensors: [(name, dtype, shape, bytes)] in data order."""
    header = {"__metadata__": metadata}
    data = b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


PACK = {"F32": "<%df", "F16": "<%de", "F64": "<%dd"}


def st_tensor(name, shape, dtype="F16", vals=None):
    n = math.prod(shape)
    vals = values(n) if vals is None else vals
    if dtype == "BF16":
        raw = b"".join(struct.pack("<f", v)[2:] for v in vals)
    else:
        raw = struct.pack(PACK[dtype] % n, *vals)
    return (name, dtype, shape, raw)


def gigaam_config(v2, n_fft=8):
    return {
        "format": "morok-gigaam", "format_version": 1, "model_class": "ctc",
        "preprocessor": {
            "sample_rate": 16000, "n_fft": n_fft, "win_length": 6, "hop_length": 4, "n_mels": 2,
            "center": v2, "pad_mode": "reflect", "window": "hann_periodic", "power": 2.0,
            "log_clamp": [1e-9, 1e9],
        },
        "encoder": {
            "feat_in": 2, "n_layers": 1, "d_model": 4, "n_heads": 2, "ff_expansion_factor": 2,
            "conv_norm_type": "batch_norm" if v2 else "layer_norm",
            "subsampling": "conv2d" if v2 else "conv1d", "subsampling_factor": 4,
            "subs_kernel_size": 3, "subs_stride": 2, "subs_padding": 1,
            "self_attention_model": "rotary", "rope_base": 5000.0, "layer_norm_eps": 1e-5,
            "batch_norm_eps": 1e-5,
        },
        "head": {"type": "ctc", "feat_in": 4, "num_classes": 3, "blank_id": 2},
        "vocabulary": {"type": "sentencepiece" if v2 else "char",
                       "tokens": ["\u2581a", "b"] if v2 else [" ", "\u0430"]},
    }


def gigaam_model(v2, n_fft=8):
    d, ff, k, s, mels, bins, win = 4, 8, 3, 3, 2, n_fft // 2 + 1, 6
    f16, alt = "F16", "BF16" if v2 else "F32"
    hann = [0.5 - 0.5 * math.cos(2 * math.pi * n / win) for n in range(win)]
    t = [st_tensor("preprocessor.featurizer.0.spectrogram.window", [win], "F32", hann),
         st_tensor("preprocessor.featurizer.0.mel_scale.fb", [bins, mels],
                   "F64" if n_fft == 8 else "F16",
                   [abs(v) for v in values(bins * mels)])]
    if v2:
        t += [st_tensor("encoder.pre_encode.conv.0.weight", [d, 1, s, s]),
              st_tensor("encoder.pre_encode.conv.2.weight", [d, d, s, s]),
              st_tensor("encoder.pre_encode.out.weight", [d, d * 1], alt),
              st_tensor("encoder.pre_encode.out.bias", [d], alt)]
    else:
        t += [st_tensor("encoder.pre_encode.conv.0.weight", [d, mels, s]),
              st_tensor("encoder.pre_encode.conv.2.weight", [d, d, s])]
    t += [st_tensor("encoder.pre_encode.conv.0.bias", [d], alt),
          st_tensor("encoder.pre_encode.conv.2.bias", [d], alt)]
    p = "encoder.layers.0."
    for m in ("norm_feed_forward1", "norm_self_att", "norm_conv", "norm_feed_forward2",
              "norm_out", "conv.batch_norm"):
        t += [st_tensor(p + m + ".weight", [d], alt, [1.0] * d),
              st_tensor(p + m + ".bias", [d], alt)]
    if v2:
        t += [st_tensor(p + "conv.batch_norm.running_mean", [d], "F32"),
              st_tensor(p + "conv.batch_norm.running_var", [d], "F32", [1.0] * d)]
    for m in ("feed_forward1", "feed_forward2"):
        t += [st_tensor(p + m + ".linear1.weight", [ff, d]), st_tensor(p + m + ".linear1.bias", [ff]),
              st_tensor(p + m + ".linear2.weight", [d, ff]), st_tensor(p + m + ".linear2.bias", [d])]
    for m in ("linear_q", "linear_k", "linear_v", "linear_out"):
        t += [st_tensor(p + "self_attn." + m + ".weight", [d, d]),
              st_tensor(p + "self_attn." + m + ".bias", [d])]
    t += [st_tensor(p + "conv.pointwise_conv1.weight", [2 * d, d, 1]),
          st_tensor(p + "conv.pointwise_conv1.bias", [2 * d]),
          st_tensor(p + "conv.depthwise_conv.weight", [d, 1, k]),
          st_tensor(p + "conv.depthwise_conv.bias", [d]),
          st_tensor(p + "conv.pointwise_conv2.weight", [d, d, 1]),
          st_tensor(p + "conv.pointwise_conv2.bias", [d]),
          st_tensor("head.decoder_layers.0.weight", [3, d, 1]),
          st_tensor("head.decoder_layers.0.bias", [3])]
    meta = {"format": "pt", "morok.config": json.dumps(gigaam_config(v2, n_fft), sort_keys=True),
            "morok.dtype": "f16"}
    return safetensors(t, meta)


def gigaam_seeds():
    write("gigaam", "v3.safetensors", gigaam_model(False))
    write("gigaam", "v2.safetensors", gigaam_model(True))
    # regression: n_fft 65536 made the loader ask for 24 n_fft^2 bytes (100 GB)
    # of front-end tables and abort; now a config error (n_fft at most 2048)
    write("gigaam", "regress-n-fft.safetensors", gigaam_model(False, 65536))
    every = [st_tensor("f64", [2], "F64"), st_tensor("f32", [2, 2], "F32"),
             st_tensor("f16", [3], "F16"), st_tensor("bf16", [1, 3], "BF16"),
             ("i64", "I64", [2], struct.pack("<2q", -1, 1 << 40)),
             ("i32", "I32", [], struct.pack("<i", 7)),
             ("i16", "I16", [2], struct.pack("<2h", -2, 2)),
             ("i8", "I8", [2], bytes([0x80, 1])), ("u8", "U8", [1, 1, 1], bytes([255])),
             ("bool", "BOOL", [2], bytes([0, 1])), ("empty", "F32", [0, 5], b"")]
    write("gigaam", "dtypes.safetensors", safetensors(every, {"note": "every dtype"}))


# ---- elf ----

ELF_FLAGS = ["-x", "c", "-std=c11", "-c", "-ffreestanding", "-fno-math-errno", "-fPIC",
             "-fno-stack-protector", "-fno-asynchronous-unwind-tables", "-fassociative-math",
             "-fno-signed-zeros", "-fno-trapping-math", "-ffp-contract=fast",
             "-fvisibility=default", "-march=x86-64-v2", "-fno-common", "-O2"]

ELF_SOURCES = {
    # a loop over a constant table: .rodata and PC-relative relocations
    "loop": r"""
static const float table[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
void morok_k0 (void *const *bufs, const long *vars, unsigned tid, unsigned n)
{
  float *out = bufs[0];
  for (long i = tid; i < vars[0]; i += n)
    out[i] = out[i] * table[i & 7] + 0.5f;
}
""",
    # calls, writable data, .bss and pointers in data: PLT32, GOTPCREL, R_X86_64_64
    "calls": r"""
int counter;
float scale = 2.0f;
__attribute__ ((noinline)) static float twice (float x) { return x * scale; }
void morok_k1 (void *const *bufs, const long *vars, unsigned tid, unsigned n);
void (*const kernels[]) (void *const *, const long *, unsigned, unsigned) = { morok_k1 };
void morok_k1 (void *const *bufs, const long *vars, unsigned tid, unsigned n)
{
  float *out = bufs[0];
  counter += n;
  for (long i = tid; i < vars[0]; i += n)
    out[i] = twice (out[i]);
}
void morok_k2 (void *const *bufs, const long *vars, unsigned tid, unsigned n)
{
  kernels[0] (bufs, vars, tid, n);
}
""",
}


def elf_seeds():
    cc = shutil.which("clang")
    if cc is None:
        sys.exit("make-corpus.py: clang is needed for the ELF seeds")
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [(name, src, ELF_FLAGS) for name, src in ELF_SOURCES.items()]
        # unoptimised, with unwind tables: direct calls, .eh_frame
        # (SHT_X86_64_UNWIND) and its relocations
        jobs.append(("calls-O0-unwind", ELF_SOURCES["calls"],
                     [f for f in ELF_FLAGS if f not in ("-fno-asynchronous-unwind-tables", "-O2")]
                     + ["-fasynchronous-unwind-tables", "-O0"]))
        for name, src, flags in jobs:
            out = os.path.join(tmp, name + ".o")
            subprocess.run([cc, *flags, "-o", out, "-"], input=src.encode(), check=True)
            with open(out, "rb") as f:
                write("elf", name + ".elf", f.read())  # *.o is git-ignored


def main():
    for target in ("onnx", "silero", "gigaam", "elf"):
        folder = os.path.join(CORPUS, target)
        os.makedirs(folder, exist_ok=True)
        for old in os.listdir(folder):
            if old.startswith("seed-"):
                os.remove(os.path.join(folder, old))
    onnx_seeds()
    silero_seeds()
    gigaam_seeds()
    elf_seeds()


if __name__ == "__main__":
    main()
