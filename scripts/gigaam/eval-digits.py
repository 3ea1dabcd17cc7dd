#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Word error rate and word timing of the digits model on held-out voices.

usage: eval-digits.py MODEL [--utterances N] [--voices K] [--seed S] [--continuous] [--cut]
       eval-digits.py MODEL --wav REC.wav [--max-wer W] [--max-time-error T]

MODEL is a converted .safetensors file; if MODEL.sha256 exists (`sha256sum`
format) the file must match it. Decoding is reference.py's forward pass and
greedy CTC with each token's frame, as upstream's timestamps_utils does: a
token's frame is the first frame of its run, a word starts at its first
token's frame and ends one frame after its last token's (40 ms frames).

Without --wav: N utterances (default 300) of K held-out voices (default 40,
digits_speech.held_out_voices: variants and speeds training never used),
synthesised now by espeak-ng; --continuous: continuous runs of 30-38 words
(digits_speech.make_run) instead of 1-6 word utterances; --cut: each
utterance cut at a random point after its first word starts, as a live
decode sees the speech so far, and scored against the words that end before
the cut (a half-heard word decoded is an error). With --wav: the recording and the truth in the
JSON beside it (make-digits-audio.py), each sequence cut out with 0.3 s
around it (as a voice-activity detector would hand it on) and decoded alone. Prints the WER
(word edits / reference words) and, over the words of utterances decoded
correctly, the start and end errors; exits 1 when --max-wer or
--max-time-error is exceeded.
"""

import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits_speech  # noqa: E402
import reference  # noqa: E402
from word_errors import edit_distance  # noqa: E402

FRAME_SECONDS = 0.04  # hop 10 ms, subsampling by 4


def check_sha256(path):
    """Raise SystemExit if PATH.sha256 exists and does not match the file."""
    if not os.path.exists(path + ".sha256"):
        return
    with open(path + ".sha256") as f:
        want = f.read().split()[0]
    with open(path, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != want:
        raise SystemExit("%s: sha256 %s, %s.sha256 says %s" % (path, got, path, want))


def decode_words(log_probs, length, cfg):
    """[{"word", "start", "end"}] from one utterance's [T', C] log-probs:
    greedy CTC, then words as reference.word_times makes them."""
    blank = cfg["head"]["blank_id"]
    ids, frames, prev = [], [], blank
    for t, label in enumerate(log_probs[:length].argmax(dim=-1).tolist()):
        if label != blank and label != prev:
            ids.append(label)
            frames.append(t)
        prev = label
    return [{"word": w["word"], "start": w["start_frame"] * FRAME_SECONDS,
             "end": w["end_frame"] * FRAME_SECONDS}
            for w in reference.word_times(ids, frames, cfg["vocabulary"], FRAME_SECONDS)]


def transcribe(model, cfg, waves, batch=16):
    """Decoded words of each wave (f32 numpy arrays), in batches of similar length."""
    order = sorted(range(len(waves)), key=lambda i: len(waves[i]))
    out = [None] * len(waves)
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        lengths = torch.tensor([len(waves[i]) for i in idx])
        x = torch.zeros(len(idx), int(lengths.max()))
        for row, i in enumerate(idx):
            x[row, :len(waves[i])] = torch.from_numpy(waves[i])
        with torch.no_grad():
            res = model(x, lengths)
        for row, i in enumerate(idx):
            out[i] = decode_words(res["log_probs"][row], int(res["encoded_lengths"][row]), cfg)
    return out


def score(truths, hyps):
    """(WER, reference words, [start errors], [end errors]) in seconds."""
    edits = n_ref = 0
    starts, ends = [], []
    for truth, hyp in zip(truths, hyps):
        ref_words, hyp_words = [w["word"] for w in truth], [w["word"] for w in hyp]
        edits += edit_distance(ref_words, hyp_words)
        n_ref += len(ref_words)
        if ref_words == hyp_words:
            starts += [h["start"] - t["start"] for t, h in zip(truth, hyp)]
            ends += [h["end"] - t["end"] for t, h in zip(truth, hyp)]
    return edits / max(n_ref, 1), n_ref, starts, ends


def cut_sequences(wave, truth, margin=0.3):
    """Each sequence of a make-digits-audio.py recording with `margin` seconds
    around it, and its words with times from the cut's start."""
    waves, truths = [], []
    for seq in truth["sequences"]:
        lo = max(seq["start"] - margin, 0.0)
        hi = seq["end"] + margin
        waves.append(wave[int(lo * digits_speech.SR):int(hi * digits_speech.SR)])
        truths.append([{"word": w["word"], "start": w["start"] - lo, "end": w["end"] - lo}
                       for w in truth["words"] if seq["start"] <= w["start"] < seq["end"]])
    return waves, truths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--wav", help="a make-digits-audio.py recording (truth in its .json)")
    ap.add_argument("--utterances", type=int, default=300)
    ap.add_argument("--voices", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--continuous", action="store_true")
    ap.add_argument("--cut", action="store_true")
    ap.add_argument("--max-wer", type=float)
    ap.add_argument("--max-time-error", type=float)
    args = ap.parse_args()
    torch.set_num_threads(2)
    check_sha256(args.model)
    model, cfg = reference.load_model(args.model)

    if args.wav:
        wave, rate = reference.read_wav(args.wav)
        if rate != digits_speech.SR:
            raise SystemExit("%s: %d Hz, expected %d" % (args.wav, rate, digits_speech.SR))
        with open(os.path.splitext(args.wav)[0] + ".json") as f:
            waves, truths = cut_sequences(wave.numpy(), json.load(f))
    else:
        rng = np.random.default_rng(args.seed)
        bank = digits_speech.synth_bank(digits_speech.held_out_voices(rng, args.voices))
        make = digits_speech.make_run if args.continuous else digits_speech.make_utterance
        utts = [make(rng, bank) for _ in range(args.utterances)]
        if args.cut:
            utts = [digits_speech.cut_short(rng, *u) for u in utts]
        waves, truths = [w for w, _ in utts], [t for _, t in utts]
    hyps = transcribe(model, cfg, waves)
    wer, n_ref, starts, ends = score(truths, hyps)
    worst = max((abs(e) for e in starts + ends), default=0.0)
    print("%d utterances, %d words: WER %.2f %%" % (len(waves), n_ref, 100 * wer))
    if starts:
        within = sum(abs(e) <= 0.2 for e in starts + ends) / len(starts + ends)
        print("timing over %d words: start error mean %+.3f s, |max| %.3f s; end error "
              "mean %+.3f s, |max| %.3f s; %.1f %% of bounds within 0.2 s"
              % (len(starts), np.mean(starts), max(map(abs, starts)), np.mean(ends),
                 max(map(abs, ends)), 100 * within))
    if args.wav:
        for truth, hyp in zip(truths, hyps):
            print("truth: %-40s decoded: %s" % (digits_speech.text_of(truth),
                                                digits_speech.text_of(hyp)))
    failed = (args.max_wer is not None and wer > args.max_wer) or \
        (args.max_time_error is not None and (worst > args.max_time_error or not starts))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
