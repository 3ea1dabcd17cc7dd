#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The digits model end to end: examples/morok-transcribe (`morokvad
remove-silence=true ! moroktranscriber`) on a make-digits-audio.py recording
of held-out voices, its words scored against the truth in the JSON beside it.

usage: check-digits-e2e.py EXAMPLE MODEL WAV... [--max-wer W] [--max-time-error T]

The words the example prints (all utterances, in order) are aligned with the
spoken ones by edit distance, a decoded word matching a spoken one when it
is the same word and starts within a second of it (of the minimal
alignments, the one whose matches start closest); WER = edits / spoken
words. Each matched word is timed against where it was spoken: start and end
errors in seconds.
Exits 1 when, in any of the recordings, the WER is above W or a right
word's start or end is more than T seconds off.
"""
import argparse
import json
import os
import subprocess
import sys


def same(r, h):
    return r["word"] == h["word"] and abs(r["start"] - h["start"]) < 1.0


def align(ref, hyp):
    """(edits, [(i, j)] pairs of matching words) of a minimal edit script;
    of the minimal ones, the one whose matched words start closest to where
    they were spoken (where the VAD drops one of "four four four", the
    decoded "four" is the one spoken at its time)."""
    n, m = len(ref), len(hyp)
    # d[i][j]: (edits, seconds between matched starts) and the step that got there
    d = [[None] * (m + 1) for _ in range(n + 1)]
    d[0][0] = ((0, 0.0), None)
    for i in range(n + 1):
        for j in range(m + 1):
            steps = []
            if i:
                steps.append(((d[i - 1][j][0][0] + 1, d[i - 1][j][0][1]), "ref"))
            if j:
                steps.append(((d[i][j - 1][0][0] + 1, d[i][j - 1][0][1]), "hyp"))
            if i and j:
                (e, t), match = d[i - 1][j - 1][0], same(ref[i - 1], hyp[j - 1])
                dt = abs(ref[i - 1]["start"] - hyp[j - 1]["start"]) if match else 0.0
                steps.append(((e + (not match), t + dt), "match" if match else "sub"))
            if steps:
                d[i][j] = min(steps, key=lambda s: s[0])
    pairs, i, j = [], n, m
    while i or j:
        step = d[i][j][1]
        if step == "match":
            pairs.append((i - 1, j - 1))
        i, j = i - (step != "hyp"), j - (step != "ref")
    return d[n][m][0][0], pairs[::-1]


def check(example, model, wav, max_wer, max_time_error):
    """Transcribe one recording and score it; True when it passes."""
    with open(os.path.splitext(wav)[0] + ".json") as f:
        truth = json.load(f)
    run = subprocess.run([example, model, wav], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        print(run.stdout, run.stderr, sep="")
        raise SystemExit("%s exited with %d" % (example, run.returncode))
    hyp, segments = [], []
    for line in run.stdout.splitlines():
        kind, *rest = line.split()
        if kind == "speech-start":
            segments.append([float(rest[0]), None])
        elif kind == "speech-end":
            segments[-1][1] = float(rest[0])
        elif kind == "transcript":
            print("%s %s %s" % (rest[0], rest[1], " ".join(rest[2:])))
        elif kind == "word":
            hyp.append({"word": rest[2], "start": float(rest[0]), "end": float(rest[1])})
    ref = truth["words"]
    edits, pairs = align(ref, hyp)
    wer = edits / len(ref)
    starts = [hyp[j]["start"] - ref[i]["start"] for i, j in pairs]
    ends = [hyp[j]["end"] - ref[i]["end"] for i, j in pairs]
    worst = max(map(abs, starts + ends), default=0.0)
    unheard = [w for w in ref if not any(min(b, w["end"]) > max(a, w["start"])
                                         for a, b in segments)]
    print("%s: %d words spoken, %d decoded: WER %.2f %% (%d edits); %d segments, %d words "
          "outside every one" % (os.path.basename(wav), len(ref), len(hyp), 100 * wer, edits,
                                 len(segments), len(unheard)))
    if pairs:
        print("%d right words: start error mean %+.3f s, |max| %.3f s; end error mean "
              "%+.3f s, |max| %.3f s" % (len(pairs), sum(starts) / len(pairs),
                                          max(map(abs, starts)), sum(ends) / len(pairs),
                                          max(map(abs, ends))))
    for (i, j), s, e in zip(pairs, starts, ends):
        if max_time_error is not None and max(abs(s), abs(e)) > max_time_error:
            print("  %s spoken %.3f-%.3f, decoded %.3f-%.3f" % (
                ref[i]["word"], ref[i]["start"], ref[i]["end"], hyp[j]["start"], hyp[j]["end"]))
    return not ((max_wer is not None and wer > max_wer) or
                (max_time_error is not None and (worst > max_time_error or not pairs)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("example")
    ap.add_argument("model")
    ap.add_argument("wav", nargs="+")
    ap.add_argument("--max-wer", type=float)
    ap.add_argument("--max-time-error", type=float)
    args = ap.parse_args()
    passed = [check(args.example, args.model, wav, args.max_wer, args.max_time_error)
              for wav in args.wav]
    return 0 if all(passed) else 1


if __name__ == "__main__":
    sys.exit(main())
