#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Independent PyTorch reference of GigaAM CTC (v3 and v2), written from the
published architecture (docs/gigaam-model.md), for checking Morok's C code.

usage: reference.py MODEL [WAV...]

MODEL is a Morok .safetensors file (scripts/gigaam/convert.py), an upstream
.ckpt or a Hugging Face folder. Each WAV (16-bit PCM mono at the model's rate)
is transcribed with greedy CTC decoding; without WAVs the config is printed.

As a module: `load_model (path)` -> (GigaAMCTC, config); `model (wave,
lengths)` -> dict of features, feature_lengths, encoded, encoded_lengths,
log_probs; `greedy_decode (log_probs, lengths, blank)` -> token id lists;
`detokenize (ids, vocabulary)` -> text.
"""

import json
import math
import os
import sys
import wave

import torch
import torchaudio
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convert  # noqa: E402
import safetensors_lite  # noqa: E402


def stride2_length(lengths, kernel, padding):
    """Output length of one stride-2 layer: floor((L + 2p - k) / 2) + 1."""
    return torch.div(lengths + 2 * padding - kernel, 2, rounding_mode="floor") + 1


# ---- front-end ----------------------------------------------------------------

class FeatureExtractor(nn.Module):
    """[B, samples] -> [B, n_mels, frames] log-mel, log(clamp(mel, 1e-9, 1e9))."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        # upstream wraps it in a Sequential: preprocessor.featurizer.0.*
        self.featurizer = nn.Sequential(torchaudio.transforms.MelSpectrogram(
            sample_rate=cfg["sample_rate"], n_fft=cfg["n_fft"],
            win_length=cfg["win_length"], hop_length=cfg["hop_length"],
            f_min=cfg["f_min"], f_max=cfg["f_max"], n_mels=cfg["n_mels"],
            power=cfg["power"], center=cfg["center"], pad_mode=cfg["pad_mode"],
            norm=cfg["mel_norm"], mel_scale=cfg["mel_scale"]))

    def out_length(self, lengths):
        hop = self.cfg["hop_length"]
        if self.cfg["center"]:
            return torch.div(lengths, hop, rounding_mode="floor") + 1
        return torch.div(lengths - self.cfg["win_length"], hop, rounding_mode="floor") + 1

    def forward(self, wave, lengths):
        lo, hi = self.cfg["log_clamp"]
        return torch.log(self.featurizer(wave).clamp(lo, hi)), self.out_length(lengths)


# ---- subsampling (factor 4) -------------------------------------------------------

class Conv1dSubsampling(nn.Module):
    """v3: [B, F, T] -> Conv1d(F, d, k, 2, p), ReLU, Conv1d(d, d, k, 2, p), ReLU -> [B, T/4, d]."""

    def __init__(self, feat_in, d_model, kernel, padding):
        super().__init__()
        self.kernel, self.padding = kernel, padding
        self.conv = nn.Sequential(
            nn.Conv1d(feat_in, d_model, kernel, 2, padding), nn.ReLU(),
            nn.Conv1d(d_model, d_model, kernel, 2, padding), nn.ReLU())

    def forward(self, x, lengths):
        for _ in range(2):
            lengths = stride2_length(lengths, self.kernel, self.padding)
        return self.conv(x).transpose(1, 2), lengths


class Conv2dSubsampling(nn.Module):
    """v2: [B, F, T] as [B, 1, T, F] -> two Conv2d(k, 2, p) + ReLU with d channels
    -> [B, d, T/4, F/4] -> [B, T/4, d * F/4] (channel-major) -> Linear -> [B, T/4, d]."""

    def __init__(self, feat_in, d_model, kernel, padding):
        super().__init__()
        self.kernel, self.padding = kernel, padding
        self.conv = nn.Sequential(
            nn.Conv2d(1, d_model, kernel, 2, padding), nn.ReLU(),
            nn.Conv2d(d_model, d_model, kernel, 2, padding), nn.ReLU())
        f = torch.tensor(feat_in)
        for _ in range(2):
            f = stride2_length(f, kernel, padding)
        self.out = nn.Linear(d_model * int(f), d_model)

    def forward(self, x, lengths):
        for _ in range(2):
            lengths = stride2_length(lengths, self.kernel, self.padding)
        y = self.conv(x.transpose(1, 2).unsqueeze(1))  # [B, d, T', F']
        b, c, t, f = y.shape
        return self.out(y.transpose(1, 2).reshape(b, t, c * f)), lengths


# ---- Conformer layer ----------------------------------------------------------------

class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.SiLU()
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.activation(self.linear1(x)))


