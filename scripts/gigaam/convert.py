#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Convert an upstream GigaAM ASR checkpoint into one Morok safetensors file.

usage: convert.py [--dtype f32|f16|bf16] [--tokenizer SP.model] [--config C.json]
                  INPUT OUTPUT.safetensors

Every upstream ASR model converts: v2_ctc, v2_rnnt, v3_ctc, v3_rnnt, v3_e2e_ctc,
v3_e2e_rnnt (CTC or RNN-T head; character or SentencePiece vocabulary).
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
docs/gigaam-model.md), vocabulary included: a config that names a SentencePiece
model (decoding.model_path) needs that file, from --tokenizer or found beside
INPUT (`tokenizer.model` in a folder; the named file or `<stem>_tokenizer.model`
next to a checkpoint).
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
import sentencepiece_lite  # noqa: E402

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


# ---- vocabulary ----------------------------------------------------------------

def _char_vocabulary(cfg):
    dec = cfg.get("decoding") or {}
    head = cfg.get("head") or {}
    return (dec.get("vocabulary") or cfg.get("vocabulary") or cfg.get("labels")
            or head.get("vocabulary") or head.get("labels"))


def named_tokenizer(cfg):
    """The tokenizer file the config names (decoding.model_path), or None."""
    return ((cfg or {}).get("decoding") or {}).get("model_path")


def make_vocabulary(cfg, tokenizer, num_classes):
    named = named_tokenizer(cfg)
    chars = _char_vocabulary(cfg)
    if tokenizer:
        if chars and not named:
            raise ConvertError("the config has a character vocabulary (decoding.vocabulary); "
                               "--tokenizer is for models whose config names a SentencePiece "
                               "model (decoding.model_path)")
        try:
            sp = sentencepiece_lite.read(tokenizer)
        except sentencepiece_lite.ModelError as e:
            raise ConvertError(str(e)) from e
        vocab = {"type": "sentencepiece", "tokens": sp["pieces"], "piece_types": sp["types"]}
        vocab.update({k: sp[k] for k in sentencepiece_lite.DEFAULTS})
    elif named:
        raise ConvertError("the config names the tokenizer %r (decoding.model_path), which "
                           "was not given: pass --tokenizer FILE (upstream publishes it as "
                           "<model>_tokenizer.model)" % os.path.basename(str(named)))
    elif chars:
        vocab = {"type": "char", "tokens": [str(t) for t in chars]}
    else:
        raise ConvertError("no vocabulary in the config (decoding.vocabulary or "
                           "decoding.model_path); pass --tokenizer for SentencePiece models")
    if len(vocab["tokens"]) + 1 != num_classes:
        raise ConvertError("vocabulary has %d tokens, the head %d classes (expected "
                           "tokens + blank)" % (len(vocab["tokens"]), num_classes))
    return vocab


def find_tokenizer(src, cfg):
    """A tokenizer beside the input that the config asks for: in a Hugging Face
    folder `tokenizer.model`, else the file named by decoding.model_path or
    `<checkpoint stem>_tokenizer.model` next to the checkpoint."""
    if _char_vocabulary(cfg or {}) and not named_tokenizer(cfg):
        return None
    folder = src if os.path.isdir(src) else os.path.dirname(os.path.abspath(src))
    names = ["tokenizer.model"] if os.path.isdir(src) else []
    if named_tokenizer(cfg):
        names.append(os.path.basename(str(named_tokenizer(cfg))))
    if not os.path.isdir(src):
        names.append(os.path.splitext(os.path.basename(src))[0] + "_tokenizer.model")
    for name in names:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None


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

    kind = model_kind(cfg, state)
    head_cfg = ctc_head(head, state) if kind == "ctc" else rnnt_head(cfg, state, d_model)
    out = {
        "format": "morok-gigaam",
        "format_version": FORMAT_VERSION,
        "model_class": kind,
        "preprocessor": preprocessor,
        "encoder": encoder,
        "head": head_cfg,
        "vocabulary": make_vocabulary(cfg, tokenizer, head_cfg["num_classes"]),
    }
    if cfg.get("model_name"):
        out["model_name"] = str(cfg["model_name"])
    return out


# ---- heads -----------------------------------------------------------------------

# upstream's head and decoding classes (cfg head._target_, decoding._target_)
HEAD_CLASSES = {"gigaam.decoder.CTCHead": "ctc", "gigaam.decoder.RNNTHead": "rnnt"}
DECODING_CLASSES = {"gigaam.decoding.CTCGreedyDecoding": "ctc",
                    "gigaam.decoding.RNNTGreedyDecoding": "rnnt"}
HEAD_PROBE = {"ctc": "head.decoder_layers.0.weight", "rnnt": "head.joint.joint_net.1.weight"}


