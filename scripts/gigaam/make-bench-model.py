#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make the full-size GigaAM v3 benchmark model and its ONNX twin (deterministic).

usage: make-bench-model.py [OUTDIR]      (default: .cache/gigaam-bench of this repo)

Writes, for bench/compare-gigaam.sh (nothing of it is committed; ~1.8 GB):

  gigaam-v3-full.safetensors  the v3 CTC config at full size (16 layers, d_model
                              768, 16 heads, ff 3072, conv kernel 5) with seeded
                              random weights, N(0, 1/fan_in) as make-fixtures.py
                              makes them, saved as an upstream-style .ckpt and
                              converted by convert.py (f32)
  gigaam-v3-full.onnx         the reference encoder of the same weights exported
                              with torch.onnx.export (opset 17): inputs wav f32
                              [batch, samples], lengths i64 [batch]; output
                              encoded f32 [batch, 768, frames], dynamic batch and
                              time axes. Waveform to encoder output, as Morok's
                              GigaAmEncoderJit: the log-mel front-end is exported
                              as a strided Conv1d with the windowed DFT basis,
                              |.|^2 and the mel matmul (torch.stft with complex
                              output does not export), checked below against
                              torchaudio's front-end
  gigaam-bench-inputs.safetensors
                              audio.bench  30 s of synthetic speech-like audio at
                                           16 kHz (its first 10 s are the 10 s case)
                              audio.check  2 s of it, another seed
                              check.encoded  reference.py's encoder output of
                                           audio.check in float64 (stored f32),
                                           [1, 768, 50]

and prints how far the PyTorch f32 model, the exported front-end and the
exported module (in PyTorch) are from the float64 reference. The ORT and Morok
sides compare against check.encoded themselves (bench/gigaam-ort.mjs,
bench/bench-gigaam.c), at every run of bench/compare-gigaam.sh.
"""

import copy
import importlib.util
import math
import os
import sys
import tempfile
import time

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import convert  # noqa: E402
import reference  # noqa: E402
import safetensors_lite  # noqa: E402

_spec = importlib.util.spec_from_file_location("make_fixtures",
                                               os.path.join(HERE, "make-fixtures.py"))
fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixtures)

SR = 16000
SEED = 3
FULL = {"n_layers": 16, "d_model": 768, "n_heads": 16, "ff_expansion_factor": 4,
        "conv_kernel_size": 5}


def upstream_cfg():
    """make-fixtures.py's upstream v3 config at full size."""
    cfg = copy.deepcopy(fixtures.upstream_cfg("v3"))
    cfg["encoder"].update(FULL)
    cfg["head"]["feat_in"] = FULL["d_model"]
    return cfg


# ---- an exportable copy of the reference front-end -----------------------------------

class DftFrontEnd(nn.Module):
    """torchaudio's MelSpectrogram for uncentred frames (v3) as ops ONNX has:
    frames times the windowed DFT basis as one strided Conv1d, re^2 + im^2, the
    mel filterbank as a matmul, then log(clamp), as FeatureExtractor does."""

    def __init__(self, pcfg, window, fb):
        super().__init__()
        n_fft = pcfg["n_fft"]
        if pcfg["center"] or pcfg["win_length"] != n_fft or pcfg["power"] != 2.0:
            raise SystemExit("DftFrontEnd: only the v3 front-end (uncentred, power 2)")
        self.hop, self.bins, self.clamp = pcfg["hop_length"], n_fft // 2 + 1, pcfg["log_clamp"]
        n = torch.arange(n_fft, dtype=torch.float64)
        q = torch.arange(self.bins, dtype=torch.float64)[:, None]
        angle = 2 * math.pi * torch.remainder(q * n, n_fft) / n_fft
        w = window.to(torch.float64)
        basis = torch.cat([torch.cos(angle) * w, -torch.sin(angle) * w])  # [2 bins, n_fft]
        self.register_buffer("basis", basis[:, None, :].to(torch.float32))
        self.register_buffer("fb_t", fb.t().contiguous().to(torch.float32))  # [F, bins]

    def forward(self, wave):  # [B, L] -> [B, F, T]
        spec = nn.functional.conv1d(wave[:, None, :], self.basis, stride=self.hop)
        re, im = spec[:, :self.bins], spec[:, self.bins:]
        mel = torch.matmul(self.fb_t, re * re + im * im)
        return torch.log(mel.clamp(self.clamp[0], self.clamp[1]))