def rope_tables(length, head_dim, base, dtype):
    """cos, sin [T, head_dim]: angle(t, i) = t * base^(-2i/head_dim), i < head_dim/2,
    repeated for both halves (NeoX layout)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    angles = torch.outer(torch.arange(length, dtype=torch.float64), inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class RotaryMultiHeadAttention(nn.Module):
    """Rotary embedding applied to the (normalised) input, split into heads,
    BEFORE the query/key projections; values are projected from the input as is."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.d_k = n_heads, d_model // n_heads
        self.linear_q = nn.Linear(d_model, d_model)
        self.linear_k = nn.Linear(d_model, d_model)
        self.linear_v = nn.Linear(d_model, d_model)
        self.linear_out = nn.Linear(d_model, d_model)

    def heads(self, x):  # [B, T, d] -> [B, H, T, d_k]
        b, t, _ = x.shape
        return x.view(b, t, self.h, self.d_k).transpose(1, 2)

    def forward(self, x, cos, sin, key_pad):
        b, t, d = x.shape
        xh = self.heads(x)
        rotated = (xh * cos + rotate_half(xh) * sin).transpose(1, 2).reshape(b, t, d)
        q = self.heads(self.linear_q(rotated))
        k = self.heads(self.linear_k(rotated))
        v = self.heads(self.linear_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)  # [B, H, T, T]
        scores = scores.masked_fill(key_pad[:, None, None, :], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v  # [B, H, T, d_k]
        return self.linear_out(out.transpose(1, 2).reshape(b, t, d))


class ChannelLayerNorm(nn.LayerNorm):
    """LayerNorm over the channels of a [B, C, T] tensor."""

    def forward(self, x):
        return super().forward(x.transpose(1, 2)).transpose(1, 2)


class ConvModule(nn.Module):
    def __init__(self, d_model, kernel, norm_type, eps):
        super().__init__()
        self.pointwise_conv1 = nn.Conv1d(d_model, 2 * d_model, 1)
        self.depthwise_conv = nn.Conv1d(d_model, d_model, kernel, 1, (kernel - 1) // 2,
                                        groups=d_model)
        if norm_type == "batch_norm":
            self.batch_norm = nn.BatchNorm1d(d_model, eps=eps)
        else:
            self.batch_norm = ChannelLayerNorm(d_model, eps=eps)
        self.activation = nn.SiLU()
        self.pointwise_conv2 = nn.Conv1d(d_model, d_model, 1)

    def forward(self, x, pad):  # x [B, T, d], pad [B, T] True on padded frames
        y = nn.functional.glu(self.pointwise_conv1(x.transpose(1, 2)), dim=1)
        y = y.masked_fill(pad[:, None, :], 0.0)
        y = self.activation(self.batch_norm(self.depthwise_conv(y)))
        return self.pointwise_conv2(y).transpose(1, 2)


class ConformerLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, eps = cfg["d_model"], cfg["layer_norm_eps"]
        d_ff = d * cfg["ff_expansion_factor"]
        self.norm_feed_forward1 = nn.LayerNorm(d, eps=eps)
        self.feed_forward1 = FeedForward(d, d_ff)
        self.norm_self_att = nn.LayerNorm(d, eps=eps)
        self.self_attn = RotaryMultiHeadAttention(d, cfg["n_heads"])
        self.norm_conv = nn.LayerNorm(d, eps=eps)
        self.conv = ConvModule(d, cfg["conv_kernel_size"], cfg["conv_norm_type"],
                               cfg["batch_norm_eps"] if cfg["conv_norm_type"] == "batch_norm"
                               else eps)
        self.norm_feed_forward2 = nn.LayerNorm(d, eps=eps)
        self.feed_forward2 = FeedForward(d, d_ff)
        self.norm_out = nn.LayerNorm(d, eps=eps)

    def forward(self, x, cos, sin, pad):
        x = x + 0.5 * self.feed_forward1(self.norm_feed_forward1(x))
        x = x + self.self_attn(self.norm_self_att(x), cos, sin, pad)
        x = x + self.conv(self.norm_conv(x), pad)
        x = x + 0.5 * self.feed_forward2(self.norm_feed_forward2(x))
        return self.norm_out(x)


class ConformerEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        sub = Conv1dSubsampling if cfg["subsampling"] == "conv1d" else Conv2dSubsampling
        self.pre_encode = sub(cfg["feat_in"], cfg["d_model"], cfg["subs_kernel_size"],
                              cfg["subs_padding"])
        self.layers = nn.ModuleList(ConformerLayer(cfg) for _ in range(cfg["n_layers"]))

    def forward(self, features, lengths, trace=None):
        """[B, F, T] log-mel -> [B, d, T'] and lengths [B]. `trace`, a list,
        receives the [B, T', d] output of the subsampling and of every layer."""
        x, lengths = self.pre_encode(features, lengths)
        t = x.shape[1]
        cos, sin = rope_tables(t, self.cfg["d_model"] // self.cfg["n_heads"],
                               self.cfg["rope_base"], x.dtype)
        pad = torch.arange(t)[None, :] >= lengths[:, None]
        if trace is not None:
            trace.append(x)
        for layer in self.layers:
            x = layer(x, cos, sin, pad)
            if trace is not None:
                trace.append(x)
        return x.transpose(1, 2), lengths


class CTCHead(nn.Module):
    def __init__(self, feat_in, num_classes):
        super().__init__()
        self.decoder_layers = nn.Sequential(nn.Conv1d(feat_in, num_classes, 1))

    def forward(self, encoded):  # [B, d, T'] -> [B, T', classes] log-probs
        return torch.log_softmax(self.decoder_layers(encoded).transpose(1, 2), dim=-1)


class GigaAMCTC(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.preprocessor = FeatureExtractor(cfg["preprocessor"])
        self.encoder = ConformerEncoder(cfg["encoder"])
        self.head = CTCHead(cfg["head"]["feat_in"], cfg["head"]["num_classes"])

    def forward(self, wave, lengths, trace=None):
        features, feature_lengths = self.preprocessor(wave, lengths)
        encoded, encoded_lengths = self.encoder(features, feature_lengths, trace)
        return {
            "features": features, "feature_lengths": feature_lengths,
            "encoded": encoded, "encoded_lengths": encoded_lengths,
            "log_probs": self.head(encoded),
        }


# ---- decoding -----------------------------------------------------------------------

def greedy_decode(log_probs, lengths, blank):
    """Per utterance: argmax per valid frame, collapse repeats, drop blanks."""
    out = []
    for lp, n in zip(log_probs, lengths.tolist()):
        ids, prev = [], None
        for i in lp[:n].argmax(dim=-1).tolist():
            if i != prev and i != blank:
                ids.append(i)
            prev = i
        out.append(ids)
    return out


def detokenize(ids, vocabulary):
    pieces = [vocabulary["tokens"][i] for i in ids]
    if vocabulary["type"] == "sentencepiece":
        return "".join(pieces).replace("\u2581", " ").strip()
    return "".join(pieces)


# ---- loading ------------------------------------------------------------------------

def build(cfg, state, dtype=torch.float32):
    """A model of config `cfg` holding `state` (upstream names), in `dtype`."""
    model = GigaAMCTC(cfg)
    model.load_state_dict({k: v.to(torch.float32) if v.is_floating_point() else v
                           for k, v in state.items()}, strict=True)
    return model.to(dtype).eval()


def load_model(path, dtype=torch.float32):
    """(model, morok config) from a .safetensors, upstream .ckpt or HF folder."""
    if path.endswith(".safetensors"):
        state, meta = safetensors_lite.read(path)
        cfg = json.loads(meta["morok.config"])
    else:
        upstream, state = convert.load_upstream(path)
        cfg = convert.morok_config(upstream, state)
    return build(cfg, state, dtype), cfg


def read_wav(path):
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise ValueError("%s: expected 16-bit mono PCM" % path)
        pcm = w.readframes(w.getnframes())
        rate = w.getframerate()
    return torch.frombuffer(bytearray(pcm), dtype=torch.int16).float() / 32768.0, rate


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    model, cfg = load_model(argv[1])
    if len(argv) == 2:
        print(json.dumps(cfg, indent=1, ensure_ascii=False))
    for path in argv[2:]:
        wav, rate = read_wav(path)
        if rate != cfg["preprocessor"]["sample_rate"]:
            print("%s: %d Hz, the model wants %d" % (path, rate,
                  cfg["preprocessor"]["sample_rate"]), file=sys.stderr)
            return 1
        with torch.no_grad():
            out = model(wav[None], torch.tensor([wav.numel()]))
        ids = greedy_decode(out["log_probs"], out["encoded_lengths"],
                            cfg["head"]["blank_id"])[0]
        print("%s: %s" % (path, detokenize(ids, cfg["vocabulary"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
