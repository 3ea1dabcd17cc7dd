#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make the full-size GigaAM v3 RNN-T benchmark model and 60 s of audio (deterministic).

usage: make-bench-asr.py [OUTDIR]      (default: .cache/gigaam-bench of this repo)

Needs make-bench-model.py's gigaam-bench-inputs.safetensors in OUTDIR (its
audio.bench). Writes, for bench/compare-asr.sh (nothing of it is committed):

  gigaam-v3-rnnt-full.safetensors  (~0.9 GB) as upstream's v3_e2e_rnnt at
        full size: make-bench-model.py's encoder (16 layers, d_model 768, 16
        heads, ff 3072, conv kernel 5; its weights drawn as make-bench-model.py
        draws them, same seed and order), an RNN-T head of pred_hidden
        320, 1 LSTM layer, joint_hidden 320, 1024 SentencePiece pieces + blank
        = 1025 classes; seeded random weights (make-asr-fixtures.py's
        random_weights), saved as an upstream-style .ckpt and converted by
        convert.py (f32)
  gigaam-v3-rnnt-full-tokenizer.model  its generated 1024-piece tokenizer
        (<unk>, U+2581, punctuation, letters, syllables, words)
  gigaam-asr-bench-inputs.safetensors  audio.speech: 60 s at 16 kHz, whose
        first 30 s are audio.bench (so its 10 s and 30 s prefixes are
        bench-gigaam's cases) and the rest 30 s more of make-fixtures.py's
        synthetic speech (seed 303)
  speech-60s.wav  the same 60 s as 16-bit mono PCM (the samples are k/32768,
        so exact), for pipelines (filesrc ! wavparse)

Random weights would say blank at every frame or never. Two changes make
the head emit a set number of tokens: (1) the random encoder's output hardly
changes from frame to frame (per channel, std 0.02 over audio.bench's frames
against 1 over all values), so every frame would decide alike, and what sets one
utterance's frames apart from another's (the encoding of the first 10 s is
not the first 250 frames of the 30 s one) outweighs it. The joint's
encoder projection is made to see standardised frames, with the directions
that set the lengths' means apart projected out (standardise_joint_input).
(2) The blank's output bias (joint_net.1.bias[blank]) is found by bisection
so that the float32 reference's greedy decoding of the first 10, 30 and 60 s
of audio.speech (each encoded alone, as bench-asr runs them) emits one
token per FRAMES_PER_TOKEN encoded frames in all (25 frames/s: about 8
tokens/s). A random predictor does not learn to say blank after a token, so
the tokens come in bursts: a frame that emits mostly emits
MOROK_RNNT_MAX_SYMBOLS (10). The cost is that of spread tokens all the same:
one predictor step per token (and one to start), one joint per token and one
per frame that is not capped. The rate, the frames that emit more than one
token and the text's start are printed.
"""

import importlib.util
import math
import os
import sys
import tempfile
import time
import wave

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import convert  # noqa: E402
import reference  # noqa: E402
import safetensors_lite  # noqa: E402
import sentencepiece_lite  # noqa: E402


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fixtures = _load("make_fixtures", "make-fixtures.py")
asr = _load("make_asr_fixtures", "make-asr-fixtures.py")
bench = _load("make_bench_model", "make-bench-model.py")

MODEL = "gigaam-v3-rnnt-full.safetensors"
TOKENIZER = "gigaam-v3-rnnt-full-tokenizer.model"
INPUTS = "gigaam-asr-bench-inputs.safetensors"
WAV = "speech-60s.wav"
N_PIECES = 1024
PRED, JOINT = 320, 320
FRAMES_PER_TOKEN = 3.0
BENCH_SECONDS = (10, 30, 60)  # bench-asr's lengths: prefixes of audio.speech
SEED = bench.SEED  # the CTC bench model's
W = "\u2581"


def pieces():
    """1024 distinct pieces: <unk>, the word start, punctuation, letters and
    word-initial letters, consonant-vowel syllables (inside and starting a
    word), then seeded two- and three-syllable words, some capitalised."""
    cons, vows = "бвгджзклмнпрстфхцчшщ", "аеиоуыэюя"
    letters = [chr(c) for c in range(ord("а"), ord("я") + 1)]
    out = ["<unk>", W, ",", ".", "?", "!", "-", "—"]
    out += letters + [W + c for c in letters]
    syllables = [c + v for c in cons for v in vows]
    out += syllables + [W + s for s in syllables]
    rng = np.random.default_rng(SEED)
    seen = set(out)
    while len(out) < N_PIECES:
        word = "".join(syllables[i] for i in rng.integers(0, len(syllables), rng.integers(2, 4)))
        word = W + (word.capitalize() if rng.random() < 0.15 else word)
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def upstream_cfg():
    """make-bench-model.py's full-size v3 config with upstream's RNN-T head and
    SentencePiece decoding, as v3_e2e_rnnt's checkpoint spells them."""
    cfg = bench.upstream_cfg()
    cfg.update(model_name="v3_e2e_rnnt", model_class="rnnt")
    classes = N_PIECES + 1
    cfg["head"] = {
        "_target_": "gigaam.decoder.RNNTHead",
        "decoder": {"pred_hidden": PRED, "pred_rnn_layers": 1, "num_classes": classes},
        "joint": {"enc_hidden": bench.FULL["d_model"], "pred_hidden": PRED,
                  "joint_hidden": JOINT, "num_classes": classes},
    }
    cfg["decoding"] = {"_target_": "gigaam.decoding.RNNTGreedyDecoding", "vocabulary": None,
                       "model_path": "%s/v3_e2e_rnnt_tokenizer.model"
                       % asr.UPSTREAM_TOKENIZER_DIR}
    return cfg


def skeleton_cfg(ucfg, tokenizer):
    cfg = asr.skeleton_cfg(ucfg, tokenizer)
    cfg["encoder"].update({k: v for k, v in ucfg["encoder"].items() if k in bench.FULL})
    return cfg


def rate(head, encoded, cfg):
    """(tokens, ids, frames with more than one token, frames with the most) of
    the greedy decoding."""
    hyp = reference.rnnt_greedy(head, encoded, cfg)
    counts = np.bincount(hyp["frames"], minlength=encoded.shape[0]) if hyp["frames"] else [0]
    counts = np.asarray(counts)
    return (len(hyp["ids"]), hyp["ids"], int((counts > 1).sum()),
            int((counts >= cfg["max_symbols_per_step"]).sum()))


def standardise_joint_input(model, encoded):
    """head.joint.enc of standardised frames, blind to what sets the lengths
    apart: with m and s each channel's mean and std over all frames of
    encoded (a list of [T, d], one per length) and Q an orthonormal basis of
    the standardised differences (m_i - m) / s of the lengths' means,
    W' = W (I - Q Q^T) diag (1 / s), b' = -W' m. -> the mean per-channel std."""
    enc = model.head.joint.enc
    frames = torch.cat(encoded)
    mean, std = frames.mean(0), frames.std(0)
    diffs = torch.stack([(e.mean(0) - mean) / std for e in encoded])
    u, sv, vt = torch.linalg.svd(diffs, full_matrices=False)
    q = vt[sv > 1e-6 * sv.max()].T  # [d, rank]
    with torch.no_grad():
        w = (enc.weight @ (torch.eye(q.shape[0]) - q @ q.T)) / std
        enc.weight.copy_(w)
        enc.bias.copy_(-w @ mean)
    return std.mean().item()


def calibrate(model, cfg, encoded):
    """Adds to the blank's output bias the shift that makes the greedy decoding
    of the encoded lengths (a list of [T, d]) emit sum T / FRAMES_PER_TOKEN
    tokens (bisection; more bias, fewer tokens). -> the shift."""
    bias = model.head.joint.joint_net[1].bias
    blank = cfg["head"]["blank_id"]
    base = bias[blank].item()
    want = sum(e.shape[0] for e in encoded) / FRAMES_PER_TOKEN
    lo, hi = -40.0, 40.0
    with torch.no_grad():
        for _ in range(40):
            mid = (lo + hi) / 2
            bias[blank] = base + mid
            n = sum(rate(model.head, e, cfg["head"])[0] for e in encoded)
            if abs(n - want) <= 0.05 * want:
                break
            lo, hi = (mid, hi) if n > want else (lo, mid)
        return mid


def write_wav(path, samples):
    pcm = np.round(samples.double().numpy() * 32768).clip(-32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(fixtures.SR)
        w.writeframes(pcm.tobytes())


def main(argv):
    outdir = os.path.normpath(argv[1] if len(argv) > 1
                              else os.path.join(HERE, "..", "..", ".cache", "gigaam-bench"))
    torch.set_num_threads(2)
    t0 = time.time()
    ctc_inputs, _ = safetensors_lite.read(os.path.join(outdir, "gigaam-bench-inputs.safetensors"))
    audio30 = ctc_inputs["audio.bench"]
    if audio30.numel() != 30 * fixtures.SR:
        raise SystemExit("audio.bench: %d samples, expected 30 s" % audio30.numel())

    # 1. 60 s of audio: audio.bench and 30 s more
    speech = torch.cat([audio30, fixtures.synth_utterance(30.0, 303)])
    safetensors_lite.write(os.path.join(outdir, INPUTS), {"audio.speech": speech},
                           {"sample_rate": str(fixtures.SR),
                            "morok.note": "PCM values k/32768; first 30 s = audio.bench"})
    write_wav(os.path.join(outdir, WAV), speech)
    print("%s, %s: %d samples (%.0f s)" % (INPUTS, WAV, speech.numel(),
                                            speech.numel() / fixtures.SR))

    # 2. tokenizer, weights, the blank's bias
    tokenizer = os.path.join(outdir, TOKENIZER)
    vocab = pieces()
    sentencepiece_lite.write(tokenizer, vocab, ["unknown"] + ["normal"] * (len(vocab) - 1))
    ucfg = upstream_cfg()
    cfg = skeleton_cfg(ucfg, tokenizer)
    state = asr.random_weights(cfg, SEED, "f32")
    model = reference.build(cfg, state)
    encoded = []
    for seconds in BENCH_SECONDS:
        wave_ = speech[:seconds * fixtures.SR]
        with torch.no_grad():
            out = model(wave_[None], torch.tensor([wave_.numel()]))
        encoded.append(out["encoded"][0, :, :int(out["encoded_lengths"][0])].T)
    spread = standardise_joint_input(model, encoded)
    print("encoder output: per channel, std %.3f over the frames" % spread)
    shift = calibrate(model, cfg, encoded)
    blank = cfg["head"]["blank_id"]
    for name in ("joint.enc.weight", "joint.enc.bias", "joint.joint_net.1.bias"):
        state["head." + name] = model.head.state_dict()[name].clone()
    print("blank bias %+.3f (shift %+.3f)" % (state["head.joint.joint_net.1.bias"][blank].item(),
                                               shift))
    for seconds, e in zip(BENCH_SECONDS, encoded):
        n, ids, multi, capped = rate(model.head, e, cfg["head"])
        print("  %2d s: %d tokens on %d frames (one per %.2f frames, %.1f tokens/s), %d frames "
              "emit more than one, %d the most; text starts %r"
              % (seconds, n, e.shape[0], e.shape[0] / max(n, 1), n / seconds, multi, capped,
                 reference.detokenize(ids, cfg["vocabulary"])[:50]))
    del model

    # 3. upstream-style checkpoint, convert.py
    model_path = os.path.join(outdir, MODEL)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "v3_e2e_rnnt.ckpt")
        torch.save({"cfg": ucfg, "state_dict": state}, ckpt)
        del state
        mcfg = convert.convert(ckpt, model_path, "f32", tokenizer)
    head = mcfg["head"]
    print("%s: %d layers, d_model %d; RNN-T pred_hidden %d, %d LSTM layer(s), joint_hidden %d, "
          "%d classes; %.0f MB (%.0f s)"
          % (model_path, mcfg["encoder"]["n_layers"], mcfg["encoder"]["d_model"],
             head["pred_hidden"], head["pred_rnn_layers"], head["joint_hidden"],
             head["num_classes"], os.path.getsize(model_path) / 1e6, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
