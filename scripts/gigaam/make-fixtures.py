#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make the GigaAM test fixtures in tests/fixtures/ (deterministic).

usage: make-fixtures.py [OUTDIR]      (default: tests/fixtures of this repo)

1. Three utterances of synthetic speech-like audio (1.0 s, 1.7 s, 2.3 s at
   16 kHz, PCM-exact values k/32768): gigaam-audio.safetensors, audio.{0,1,2}.
2. Two tiny models with seeded random weights, each saved as an upstream-style
   .ckpt ({cfg, state_dict}) in a temporary folder and converted by convert.py:
     gigaam-v3-tiny.safetensors  conv1d subsampling, LayerNorm conv module,
                                 kernel 5, n_fft 320, center=False; stored f16
     gigaam-v2-tiny.safetensors  conv2d subsampling, BatchNorm conv module,
                                 kernel 31, n_fft 400, center=True; stored bf16
   2 layers, d_model 64, 4 heads, 33 characters + blank. Weights are rounded to
   the storage type before the reference runs, so the file holds exactly the
   weights the reference used.
3. Reference outputs of reference.py in float64 (stored f32) for each utterance
   alone and for the three zero-padded into one batch, each item computed as
   if alone (pad masking: the subsampling's masks, each row's own front-end):
   gigaam-{v3,v2}-tiny-ref.safetensors, see docs/gigaam-model.md.
4. gigaam-tiny-expected.json: a few values of every fixture file, read back by
   tests/test-safetensors.c.