class WaveEncoder(nn.Module):
    """wav [B, L], lengths [B] -> encoder output [B, d, T'] (no head)."""

    def __init__(self, model):
        super().__init__()
        pre = model.preprocessor
        mel = pre.featurizer[0]
        self.preprocessor = pre
        self.frontend = DftFrontEnd(pre.cfg, mel.spectrogram.window, mel.mel_scale.fb)
        self.encoder = model.encoder
        self.masked = model.pad_masking

    def forward(self, wav, lengths):
        features = self.frontend(wav)
        encoded, _ = self.encoder(features, self.preprocessor.out_length(lengths), self.masked)
        return encoded


def max_abs(a, b):
    return (a.double() - b.double()).abs().max().item()


def main(argv):
    outdir = os.path.normpath(argv[1] if len(argv) > 1
                              else os.path.join(HERE, "..", "..", ".cache", "gigaam-bench"))
    os.makedirs(outdir, exist_ok=True)
    model_path = os.path.join(outdir, "gigaam-v3-full.safetensors")
    onnx_path = os.path.join(outdir, "gigaam-v3-full.onnx")
    inputs_path = os.path.join(outdir, "gigaam-bench-inputs.safetensors")
    torch.set_num_threads(2)
    t0 = time.time()

    # 1. seeded weights, upstream-style checkpoint, convert.py
    ucfg = upstream_cfg()
    skeleton = reference.GigaAM(_morok_cfg_for_skeleton(ucfg))
    state = fixtures.random_state(skeleton, SEED, "f32")
    del skeleton
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "v3_ctc.ckpt")
        torch.save({"cfg": ucfg, "state_dict": state}, ckpt)
        del state
        mcfg = convert.convert(ckpt, model_path, "f32")
    enc = mcfg["encoder"]
    n_params = sum(t.numel() for t in safetensors_lite.read(model_path)[0].values())
    print("%s: %d layers, d_model %d, %d heads, ff %d, kernel %d; %.1f M parameters, %.0f MB (%.0f s)"
          % (model_path, enc["n_layers"], enc["d_model"], enc["n_heads"],
             enc["d_model"] * enc["ff_expansion_factor"], enc["conv_kernel_size"], n_params / 1e6,
             os.path.getsize(model_path) / 1e6, time.time() - t0))

    # 2. audio: 30 s to time, 2 s to check, and the float64 reference of the latter
    bench = fixtures.synth_utterance(30.0, 300)
    check = fixtures.synth_utterance(2.0, 301)
    model, cfg = reference.load_model(model_path, torch.float32)
    lengths = torch.tensor([check.numel()])
    with torch.no_grad():
        out32 = model(check[None], lengths)
        model.double()
        out64 = model(check[None].double(), lengths)
        model.float()
    safetensors_lite.write(inputs_path, {
        "audio.bench": bench, "audio.check": check,
        "check.encoded": out64["encoded"].float(),
    }, {"sample_rate": str(SR), "morok.note": "PCM values k/32768; check.encoded: float64 reference"})
    print("%s: audio.bench %d samples, audio.check %d samples, check.encoded %s"
          % (inputs_path, bench.numel(), check.numel(), list(out64["encoded"].shape)))
    print("PyTorch f32 vs the f64 reference (2 s): features %.2e, encoder output %.2e"
          % (max_abs(out32["features"], out64["features"]),
             max_abs(out32["encoded"], out64["encoded"])))

    # 3. the encoder from the waveform as ONNX, checked in PyTorch
    wave_encoder = WaveEncoder(model).eval()
    with torch.no_grad():
        features = wave_encoder.frontend(check[None])
        encoded = wave_encoder(check[None], lengths)
    print("exportable front-end vs torchaudio (f64 reference, 2 s): features %.2e; "
          "its encoder output %.2e"
          % (max_abs(features, out64["features"]), max_abs(encoded, out64["encoded"])))
    example = fixtures.synth_utterance(3.0, 302)  # another length than the check's
    t1 = time.time()
    with torch.no_grad():
        torch.onnx.export(wave_encoder, (example[None], torch.tensor([example.numel()])),
                          onnx_path, opset_version=17, input_names=["wav", "lengths"],
                          output_names=["encoded"],
                          dynamic_axes={"wav": {0: "batch", 1: "samples"},
                                        "lengths": {0: "batch"},
                                        "encoded": {0: "batch", 2: "frames"}})
    print("%s: opset 17, %.0f MB (%.0f s)"
          % (onnx_path, os.path.getsize(onnx_path) / 1e6, time.time() - t1))
    return 0


def _morok_cfg_for_skeleton(ucfg):
    """The normalised config of `ucfg` (what convert.py writes), for building a
    reference model whose state dict random_state fills."""
    cfg = fixtures.expected_morok_cfg("v3")
    cfg["encoder"].update({k: v for k, v in ucfg["encoder"].items() if k in FULL})
    cfg["head"]["feat_in"] = ucfg["head"]["feat_in"]
    return cfg


if __name__ == "__main__":
    sys.exit(main(sys.argv))
