#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Convert an upstream GigaAM CTC checkpoint into one Morok safetensors file.

usage: convert.py [--dtype f32|f16|bf16] [--tokenizer SP.model] [--config C.json]
                  INPUT OUTPUT.safetensors

INPUT is either
  * an official checkpoint (`v3_ctc.ckpt`): a torch-saved dict with `cfg` (the
    model config, a plain dict or a pickled OmegaConf DictConfig; omegaconf
    need not be installed) and `state_dict`, or
  * a Hugging Face folder: `config.json` (the upstream config, under "cfg" or
    at the top level) plus `pytorch_model.bin`, `model.safetensors` or a
    sharded `*.index.json`; a common key prefix such as `model.` is dropped.

The output keeps the upstream state-dict names and tensors, floating tensors
cast to --dtype, integer tensors unchanged. The front-end's Hann window and mel
filterbank (`preprocessor.featurizer.0.{spectrogram.window,mel_scale.fb}`)
are always present (computed from the config when the checkpoint lacks them)
and always f32.
`__metadata__["morok.config"]` holds the normalised model config as JSON (see
docs/gigaam-model.md), vocabulary included.
"""

import argparse
import contextlib
import importlib.abc
import importlib.util
import json
import os
import re
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_lite  # noqa: E402

FORMAT_VERSION = 1
CAST = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
FLOATS = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


class ConvertError(Exception):
    pass


# ---- reading an OmegaConf pickle without omegaconf ----------------------------
#
# torch.load unpickles with the standard pickle module (this torch ignores a
# pickle_module argument), so when omegaconf is not installed an import hook
# serves stand-in `omegaconf.*` modules whose every class is a _Stub keeping
# the pickled state; _plain () then turns DictConfig/ListConfig/nodes into
# dicts, lists and values.

class _Stub:
    """Stands in for any omegaconf class; keeps the pickled state."""

    def __init__(self, *args, **kwargs):
        self._args = args

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slots)
            state = {**(state[0] or {}), **(state[1] or {})}
        self.__dict__.update(state if isinstance(state, dict) else {"_val": state})


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (_Stub,), {"__module__": self.__name__})
        setattr(self, name, cls)
        return cls


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] != "omegaconf":
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return _StubModule(spec.name)

    def exec_module(self, module):
        pass


@contextlib.contextmanager
def _omegaconf_stubs():
    """Stand-in omegaconf modules while unpickling, unless the real one exists."""
    if importlib.util.find_spec("omegaconf") is not None:
        yield
        return
    finder = _StubFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [m for m in sys.modules if m.split(".")[0] == "omegaconf"]:
            del sys.modules[name]


def _plain(obj):
    """DictConfig/ListConfig/ValueNode (real or stubs), containers -> plain Python."""
    if isinstance(obj, _Stub):
        d = obj.__dict__
        if "_content" in d:
            return _plain(d["_content"])
        if "_val" in d:
            return _plain(d["_val"])
        return None
    if type(obj).__module__.split(".")[0] == "omegaconf":
        from omegaconf import OmegaConf
        return OmegaConf.to_container(obj, resolve=True)
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _torch_load(path):
    try:
        with _omegaconf_stubs():
            return torch.load(path, map_location="cpu")
    except Exception as e:  # torch raises many types here
        raise ConvertError("%s: cannot load: %s" % (path, e)) from e


# ---- upstream layouts ---------------------------------------------------------

def _strip_prefix(state):
    """Drop a wrapper prefix ('model.', 'module.') in front of 'encoder.'."""
    probe = [k for k in state if re.search(r"(^|\.)encoder\.layers\.0\.", k)]
    if not probe:
        raise ConvertError("no 'encoder.layers.0.*' tensors: not a GigaAM state dict")
    prefix = probe[0][: probe[0].index("encoder.layers.0.")]
    if not prefix:
        return state
    return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}


def load_ckpt(path):
    obj = _torch_load(path)
    if not isinstance(obj, dict):
        raise ConvertError("%s: expected a dict with 'cfg' and 'state_dict'" % path)
    cfg = _plain(obj.get("cfg"))
    state = obj.get("state_dict", obj)
    if not isinstance(state, dict):
        raise ConvertError("%s: 'state_dict' is not a dict" % path)
    state = {k: v for k, v in state.items() if torch.is_tensor(v)}
    return cfg, _strip_prefix(state)


def load_hf_folder(path):
    cfg_path = os.path.join(path, "config.json")
    if not os.path.exists(cfg_path):
        raise ConvertError("%s: no config.json" % path)
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg = cfg.get("cfg", cfg)
    files = []
    for index in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        if os.path.exists(os.path.join(path, index)):
            with open(os.path.join(path, index), encoding="utf-8") as f:
                files = sorted(set(json.load(f)["weight_map"].values()))
            break
    else:
        for single in ("model.safetensors", "pytorch_model.bin"):
            if os.path.exists(os.path.join(path, single)):
                files = [single]
                break
    if not files:
        raise ConvertError("%s: no model.safetensors or pytorch_model.bin" % path)
    state = {}
    for name in files:
        full = os.path.join(path, name)
        if name.endswith(".safetensors"):
            state.update(safetensors_lite.read(full)[0])
        else:
            part = _torch_load(full)
            state.update(part.get("state_dict", part) if isinstance(part, dict) else {})
    state = {k: v for k, v in state.items() if torch.is_tensor(v)}
    return cfg, _strip_prefix(state)


def load_upstream(path):
    """(upstream cfg dict or None, state dict) from a .ckpt file or HF folder."""
    if os.path.isdir(path):
        return load_hf_folder(path)
    return load_ckpt(path)


# ---- SentencePiece pieces without sentencepiece -----------------------------

def _varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf):
            raise ConvertError("truncated protobuf varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _fields(buf):
    """Yield (field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ConvertError("unsupported protobuf wire type %d" % wire)
        yield field, wire, value


def sentencepiece_pieces(path):
    """Pieces of a SentencePiece ModelProto (field 1: repeated {1: piece})."""
    with open(path, "rb") as f:
        buf = f.read()
    pieces = []
    for field, wire, value in _fields(buf):
        if field == 1 and wire == 2:
            piece = [v for fn, w, v in _fields(value) if fn == 1 and w == 2]
            pieces.append(bytes(piece[0]).decode("utf-8") if piece else "")
    if not pieces:
        raise ConvertError("%s: no SentencePiece pieces found" % path)
    return pieces


# ---- config normalisation -----------------------------------------------------

def _vocabulary(cfg, tokenizer, num_classes):
    if tokenizer:
        tokens, kind = sentencepiece_pieces(tokenizer), "sentencepiece"
    else:
        dec = cfg.get("decoding") or {}
        head = cfg.get("head") or {}
        tokens = (dec.get("vocabulary") or cfg.get("vocabulary") or cfg.get("labels")
                  or head.get("vocabulary") or head.get("labels"))
        if not tokens:
            raise ConvertError("no vocabulary in the config (decoding.vocabulary or "
                               "labels); pass --tokenizer for SentencePiece models")
        tokens, kind = [str(t) for t in tokens], "char"
    if len(tokens) + 1 != num_classes:
        raise ConvertError("vocabulary has %d tokens, the head %d classes (expected "
                           "tokens + blank)" % (len(tokens), num_classes))
    return {"type": kind, "tokens": tokens}


def _pick(name, from_cfg, from_weights):
    if from_cfg is not None and from_weights is not None and int(from_cfg) != from_weights:
        raise ConvertError("config says %s = %s, the weights %s" % (name, from_cfg, from_weights))
    return int(from_weights if from_weights is not None else from_cfg)


def morok_config(cfg, state, tokenizer=None):
    """The normalised config stored as morok.config (docs/gigaam-model.md)."""
    cfg = cfg or {}
    pre = cfg.get("preprocessor") or {}
    enc = cfg.get("encoder") or {}
    head = cfg.get("head") or {}

    sr = int(pre.get("sample_rate", cfg.get("sample_rate", 16000)))
    win = int(pre.get("win_length", sr // 40))
    preprocessor = {
        "sample_rate": sr,
        "n_mels": int(pre.get("features", pre.get("n_mels", 64))),
        "n_fft": int(pre.get("n_fft", win)),
        "win_length": win,
        "hop_length": int(pre.get("hop_length", sr // 100)),
        "center": bool(pre.get("center", True)),
        "pad_mode": "reflect",
        "window": "hann_periodic",
        "power": 2.0,
        "mel_scale": "htk",
        "f_min": 0.0,
        "f_max": sr / 2,
        "mel_norm": None,
        "log_clamp": [1e-9, 1e9],
    }

    n_layers = 0
    while "encoder.layers.%d.norm_out.weight" % n_layers in state:
        n_layers += 1
    d_model = state["encoder.layers.0.norm_out.weight"].shape[0]
    dw = state.get("encoder.layers.0.conv.depthwise_conv.weight")
    pre_w = state.get("encoder.pre_encode.conv.0.weight")
    if dw is None or pre_w is None:
        raise ConvertError("missing encoder.pre_encode.conv.0.weight or "
                           "encoder.layers.0.conv.depthwise_conv.weight")
    subsampling = "conv1d" if pre_w.dim() == 3 else "conv2d"
    named = {None: subsampling, "conv1d": "conv1d", "conv2d": "conv2d", "striding": "conv2d"}
    if enc.get("subsampling") not in named:
        raise ConvertError("unsupported subsampling %r" % enc.get("subsampling"))
    if named[enc.get("subsampling")] != subsampling:
        raise ConvertError("config says %s subsampling, encoder.pre_encode.conv.0.weight "
                           "is %d-D" % (enc.get("subsampling"), pre_w.dim()))
    if enc.get("self_attention_model", "rotary") != "rotary":
        raise ConvertError("unsupported self_attention_model %r (only rotary)"
                           % enc.get("self_attention_model"))
    n_heads = int(enc.get("n_heads", 16))
    if d_model % n_heads or (d_model // n_heads) % 2:
        raise ConvertError("d_model %d does not split into %d heads of even size"
                           % (d_model, n_heads))
    has_bn = "encoder.layers.0.conv.batch_norm.running_mean" in state
    norm = enc.get("conv_norm_type", "batch_norm" if has_bn else "layer_norm")
    if norm not in ("batch_norm", "layer_norm") or (norm == "batch_norm") != has_bn:
        raise ConvertError("conv_norm_type %r does not match the weights" % norm)
    subs_kernel = pre_w.shape[-1]
    encoder = {
        "feat_in": _pick("feat_in", enc.get("feat_in"),
                         pre_w.shape[1] if subsampling == "conv1d" else None),
        "n_layers": _pick("n_layers", enc.get("n_layers"), n_layers),
        "d_model": _pick("d_model", enc.get("d_model"), d_model),
        "n_heads": n_heads,
        "ff_expansion_factor": int(enc.get("ff_expansion_factor", 4)),
        "conv_kernel_size": _pick("conv_kernel_size", enc.get("conv_kernel_size"),
                                  dw.shape[-1]),
        "conv_norm_type": norm,
        "subsampling": subsampling,
        "subsampling_factor": int(enc.get("subsampling_factor", 4)),
        "subs_kernel_size": _pick("subs_kernel_size", enc.get("subs_kernel_size"),
                                  subs_kernel),
        "subs_stride": 2,
        "subs_padding": (subs_kernel - 1) // 2,
        "self_attention_model": "rotary",
        "rope_base": float(enc.get("pos_emb_max_len", 5000)),
        "layer_norm_eps": 1e-5,
        "batch_norm_eps": 1e-5,
    }
    if encoder["subsampling_factor"] != 4:
        raise ConvertError("subsampling_factor %d unsupported (only 4)"
                           % encoder["subsampling_factor"])
    if encoder["feat_in"] != preprocessor["n_mels"]:
        raise ConvertError("encoder feat_in %d != %d mel bands"
                           % (encoder["feat_in"], preprocessor["n_mels"]))

    hw = state.get("head.decoder_layers.0.weight")
    if hw is None:
        raise ConvertError("no head.decoder_layers.0.weight: only CTC models are supported")
    num_classes = _pick("num_classes", head.get("num_classes"), hw.shape[0])
    vocab = _vocabulary(cfg, tokenizer, num_classes)
    return {
        "format": "morok-gigaam",
        "format_version": FORMAT_VERSION,
        "model_class": "ctc",
        "preprocessor": preprocessor,
        "encoder": encoder,
        "head": {"type": "ctc", "feat_in": int(hw.shape[1]),
                 "num_classes": num_classes, "blank_id": num_classes - 1},
        "vocabulary": vocab,
    }


# ---- front-end buffers ---------------------------------------------------------

WINDOW = "preprocessor.featurizer.0.spectrogram.window"
MEL_FB = "preprocessor.featurizer.0.mel_scale.fb"


def front_end_buffers(mcfg, state):
    """Make sure the state holds the Hann window [win_length] and the mel
    filterbank [n_fft/2+1, n_mels] under their Sequential names: renamed from
    `preprocessor.featurizer.{spectrogram,mel_scale}.*` or computed from the
    config (torchaudio, as the upstream front-end does)."""
    import torchaudio

    pre = mcfg["preprocessor"]
    state = dict(state)
    for name in (WINDOW, MEL_FB):
        flat = name.replace(".0.", ".", 1)
        if name not in state and flat in state:
            state[name] = state.pop(flat)
    if WINDOW not in state:
        state[WINDOW] = torch.hann_window(pre["win_length"])  # periodic, f32
    if MEL_FB not in state:
        state[MEL_FB] = torchaudio.functional.melscale_fbanks(
            pre["n_fft"] // 2 + 1, pre["f_min"], pre["f_max"], pre["n_mels"],
            pre["sample_rate"], norm=pre["mel_norm"], mel_scale=pre["mel_scale"])
    want = {WINDOW: [pre["win_length"]], MEL_FB: [pre["n_fft"] // 2 + 1, pre["n_mels"]]}
    for name, shape in want.items():
        if list(state[name].shape) != shape:
            raise ConvertError("tensor '%s' is %s, expected %s"
                               % (name, list(state[name].shape), shape))
    # the front-end first, as in upstream state dicts
    return {**{WINDOW: state.pop(WINDOW), MEL_FB: state.pop(MEL_FB)}, **state}


# ---- writing --------------------------------------------------------------------

def cast_state(state, dtype):
    out = {}
    for name, t in state.items():
        t = t.detach().contiguous()
        if t.dtype in FLOATS:
            keep_f32 = name.startswith("preprocessor.")
            t = t.to(torch.float32 if keep_f32 else dtype)
        out[name] = t
    return out


def convert(src, dst, dtype="f32", tokenizer=None, config=None):
    cfg, state = load_upstream(src)
    if config:
        with open(config, encoding="utf-8") as f:
            cfg = json.load(f)
        cfg = cfg.get("cfg", cfg)
    if cfg is None:
        raise ConvertError("%s: no model config; pass --config" % src)
    if tokenizer is None and os.path.isdir(src) and \
            os.path.exists(os.path.join(src, "tokenizer.model")):
        tokenizer = os.path.join(src, "tokenizer.model")
    mcfg = morok_config(cfg, state, tokenizer)
    state = front_end_buffers(mcfg, state)
    metadata = {
        "format": "pt",
        "morok.config": json.dumps(mcfg, ensure_ascii=False, sort_keys=True),
        "morok.dtype": dtype,
        "morok.source": os.path.basename(os.path.normpath(src)),
    }
    safetensors_lite.write(dst, cast_state(state, CAST[dtype]), metadata)
    return mcfg


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", help="upstream .ckpt file or Hugging Face folder")
    ap.add_argument("output", help="output .safetensors file")
    ap.add_argument("--dtype", choices=sorted(CAST), default="f32",
                    help="storage type of floating tensors (default f32)")
    ap.add_argument("--tokenizer", help="SentencePiece .model for BPE vocabularies")
    ap.add_argument("--config", help="JSON file with the upstream config, if INPUT has none")
    args = ap.parse_args(argv)
    try:
        mcfg = convert(args.input, args.output, args.dtype, args.tokenizer, args.config)
    except (ConvertError, OSError, KeyError, ValueError) as e:
        print("convert.py: %s" % e, file=sys.stderr)
        return 1
    enc = mcfg["encoder"]
    print("%s: %d layers, d_model %d, %s subsampling, %d classes, %s"
          % (args.output, enc["n_layers"], enc["d_model"], enc["subsampling"],
             mcfg["head"]["num_classes"], args.dtype))
    return 0


if __name__ == "__main__":
    sys.exit(main())