"""

import json
import math
import os
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import convert  # noqa: E402
import reference  # noqa: E402
import safetensors_lite  # noqa: E402

SR = 16000
SECONDS = (1.0, 1.7, 2.3)
VOCAB = [" "] + list("абвгдежзийклмнопрстуфхцчшщъыьэюя")  # 33 + blank = 34 classes
STORAGE = {"v3": "f16", "v2": "bf16"}


# ---- audio ------------------------------------------------------------------------

def synth_utterance(seconds, seed):
    """Syllables of voiced sound (harmonics of a gliding f0 shaped by three
    formants) and noise bursts, separated by short pauses, over faint noise."""
    rng = np.random.default_rng(seed)
    n = int(round(seconds * SR))
    out = 1e-3 * rng.standard_normal(n)
    pos = int(0.05 * SR)
    while pos < n - int(0.08 * SR):
        length = min(int(rng.uniform(0.12, 0.30) * SR), n - pos)
        t = np.arange(length) / SR
        env = np.sin(np.pi * np.arange(length) / length) ** 2
        if rng.random() < 0.75:
            f0 = rng.uniform(100, 220) * (1 + rng.uniform(-0.25, 0.25) * t / t[-1])
            phase = 2 * np.pi * np.cumsum(f0) / SR
            formants = (rng.uniform(300, 800), rng.uniform(900, 2200), rng.uniform(2300, 3200))
            seg = np.zeros(length)
            for k in range(1, int(4000 / f0.max())):
                gain = sum(math.exp(-((k * f0.mean() - f) / 150.0) ** 2) for f in formants)
                seg += (0.05 + gain) / k * np.sin(k * phase)
        else:
            seg = np.diff(rng.standard_normal(length + 1)) * 0.3
        out[pos:pos + length] += 0.3 * env * seg / max(np.abs(seg).max(), 1e-9)
        pos += length + int(rng.uniform(0.03, 0.10) * SR)
    out *= 0.5 / np.abs(out).max()
    return torch.from_numpy(np.round(out * 32767) / 32768).to(torch.float32)


# ---- tiny models -------------------------------------------------------------------

def upstream_cfg(version):
    """Config as the upstream checkpoint spells it."""
    v3 = version == "v3"
    pre = {"_target_": "gigaam.preprocess.FeatureExtractor", "sample_rate": SR, "features": 64}
    if v3:
        pre.update(win_length=320, hop_length=160, n_fft=320, center=False)
    return {
        "model_class": "ctc",
        "sample_rate": SR,
        "preprocessor": pre,
        "encoder": {
            "_target_": "gigaam.encoder.ConformerEncoder",
            "feat_in": 64, "n_layers": 2, "d_model": 64, "n_heads": 4,
            "subsampling": "conv1d" if v3 else "striding",
            "subs_kernel_size": 5 if v3 else 3, "subsampling_factor": 4,
            "ff_expansion_factor": 4, "self_attention_model": "rotary",
            "pos_emb_max_len": 5000, "conv_kernel_size": 5 if v3 else 31,
            "conv_norm_type": "layer_norm" if v3 else "batch_norm", "flash_attn": False,
        },
        "head": {"_target_": "gigaam.decoder.CTCHead", "feat_in": 64, "num_classes": 34},
        "decoding": {"_target_": "gigaam.decoding.CTCGreedyDecoding", "vocabulary": VOCAB},
    }


def expected_morok_cfg(version):
    """What convert.py must make of upstream_cfg (checked after converting)."""
    v3 = version == "v3"
    return {
        "format": "morok-gigaam", "format_version": 1, "model_class": "ctc",
        "preprocessor": {
            "sample_rate": SR, "n_mels": 64, "n_fft": 320 if v3 else 400,
            "win_length": 320 if v3 else 400, "hop_length": 160, "center": not v3,
            "pad_mode": "reflect", "window": "hann_periodic", "power": 2.0,
            "mel_scale": "htk", "f_min": 0.0, "f_max": 8000.0, "mel_norm": None,
            "log_clamp": [1e-9, 1e9],
        },
        "encoder": {
            "feat_in": 64, "n_layers": 2, "d_model": 64, "n_heads": 4,
            "ff_expansion_factor": 4, "conv_kernel_size": 5 if v3 else 31,
            "conv_norm_type": "layer_norm" if v3 else "batch_norm",
            "subsampling": "conv1d" if v3 else "conv2d", "subsampling_factor": 4,
            "subs_kernel_size": 5 if v3 else 3, "subs_stride": 2, "subs_padding": 2 if v3 else 1,
            "self_attention_model": "rotary", "rope_base": 5000.0,
            "layer_norm_eps": 1e-5, "batch_norm_eps": 1e-5,
        },
        "head": {"type": "ctc", "feat_in": 64, "num_classes": 34, "blank_id": 33},
        "vocabulary": {"type": "char", "tokens": VOCAB},
    }


def random_state(model, seed, storage):
    """Seeded weights with sane activations, rounded to the storage dtype.
    Weights ~ N(0, 1/fan_in); norms' gains ~ 1 +- 0.1; BatchNorm running
    statistics far from (0, 1); the CTC head wider so that argmax varies."""
    g = torch.Generator().manual_seed(seed)

    def normal(shape, std, mean=0.0):
        return mean + std * torch.randn(shape, generator=g)

    state = {}
    for name, t in model.state_dict().items():
        if name.startswith("preprocessor."):
            state[name] = t.clone()
        elif name.endswith("num_batches_tracked"):
            state[name] = torch.tensor(12345, dtype=torch.int64)
        elif name.endswith("running_mean"):
            state[name] = normal(t.shape, 0.3)
        elif name.endswith("running_var"):
            state[name] = torch.exp(normal(t.shape, 0.4))
        elif t.dim() == 1 and ("norm" in name.rsplit(".", 2)[-2]):
            state[name] = normal(t.shape, 0.1, 1.0 if name.endswith("weight") else 0.0)
        elif name.endswith("bias"):
            state[name] = normal(t.shape, 0.05)
        else:
            fan_in = t[0].numel()
            gain = 3.0 if name.startswith("head.") else 1.0
            state[name] = normal(t.shape, gain / math.sqrt(fan_in))
    dtype = convert.CAST[storage]
    for name, t in state.items():
        if t.is_floating_point() and not name.startswith("preprocessor."):
            state[name] = t.to(dtype).to(torch.float32)
    return state


# ---- references ---------------------------------------------------------------------

def run(model, waves, trace=None):
    lengths = torch.tensor([w.numel() for w in waves])
    batch = torch.zeros(len(waves), int(lengths.max()), dtype=next(model.parameters()).dtype)
    for i, w in enumerate(waves):
        batch[i, :w.numel()] = w
    with torch.no_grad():
        return model(batch, lengths, trace)


def references(model, cfg, waves):
    tensors, texts = {}, []
    runs = [("alone.%d" % i, [w]) for i, w in enumerate(waves)] + [("batch", waves)]
    for prefix, ws in runs:
        trace = []
        out = run(model, [w.double() for w in ws], trace)
        for key in ("features", "encoded", "log_probs"):
            tensors["%s.%s" % (prefix, key)] = out[key].float()
        for key in ("feature_lengths", "encoded_lengths"):
            tensors["%s.%s" % (prefix, key)] = out[key].to(torch.int64)
        if prefix in ("alone.0", "batch"):  # intermediates, to localise a bug
            tensors["%s.pre_encode" % prefix] = trace[0].float()
            for j, x in enumerate(trace[1:]):
                tensors["%s.layers.%d" % (prefix, j)] = x.float()
        ids = [hyp["ids"] for hyp in model.decode(out)]
        for i, seq in enumerate(ids):
            name = "%s.tokens" % prefix if prefix != "batch" else "batch.tokens.%d" % i
            tensors[name] = torch.tensor(seq, dtype=torch.int64)
        if prefix != "batch":
            texts.append(reference.detokenize(ids[0], cfg["vocabulary"]))
    return tensors, texts


def report(model, waves, tensors, label):
    """How far float32 is from the float64 reference, and how close argmax calls."""
    out = run(model.float(), waves)
    model.double()
    lp64 = tensors["batch.log_probs"].double()
    worst_enc = worst_lp = 0.0
    margin = math.inf
    worst_feat = max((out["features"][i, :, :n].double()
                      - tensors["batch.features"][i, :, :n]).abs().max().item()
                     for i, n in enumerate(tensors["batch.feature_lengths"].tolist()))
    for i, n in enumerate(tensors["batch.encoded_lengths"].tolist()):
        worst_enc = max(worst_enc, (out["encoded"][i, :, :n].double()
                                    - tensors["batch.encoded"][i, :, :n]).abs().max().item())
        worst_lp = max(worst_lp, (out["log_probs"][i, :n].double()
                                  - lp64[i, :n]).abs().max().item())
        top2 = lp64[i, :n].topk(2, dim=-1).values
        margin = min(margin, (top2[:, 0] - top2[:, 1]).min().item())
    print("%s: float32 vs float64: features %.2e, encoded %.2e, log_probs %.2e; "
          "smallest argmax margin %.3f" % (label, worst_feat, worst_enc, worst_lp, margin))


# ---- expected values for the C test ---------------------------------------------------

def tensor_summary(name, t):
    flat = t.reshape(-1)
    entry = {"name": name, "dtype": safetensors_lite.NAMES[t.dtype], "shape": list(t.shape)}
    if t.is_floating_point():
        values = flat.to(torch.float64)
        entry["first"] = [float(v) for v in values[:8]]
        entry["sum"] = math.fsum(values.tolist())
        entry["abs_sum"] = math.fsum(values.abs().tolist())
    else:
        entry["first"] = [int(v) for v in flat[:8]]
        entry["sum"] = int(flat.sum())
    return entry


def expected_entry(path, names):
    tensors, meta = safetensors_lite.read(path)
    plain = {k: v for k, v in meta.items() if k != "morok.config" and k != "morok.reference"}
    return {
        "n_tensors": len(tensors),
        "metadata": plain,
        "tensors": [tensor_summary(n, tensors[n]) for n in names],
    }


MODEL_CHECKS = [
    "encoder.pre_encode.conv.0.weight", "encoder.pre_encode.conv.2.bias",
    "encoder.layers.0.self_attn.linear_q.weight", "encoder.layers.1.conv.depthwise_conv.weight",
    "encoder.layers.1.conv.batch_norm.bias", "encoder.layers.1.norm_out.weight",
    "head.decoder_layers.0.weight", "preprocessor.featurizer.0.mel_scale.fb",
    "preprocessor.featurizer.0.spectrogram.window",
]
MODEL_EXTRA_CHECKS = {
    "v3": [],
    "v2": ["encoder.pre_encode.out.weight", "encoder.layers.0.conv.batch_norm.running_var",
           "encoder.layers.0.conv.batch_norm.num_batches_tracked"],
}
REF_CHECKS = [
    "alone.0.features", "alone.1.encoded", "alone.2.log_probs", "alone.2.tokens",
    "batch.feature_lengths", "batch.encoded_lengths", "batch.encoded", "batch.tokens.1",
]


def main(argv):
    outdir = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "..", "tests", "fixtures")
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(2)
    waves = [synth_utterance(s, 100 + i) for i, s in enumerate(SECONDS)]
    audio_path = os.path.join(outdir, "gigaam-audio.safetensors")
    safetensors_lite.write(audio_path, {"audio.%d" % i: w for i, w in enumerate(waves)},
                           {"sample_rate": str(SR), "morok.note": "PCM values k/32768"})
    expected = {"gigaam-audio.safetensors": expected_entry(audio_path, ["audio.1"])}

    for seed, version in enumerate(("v3", "v2"), start=1):
        name = "gigaam-%s-tiny" % version
        want = expected_morok_cfg(version)
        state = random_state(reference.GigaAM(want), seed, STORAGE[version])
        model_path = os.path.join(outdir, name + ".safetensors")
        with tempfile.TemporaryDirectory() as tmp:
            ckpt = os.path.join(tmp, "%s_ctc.ckpt" % version)
            torch.save({"cfg": upstream_cfg(version), "state_dict": state}, ckpt)
            got = convert.convert(ckpt, model_path, STORAGE[version])
        if got != want:
            raise SystemExit("%s: convert.py made config %s, expected %s" % (name, got, want))
        # batch items as if alone: the subsampling's masks (upstream PR #75)
        # and each row's own front-end (v2's centred frames reflect at the
        # row's end, not into the batch's zero padding)
        model, cfg = reference.load_model(model_path, torch.float64)
        tensors, texts = references(model, cfg, waves)
        report(model, [w.double() for w in waves], tensors, name)
        info = {
            "model": os.path.basename(model_path), "audio": os.path.basename(audio_path),
            "compute": "float64", "texts": texts,
            "batch": "audio.0..2 zero-padded to the longest, one batch",
        }
        ref_path = os.path.join(outdir, name + "-ref.safetensors")
        safetensors_lite.write(ref_path, tensors,
                               {"morok.reference": json.dumps(info, ensure_ascii=False)})
        expected[os.path.basename(model_path)] = expected_entry(
            model_path, MODEL_CHECKS + MODEL_EXTRA_CHECKS[version])
        expected[os.path.basename(ref_path)] = expected_entry(ref_path, REF_CHECKS)
        print("%s: %s" % (name, texts))

    with open(os.path.join(outdir, "gigaam-tiny-expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
        f.write("\n")
    for fn in sorted(os.listdir(outdir)):
        if fn.startswith("gigaam-"):
            print("%8d  %s" % (os.path.getsize(os.path.join(outdir, fn)), fn))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