def model_kind(cfg, state):
    """'ctc' or 'rnnt', from the config's head class, model_class and decoding
    class (whichever are present must agree) or else from the head's tensors."""
    said = {}
    target = (cfg.get("head") or {}).get("_target_")
    if target is not None:
        if target not in HEAD_CLASSES:
            raise ConvertError("unsupported head class %r (Morok converts %s)"
                               % (target, " and ".join(sorted(HEAD_CLASSES))))
        said["head._target_"] = HEAD_CLASSES[target]
    if cfg.get("model_class") is not None:
        if cfg["model_class"] not in ("ctc", "rnnt"):
            raise ConvertError("unsupported model_class %r (Morok converts ASR models: "
                               "ctc, rnnt)" % cfg["model_class"])
        said["model_class"] = cfg["model_class"]
    target = (cfg.get("decoding") or {}).get("_target_")
    if target is not None:
        if target not in DECODING_CLASSES:
            raise ConvertError("unsupported decoding class %r" % target)
        said["decoding._target_"] = DECODING_CLASSES[target]
    if len(set(said.values())) > 1:
        raise ConvertError("the config disagrees on the model class: %s"
                           % ", ".join("%s says %s" % kv for kv in sorted(said.items())))
    found = [k for k, name in sorted(HEAD_PROBE.items()) if name in state]
    kind = next(iter(said.values()), found[0] if len(found) == 1 else None)
    if kind is None:
        raise ConvertError("no ASR head: neither %s nor %s (an SSL or emotion model?)"
                           % (HEAD_PROBE["ctc"], HEAD_PROBE["rnnt"]))
    if HEAD_PROBE[kind] not in state:
        raise ConvertError("a %s model without %s" % (kind, HEAD_PROBE[kind]))
    return kind


def _shape(state, name, want):
    """The tensor `name`, checked to be of shape `want` (None: any size)."""
    t = state.get(name)
    if t is None:
        raise ConvertError("missing tensor '%s'" % name)
    if t.dim() != len(want) or any(w is not None and w != n for w, n in zip(want, t.shape)):
        raise ConvertError("tensor '%s' is %s, expected %s"
                           % (name, list(t.shape), ["*" if w is None else w for w in want]))
    return t


def _agree(name, values):
    """The one value of `name` that config and weights give (Nones ignored)."""
    known = {int(v) for v in values if v is not None}
    if len(known) != 1:
        raise ConvertError("%s: %s" % (name, "config and weights disagree (%s)"
                                       % sorted(known) if known else "unknown"))
    return known.pop()


def ctc_head(head, state):
    hw = _shape(state, HEAD_PROBE["ctc"], [None, None, 1])
    num_classes = _pick("num_classes", head.get("num_classes"), hw.shape[0])
    return {"type": "ctc", "feat_in": int(hw.shape[1]),
            "num_classes": num_classes, "blank_id": num_classes - 1}


def rnnt_head(cfg, state, d_model):
    """Upstream RNNTHead: decoder (embed, lstm) and joint (enc, pred, joint_net)."""
    head = cfg.get("head") or {}
    dec, joint = head.get("decoder") or {}, head.get("joint") or {}
    emb = _shape(state, "head.decoder.embed.weight", [None, None])
    out = _shape(state, "head.joint.joint_net.1.weight", [None, None])
    pred = _shape(state, "head.joint.pred.weight", [None, None])
    classes = _agree("num_classes", [dec.get("num_classes"), joint.get("num_classes"),
                                     emb.shape[0], out.shape[0]])
    hidden = _agree("pred_hidden", [dec.get("pred_hidden"), joint.get("pred_hidden"),
                                    emb.shape[1], pred.shape[1]])
    joint_hidden = _agree("joint_hidden", [joint.get("joint_hidden"), pred.shape[0],
                                           out.shape[1]])
    enc_hidden = _agree("enc_hidden", [joint.get("enc_hidden"), d_model])
    layers = 0
    while "head.decoder.lstm.weight_ih_l%d" % layers in state:
        layers += 1
    layers = _agree("pred_rnn_layers", [dec.get("pred_rnn_layers"), layers or None])
    for k in range(layers):
        for kind in ("ih", "hh"):
            _shape(state, "head.decoder.lstm.weight_%s_l%d" % (kind, k), [4 * hidden, hidden])
            _shape(state, "head.decoder.lstm.bias_%s_l%d" % (kind, k), [4 * hidden])
    if "head.decoder.lstm.weight_ih_l%d" % layers in state:
        raise ConvertError("the weights have more LSTM layers than pred_rnn_layers = %d" % layers)
    _shape(state, "head.joint.pred.bias", [joint_hidden])
    _shape(state, "head.joint.enc.weight", [joint_hidden, enc_hidden])
    _shape(state, "head.joint.enc.bias", [joint_hidden])
    _shape(state, "head.joint.joint_net.1.bias", [classes])
    max_symbols = int((cfg.get("decoding") or {}).get("max_symbols_per_step", 10))
    if max_symbols < 1:
        raise ConvertError("decoding.max_symbols_per_step %d must be at least 1" % max_symbols)
    return {"type": "rnnt", "num_classes": classes, "blank_id": classes - 1,
            "enc_hidden": enc_hidden, "pred_hidden": hidden, "pred_rnn_layers": layers,
            "joint_hidden": joint_hidden, "max_symbols_per_step": max_symbols}


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
    if tokenizer is None:
        tokenizer = find_tokenizer(src, cfg)
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
    ap.add_argument("--tokenizer", help="the SentencePiece .model the config names "
                    "(decoding.model_path), for the e2e models")
    ap.add_argument("--config", help="JSON file with the upstream config, if INPUT has none")
    args = ap.parse_args(argv)
    try:
        mcfg = convert(args.input, args.output, args.dtype, args.tokenizer, args.config)
    except (ConvertError, OSError, KeyError, ValueError) as e:
        print("convert.py: %s" % e, file=sys.stderr)
        return 1
    enc = mcfg["encoder"]
    print("%s: %s, %d layers, d_model %d, %s subsampling, %d classes (%s), %s"
          % (args.output, mcfg["model_class"], enc["n_layers"], enc["d_model"],
             enc["subsampling"], mcfg["head"]["num_classes"], mcfg["vocabulary"]["type"],
             args.dtype))
    return 0


if __name__ == "__main__":
    sys.exit(main())
