#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Independent PyTorch reference of GigaAM ASR (v2 and v3; CTC and RNN-T heads),
written from the published architecture (docs/gigaam-model.md), for checking
Morok's C code.

usage: reference.py MODEL [WAV...]

MODEL is a Morok .safetensors file (scripts/gigaam/convert.py), an upstream
.ckpt or a Hugging Face folder. Each WAV (16-bit PCM mono at the model's rate)
is transcribed with greedy decoding and its words timed; without WAVs the
config is printed.

As a module: `load_model (path)` -> (GigaAM, config); `model (wave, lengths)`
-> dict of features, feature_lengths, encoded, encoded_lengths (and log_probs
for CTC); `model.decode (out)` -> per utterance {ids, frames, margin, ...};
`detokenize (ids, vocabulary)` -> text; `word_times (ids, frames, vocabulary,
frame_seconds (cfg))` -> words with start and end.
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

    def forward(self, wave, lengths, per_row):
        """per_row: each row's features from its own samples (centring then
        reflects at the row's end, not into the batch's zero padding); frames
        past a row's length are 0. Else the padded batch as a whole, as upstream."""
        lo, hi = self.cfg["log_clamp"]
        if not per_row:
            return torch.log(self.featurizer(wave).clamp(lo, hi)), self.out_length(lengths)
        n_frames = int(self.out_length(torch.tensor(wave.shape[1])))
        out = wave.new_zeros(wave.shape[0], self.cfg["n_mels"], n_frames)
        for i, n in enumerate(lengths.tolist()):
            row = torch.log(self.featurizer(wave[i:i + 1, :n]).clamp(lo, hi))
            out[i, :, :row.shape[2]] = row[0]
        return out, self.out_length(lengths)


# ---- subsampling (factor 4) -------------------------------------------------------
#
# With `masked` (upstream PR #75, June 2026) the time frames at or past the
# valid length are zeroed in the subsampling's input and in each convolution's
# output (before its ReLU), with the lengths of that stage; a batched item then
# sees zeros past its end, as the convolution's own zero padding gives it alone.

def mask_time(x, lengths):
    """x [B, C, T] or [B, C, T, F]: frames t >= lengths[b] set to 0."""
    pad = torch.arange(x.shape[2])[None, :] >= lengths[:, None]  # [B, T]
    pad = pad[:, None, :, None] if x.dim() == 4 else pad[:, None, :]
    return x.masked_fill(pad, 0.0)


def subsample(conv, x, lengths, kernel, padding, masked):
    """Run the [conv, ReLU, conv, ReLU] Sequential on x ([B, C, T] or
    [B, 1, T, F]); -> output and the lengths after both stages."""
    if masked:
        x = mask_time(x, lengths)
    for module in conv:
        x = module(x)
        if isinstance(module, (nn.Conv1d, nn.Conv2d)):
            lengths = stride2_length(lengths, kernel, padding)
            if masked:
                x = mask_time(x, lengths)
    return x, lengths

class Conv1dSubsampling(nn.Module):
    """v3: [B, F, T] -> Conv1d(F, d, k, 2, p), ReLU, Conv1d(d, d, k, 2, p), ReLU -> [B, T/4, d]."""

    def __init__(self, feat_in, d_model, kernel, padding):
        super().__init__()
        self.kernel, self.padding = kernel, padding
        self.conv = nn.Sequential(
            nn.Conv1d(feat_in, d_model, kernel, 2, padding), nn.ReLU(),
            nn.Conv1d(d_model, d_model, kernel, 2, padding), nn.ReLU())

    def forward(self, x, lengths, masked):
        y, lengths = subsample(self.conv, x, lengths, self.kernel, self.padding, masked)
        return y.transpose(1, 2), lengths


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

    def forward(self, x, lengths, masked):
        y, lengths = subsample(self.conv, x.transpose(1, 2).unsqueeze(1), lengths,
                               self.kernel, self.padding, masked)  # [B, d, T', F']
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

    def forward(self, features, lengths, masked, trace=None):
        """[B, F, T] log-mel -> [B, d, T'] and lengths [B]. `trace`, a list,
        receives the [B, T', d] output of the subsampling and of every layer."""
        x, lengths = self.pre_encode(features, lengths, masked)
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


# ---- heads --------------------------------------------------------------------------

class CTCHead(nn.Module):
    def __init__(self, feat_in, num_classes):
        super().__init__()
        self.decoder_layers = nn.Sequential(nn.Conv1d(feat_in, num_classes, 1))

    def forward(self, encoded):  # [B, d, T'] -> [B, T', classes] log-probs
        return torch.log_softmax(self.decoder_layers(encoded).transpose(1, 2), dim=-1)


class RNNTDecoder(nn.Module):
    """The prediction network: the previous label's embedding (a zero vector
    before the first label) through an LSTM of pred_rnn_layers layers."""

    def __init__(self, num_classes, hidden, layers):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(num_classes, hidden, padding_idx=num_classes - 1)
        self.lstm = nn.LSTM(hidden, hidden, layers)

    def predict(self, label, state):
        """label: an id or None; state: (h, c) [layers, 1, hidden] or None
        (zeros). -> output [hidden] and the state after this step."""
        if label is None:
            x = torch.zeros(1, 1, self.hidden, dtype=self.embed.weight.dtype)
        else:
            x = self.embed(torch.tensor([[label]]))
        out, state = self.lstm(x, state)
        return out[0, 0], state


class RNNTJoint(nn.Module):
    """log_softmax(joint_net.1(ReLU(enc(f) + pred(g))))."""

    def __init__(self, enc_hidden, pred_hidden, joint_hidden, num_classes):
        super().__init__()
        self.enc = nn.Linear(enc_hidden, joint_hidden)
        self.pred = nn.Linear(pred_hidden, joint_hidden)
        self.joint_net = nn.Sequential(nn.ReLU(), nn.Linear(joint_hidden, num_classes))

    def forward(self, f, g):  # [enc_hidden], [pred_hidden] -> [classes]
        return torch.log_softmax(self.joint_net(self.enc(f) + self.pred(g)), dim=-1)


class RNNTHead(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.decoder = RNNTDecoder(cfg["num_classes"], cfg["pred_hidden"], cfg["pred_rnn_layers"])
        self.joint = RNNTJoint(cfg["enc_hidden"], cfg["pred_hidden"], cfg["joint_hidden"],
                               cfg["num_classes"])


class GigaAM(nn.Module):
    """Front-end, encoder and the CTC or RNN-T head of `cfg` (a morok.config).

    pad_masking (default): batch items are computed as if alone, as upstream
    since PR #75 for the subsampling, plus each row's own front-end. False:
    upstream before that PR (whole padded batch through front-end and
    subsampling)."""

    def __init__(self, cfg, pad_masking=True):
        super().__init__()
        self.cfg = cfg
        self.pad_masking = pad_masking
        self.preprocessor = FeatureExtractor(cfg["preprocessor"])
        self.encoder = ConformerEncoder(cfg["encoder"])
        if cfg["head"]["type"] == "ctc":
            self.head = CTCHead(cfg["head"]["feat_in"], cfg["head"]["num_classes"])
        else:
            self.head = RNNTHead(cfg["head"])

    def forward(self, wave, lengths, trace=None):
        """-> features, feature_lengths, encoded [B, d, T'], encoded_lengths and,
        for CTC, log_probs [B, T', classes]."""
        features, feature_lengths = self.preprocessor(wave, lengths, self.pad_masking)
        encoded, encoded_lengths = self.encoder(features, feature_lengths, self.pad_masking,
                                                trace)
        out = {"features": features, "feature_lengths": feature_lengths,
               "encoded": encoded, "encoded_lengths": encoded_lengths}
        if isinstance(self.head, CTCHead):
            out["log_probs"] = self.head(encoded)
        return out

    def decode(self, out):
        """Greedy decoding of forward ()'s output, one dict per utterance."""
        lengths = out["encoded_lengths"].tolist()
        if isinstance(self.head, CTCHead):
            return [ctc_greedy(lp[:n], self.cfg["head"]["blank_id"])
                    for lp, n in zip(out["log_probs"], lengths)]
        return [rnnt_greedy(self.head, enc[:, :n].T, self.cfg["head"])
                for enc, n in zip(out["encoded"], lengths)]


# ---- decoding -----------------------------------------------------------------------

def top2_margin(log_probs):
    """Smallest gap between the best and second-best class, per row of [N, C]."""
    if log_probs.shape[0] == 0:
        return math.inf
    top = log_probs.topk(2, dim=-1).values
    return (top[:, 0] - top[:, 1]).min().item()


def ctc_greedy(log_probs, blank):
    """log_probs [T, C] of the valid frames. A token is emitted at frame t when
    argmax(t) is not blank and differs from argmax(t - 1): ids and frames."""
    ids, frames, prev = [], [], blank
    for t, k in enumerate(log_probs.argmax(dim=-1).tolist()):
        if k != blank and k != prev:
            ids.append(k)
            frames.append(t)
        prev = k
    return {"ids": ids, "frames": frames, "margin": top2_margin(log_probs)}


def rnnt_greedy(head, encoded, cfg):
    """Upstream's greedy RNN-T search over encoded [T, d] (valid frames only).
    Per frame t, up to max_symbols_per_step times: the predictor's output for
    (last label, state) and frame t go through the joint; argmax = blank ends
    the frame, another class is emitted at t and advances label and state.
    The predictor starts from a zero input and zero state. Also returns every
    joint evaluation: its frame, log-probs [C] and predictor output [H]."""
    blank, limit = cfg["blank_id"], cfg["max_symbols_per_step"]
    ids, frames, steps = [], [], []
    label = state = None
    for t in range(encoded.shape[0]):
        for _ in range(limit):
            g, next_state = head.decoder.predict(label, state)
            lp = head.joint(encoded[t], g)
            steps.append((t, lp, g))
            k = int(lp.argmax())
            if k == blank:
                break
            ids.append(k)
            frames.append(t)
            label, state = k, next_state
    joint = torch.stack([lp for _, lp, _ in steps]) if steps else torch.zeros(0, blank + 1)
    return {"ids": ids, "frames": frames, "margin": top2_margin(joint), "joint": joint,
            "joint_frames": [t for t, _, _ in steps],
            "predictor": torch.stack([g for _, _, g in steps]) if steps else None}


def utf8_sentencepiece(data):
    """Bytes as SentencePiece decodes a run of byte pieces: each well-formed
    UTF-8 character (shortest form, no surrogate, at most U+10FFFF) as
    itself, any other byte as one U+FFFD (so a truncated sequence gives one
    per byte, where Python's "replace" gives one for all)."""
    out, i = [], 0
    while i < len(data):
        b = data[i]
        n = 1 if b < 0x80 else 2 if b & 0xE0 == 0xC0 else 3 if b & 0xF0 == 0xE0 else \
            4 if b & 0xF8 == 0xF0 else 0
        cp = None
        if n == 1:
            cp = b
        elif n and i + n <= len(data) and all(c & 0xC0 == 0x80 for c in data[i + 1:i + n]):
            cp = b & (0x7F >> n)
            for c in data[i + 1:i + n]:
                cp = cp << 6 | c & 0x3F
            if cp < (0, 0, 0x80, 0x800, 0x10000)[n] or 0xD800 <= cp < 0xE000 or cp > 0x10FFFF:
                cp = None
        if cp is None:
            out.append("\ufffd")
            i += 1
        else:
            out.append(chr(cp))
            i += n
    return "".join(out)


def detokenize(ids, vocabulary):
    """Text of token ids. Characters: concatenated. SentencePiece, as its
    decoder does: control pieces give nothing, the unknown piece unk_surface,
    a run of byte pieces <0xNN> its bytes as UTF-8 (utf8_sentencepiece);
    other pieces with U+2581 as a space, and while the text is still empty a
    piece's leading U+2581 is dropped (if add_dummy_prefix or
    remove_extra_whitespaces)."""
    tokens = vocabulary["tokens"]
    if vocabulary["type"] != "sentencepiece":
        return "".join(tokens[i] for i in ids)
    types = vocabulary["piece_types"]
    strip = vocabulary["add_dummy_prefix"] or vocabulary["remove_extra_whitespaces"]
    text, pending = "", b""
    for i in ids + [None]:
        if i is not None and types[i] == "byte":
            pending += bytes([int(tokens[i][3:5], 16)])
            continue
        if pending:
            text += utf8_sentencepiece(pending)
            pending = b""
        if i is None or types[i] == "control":
            continue
        if types[i] == "unknown":
            text += vocabulary["unk_surface"]
            continue
        piece = tokens[i]
        if not text and strip and piece.startswith("\u2581"):
            piece = piece[1:]
        text += piece.replace("\u2581", " ")
    return text


def word_times(ids, frames, vocabulary, frame_seconds):
    """Words with start/end in seconds, as upstream's timestamps_utils: a token
    (its piece or character as stored) starting with U+2581 ends the current
    word and starts one with the rest of it; a token that is exactly " " ends
    the word and is dropped; any other joins the current word. A word is its
    tokens joined and stripped (dropped if empty), from the first token's
    frame to one frame after its last token's frame."""
    words, chars, fr = [], [], []

    def commit():
        text = "".join(chars).strip()
        if text:
            words.append({"word": text, "start_frame": fr[0], "end_frame": fr[-1] + 1,
                          "start": round(fr[0] * frame_seconds, 3),
                          "end": round((fr[-1] + 1) * frame_seconds, 3)})
        chars.clear()
        fr.clear()

    for i, t in zip(ids, frames):
        piece = vocabulary["tokens"][i]
        if piece.startswith("\u2581"):
            commit()
            piece = piece[1:]
        elif piece == " ":
            commit()
            continue
        chars.append(piece)
        fr.append(t)
    commit()
    return words


def frame_seconds(cfg):
    """Seconds per encoded frame: hop_length * subsampling_factor / sample_rate."""
    pre = cfg["preprocessor"]
    return pre["hop_length"] * cfg["encoder"]["subsampling_factor"] / pre["sample_rate"]


# ---- loading ------------------------------------------------------------------------

def build(cfg, state, dtype=torch.float32, pad_masking=True):
    """A model of config `cfg` holding `state` (upstream names), in `dtype`."""
    model = GigaAM(cfg, pad_masking)
    model.load_state_dict({k: v.to(torch.float32) if v.is_floating_point() else v
                           for k, v in state.items()}, strict=True)
    return model.to(dtype).eval()


def load_model(path, dtype=torch.float32, pad_masking=True):
    """(model, morok config) from a .safetensors, upstream .ckpt or HF folder
    (with its tokenizer beside it, as convert.py finds it)."""
    if path.endswith(".safetensors"):
        state, meta = safetensors_lite.read(path)
        cfg = json.loads(meta["morok.config"])
    else:
        upstream, state = convert.load_upstream(path)
        cfg = convert.morok_config(upstream, state, convert.find_tokenizer(path, upstream))
    return build(cfg, state, dtype, pad_masking), cfg


def pad_batch(waves):
    """([B, longest] zero-padded rows, lengths [B]) of 1-D waves."""
    lengths = torch.tensor([w.numel() for w in waves])
    batch = torch.zeros(len(waves), int(lengths.max()), dtype=waves[0].dtype)
    for i, w in enumerate(waves):
        batch[i, :w.numel()] = w
    return batch, lengths


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
            hyp = model.decode(out)[0]
        words = word_times(hyp["ids"], hyp["frames"], cfg["vocabulary"], frame_seconds(cfg))
        print("%s: %s" % (path, detokenize(hyp["ids"], cfg["vocabulary"])))
        for w in words:
            print("  %7.3f %7.3f  %s" % (w["start"], w["end"], w["word"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
