#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""examples/morok-transcribe on a bundled recording: it exits 0 and prints,
as they come, each morokvad segment (speech-start, speech-end) and after it
that segment's transcript, whose times are the segment's, with its words
inside it (a word may end up to one 40 ms frame past the audio).

usage: check-transcribe-example.py EXAMPLE MODEL WAV
"""
import subprocess
import sys

FRAME = 0.04


def main():
    example, model, wav = sys.argv[1:4]
    run = subprocess.run([example, model, wav], capture_output=True, text=True, timeout=240)
    print(run.stdout, run.stderr, sep="")
    assert run.returncode == 0, "exit status %d" % run.returncode
    segments, transcripts, start = [], [], None
    for line in run.stdout.splitlines():
        kind, *rest = line.split(maxsplit=3)
        if kind == "speech-start":
            start = float(rest[0])
        elif kind == "speech-end":
            segments.append((start, float(rest[0])))
        elif kind == "transcript":
            assert segments, "a transcript before any segment ended: " + line
            transcripts.append((float(rest[0]), float(rest[1])))
            t0, t1 = transcripts[-1]
        elif kind == "word":
            w0, w1 = float(rest[0]), float(rest[1])
            assert t0 <= w0 < w1 <= t1 + FRAME + 1e-6, "word outside its utterance: " + line
    assert len(segments) >= 3, "%d segments: the recording holds 3 utterances" % len(segments)
    assert transcripts == segments, "transcripts %s, segments %s" % (transcripts, segments)
    print("%d segments, each transcribed" % len(segments))


if __name__ == "__main__":
    main()
