#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write the tiny GigaAM fixtures as model hub folders, the way upstream's
models are downloaded: config.json (upstream's config), the weights in
safetensors under upstream's names, tokenizer.model for the e2e models.

usage: make-hub-fixtures.py FIXTURES OUT [STAMP]
       make-hub-fixtures.py --compose-v3-rnnt FIXTURES OUT_FOLDER
       make-hub-fixtures.py --folder MODEL.safetensors OUT_FOLDER

The first form writes OUT/<kind>/ for the six upstream model kinds, each from
its converted fixture in FIXTURES (tests/fixtures), so that the folder holds
the same model as the file: `meson test` runs it at build time, and
tests/test-gigaam-hub.c and the transcriber's tests load both and compare.
Each folder takes another of the layouts a download may have:

  kind         from                               layout
  v3_ctc       gigaam-v3-tiny.safetensors         F32 (the fixture's F16 values), prefix "model.",
                                                  config at the top level
  v2_ctc       gigaam-v2-tiny.safetensors         BF16, two shards + model.safetensors.index.json
  v3_e2e_ctc   gigaam-v3-e2e-ctc-tiny.safetensors F16, no front-end buffers (made from the config)
  v3_e2e_rnnt  gigaam-v3-e2e-rnnt-tiny...         F16, prefix "module."
  v2_rnnt      gigaam-v2-rnnt-tiny.safetensors    BF16, the featurizer's buffers without ".0."
  v3_rnnt      gigaam-v3-rnnt-tiny.safetensors    F32

The config is upstream's spelling of each file's morok.config (the inverse of
convert.py's normalisation); scripts/gigaam/check.py converts every folder
with convert.py and compares the result with its fixture.

The second form writes the v3_rnnt model as a folder (upstream has a
v3_rnnt; the fixtures had none): the encoder of gigaam-v3-e2e-rnnt-tiny and
the RNN-T head and character vocabulary of gigaam-v2-rnnt-tiny (both
d_model 32). `convert.py OUT_FOLDER tests/fixtures/gigaam-v3-rnnt-tiny.safetensors`
made the committed file from it.

The third writes any converted file as a folder (its tensors as stored,
model.safetensors, the config at the top level): docs/benchmarks.md compares
the full-size benchmark model loaded both ways.

Only Python's standard library: this runs where PyTorch is not installed.
"""

import json
import mmap
import os
import shutil
import struct
import sys

TOKENIZER = "gigaam-tiny-tokenizer.model"
TOKENIZER_DIR = "/root/.cache/gigaam"  # where upstream's loader puts tokenizers
SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
         "U8": 1, "BOOL": 1}
WINDOW = "preprocessor.featurizer.0.spectrogram.window"
MEL_FB = "preprocessor.featurizer.0.mel_scale.fb"

# kind: converted fixture, storage (None: as stored), prefix, config under "cfg",
# shards, front-end buffers ("keep", "drop", "flat")
KINDS = {
    "v3_ctc": ("gigaam-v3-tiny.safetensors", "F32", "model.", False, 1, "keep"),
    "v2_ctc": ("gigaam-v2-tiny.safetensors", None, "", True, 2, "keep"),
    "v3_e2e_ctc": ("gigaam-v3-e2e-ctc-tiny.safetensors", None, "", True, 1, "drop"),
    "v3_e2e_rnnt": ("gigaam-v3-e2e-rnnt-tiny.safetensors", None, "module.", True, 1, "keep"),
    "v2_rnnt": ("gigaam-v2-rnnt-tiny.safetensors", None, "", True, 1, "flat"),
    "v3_rnnt": ("gigaam-v3-rnnt-tiny.safetensors", None, "", True, 1, "keep"),
}


# ---- safetensors, raw ----------------------------------------------------------

def read_safetensors(path):
    """(metadata, {name: (dtype, shape, bytes)}) in file order; the bytes are
    views of the mapped file, so that a large model is not read into memory."""
    with open(path, "rb") as f:
        data = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(bytes(data[8:8 + n]))
    meta = header.pop("__metadata__", {})
    base = 8 + n
    tensors = {}
    for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        b, e = t["data_offsets"]
        tensors[name] = (t["dtype"], t["shape"], data[base + b:base + e])
    return meta, tensors


def write_safetensors(path, tensors):
    """As the `safetensors` package writes: largest elements first, the header
    padded with spaces to a multiple of 8, metadata {"format": "pt"}."""
    order = sorted(tensors, key=lambda k: -SIZES[tensors[k][0]])
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name in order:
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in order:
            f.write(tensors[name][2])


def to_f32(dtype, raw):
    """The values of a float tensor as F32 bytes (exact from F16 and BF16)."""
    if dtype == "F32":
        return raw
    if dtype == "F16":
        return struct.pack("<%df" % (len(raw) // 2), *struct.unpack("<%de" % (len(raw) // 2), raw))
    if dtype == "BF16":
        halves = struct.unpack("<%dH" % (len(raw) // 2), raw)
        return struct.pack("<%dI" % len(halves), *(h << 16 for h in halves))
    raise ValueError("no F32 for %s" % dtype)


# ---- upstream's config -----------------------------------------------------------

def upstream_cfg(m, model_name):
    """Upstream's spelling of the normalised config `m` of the model `model_name`
    (docs/gigaam-model.md):
    features for n_mels, striding for conv2d, pos_emb_max_len for rope_base,
    the head's and decoding's classes; v2's front-end sizes left to their
    defaults, as upstream's v2 configs do."""
    pre, enc, head, vocab = m["preprocessor"], m["encoder"], m["head"], m["vocabulary"]
    v3 = enc["subsampling"] == "conv1d"
    sr = pre["sample_rate"]
    up_pre = {"_target_": "gigaam.preprocess.FeatureExtractor", "sample_rate": sr,
              "features": pre["n_mels"]}
    if v3:
        up_pre.update(win_length=pre["win_length"], hop_length=pre["hop_length"],
                      n_fft=pre["n_fft"], center=pre["center"])
    up_enc = {
        "_target_": "gigaam.encoder.ConformerEncoder", "feat_in": enc["feat_in"],
        "n_layers": enc["n_layers"], "d_model": enc["d_model"], "n_heads": enc["n_heads"],
        "subsampling": "conv1d" if v3 else "striding",
        "subs_kernel_size": enc["subs_kernel_size"], "subsampling_factor": 4,
        "ff_expansion_factor": enc["ff_expansion_factor"], "self_attention_model": "rotary",
        "pos_emb_max_len": int(enc["rope_base"]), "conv_kernel_size": enc["conv_kernel_size"],
        "conv_norm_type": enc["conv_norm_type"], "flash_attn": False,
    }
    classes = head["num_classes"]
    if head["type"] == "ctc":
        up_head = {"_target_": "gigaam.decoder.CTCHead", "feat_in": head["feat_in"],
                   "num_classes": classes}
        decoding = "gigaam.decoding.CTCGreedyDecoding"
    else:
        up_head = {
            "_target_": "gigaam.decoder.RNNTHead",
            "decoder": {"pred_hidden": head["pred_hidden"],
                        "pred_rnn_layers": head["pred_rnn_layers"], "num_classes": classes},
            "joint": {"enc_hidden": head["enc_hidden"], "pred_hidden": head["pred_hidden"],
                      "joint_hidden": head["joint_hidden"], "num_classes": classes},
        }
        decoding = "gigaam.decoding.RNNTGreedyDecoding"
    up_dec = {"_target_": decoding}
    if vocab["type"] == "sentencepiece":
        up_dec.update(vocabulary=None,
                      model_path="%s/%s_tokenizer.model" % (TOKENIZER_DIR, model_name))
    else:
        up_dec["vocabulary"] = vocab["tokens"]
    cfg = {"model_class": m["model_class"], "sample_rate": sr, "preprocessor": up_pre,
           "encoder": up_enc, "head": up_head, "decoding": up_dec}
    if m.get("model_name"):
        cfg["model_name"] = m["model_name"]
    return cfg


# ---- folders ----------------------------------------------------------------------

def write_folder(out, cfg, tensors, wrap, shards, tokenizer):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump({"model_type": "gigaam", "cfg": cfg} if wrap else cfg, f, ensure_ascii=False,
                  indent=1, sort_keys=True)
    names = list(tensors)
    if shards == 1:
        write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    else:
        weight_map, per = {}, -(-len(names) // shards)
        for i in range(shards):
            file = "model-%05d-of-%05d.safetensors" % (i + 1, shards)
            part = {k: tensors[k] for k in names[i * per:(i + 1) * per]}
            write_safetensors(os.path.join(out, file), part)
            weight_map.update({k: file for k in part})
        total = sum(len(t[2]) for t in tensors.values())
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1,
                      sort_keys=True)
    if tokenizer:
        shutil.copyfile(tokenizer, os.path.join(out, "tokenizer.model"))


def make_kind(fixtures, out, kind):
    src, storage, prefix, wrap, shards, frontend = KINDS[kind]
    meta, tensors = read_safetensors(os.path.join(fixtures, src))
    m = json.loads(meta["morok.config"])
    out_tensors = {}
    for name, (dtype, shape, raw) in tensors.items():
        if name in (WINDOW, MEL_FB) and frontend == "drop":
            continue
        if name in (WINDOW, MEL_FB) and frontend == "flat":
            name = name.replace(".0.", ".", 1)
        if storage == "F32" and dtype in ("F16", "BF16"):
            dtype, raw = "F32", to_f32(dtype, raw)
        out_tensors[prefix + name] = (dtype, shape, raw)
    sp = m["vocabulary"]["type"] == "sentencepiece"
    write_folder(os.path.join(out, kind), upstream_cfg(m, kind), out_tensors, wrap, shards,
                 os.path.join(fixtures, TOKENIZER) if sp else None)


def compose_v3_rnnt(fixtures, out):
    """The encoder of the v3 e2e RNN-T fixture with the v2 RNN-T fixture's
    head and characters."""
    meta3, enc = read_safetensors(os.path.join(fixtures, "gigaam-v3-e2e-rnnt-tiny.safetensors"))
    meta2, head = read_safetensors(os.path.join(fixtures, "gigaam-v2-rnnt-tiny.safetensors"))
    m3, m2 = json.loads(meta3["morok.config"]), json.loads(meta2["morok.config"])
    if m3["encoder"]["d_model"] != m2["head"]["enc_hidden"]:
        raise SystemExit("the head reads %d channels, the encoder makes %d"
                         % (m2["head"]["enc_hidden"], m3["encoder"]["d_model"]))
    m = dict(m3, head=m2["head"], vocabulary=m2["vocabulary"], model_name="v3_rnnt")
    tensors = {k: v for k, v in enc.items() if not k.startswith("head.")}
    tensors.update({k: v for k, v in head.items() if k.startswith("head.")})
    write_folder(out, upstream_cfg(m, "v3_rnnt"), tensors, True, 1, None)


def folder_of(path, out):
    meta, tensors = read_safetensors(path)
    m = json.loads(meta["morok.config"])
    name = m.get("model_name") or os.path.splitext(os.path.basename(path))[0]
    write_folder(out, upstream_cfg(m, name), tensors, False, 1, None)


def main(argv):
    if len(argv) == 4 and argv[1] == "--folder":
        folder_of(argv[2], argv[3])
        return 0
    if len(argv) == 4 and argv[1] == "--compose-v3-rnnt":
        compose_v3_rnnt(argv[2], argv[3])
        return 0
    if len(argv) not in (3, 4):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for kind in KINDS:
        make_kind(argv[1], argv[2], kind)
    if len(argv) == 4:  # for meson, which wants a file to say it is done
        with open(argv[3], "w") as f:
            f.write("\n".join(sorted(KINDS)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
