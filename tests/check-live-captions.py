#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The live caption examples on a recording played in real time:
examples/morok-transcribe MODEL WAV --live and examples/morok-captions.py
MODEL WAV, both run at once, each against the file mode of morok-transcribe
(MODEL WAV, offline). Each exits 0 and prints, not on a terminal, one line
per update: `interim COMMITTED [TENTATIVE]` lines, then `final TEXT` at each
utterance's end. Checked: every utterance with words has interim lines
before its final line; within an utterance the committed words only grow,
and the final words start with them; there are as many finals as the file
mode has transcripts, and their words are the file mode's but for at most
half of them (word edits). Live decoding commits words decoded from
part of an utterance, at times the machine's speed sets (the element's
default interval is measured), so a word may differ from the one decoded
from the whole (the digits fixture: "eigr" for "eigh", now and then).
Times are not checked (real time on a shared machine).

usage: check-live-captions.py TRANSCRIBE CAPTIONS_PY MODEL WAV
"""
import difflib
import re
import subprocess
import sys

MAX_EDITS = 0.5  # of the file mode's words: the structure is checked here, accuracy by
# bench/live-latency.sh (the digits model's first word, at 195 wpm, comes out
# as "si ght" from part of its audio where the whole gives "eight")

INTERIM = re.compile(r"^interim (.*?) ?\[(.*)\]$")


def offline_texts(transcribe, model, wav):
    run = subprocess.run([transcribe, model, wav], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, "%s exited %d:\n%s" % (transcribe, run.returncode, run.stderr)
    return [line.split(maxsplit=3)[3] if len(line.split()) > 3 else ""
            for line in run.stdout.splitlines() if line.startswith("transcript ")]


def edits(ref, hyp):
    """Word edits of difflib's alignment (substitutions, insertions and
    deletions; not always the fewest, never fewer)."""
    ops = difflib.SequenceMatcher(None, ref, hyp, autojunk=False).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")


def check(name, out, expected):
    """The structure of one example's output; the final texts."""
    finals, committed, interims = [], [], 0
    for line in out.splitlines():
        if line.startswith("final"):
            text = line[len("final "):]
            assert text.split()[:len(committed)] == committed, \
                "%s: final '%s' does not start with the committed '%s'" % (
                    name, text, " ".join(committed))
            assert interims or not text, "%s: no interim before the final '%s'" % (name, text)
            finals.append(text)
            committed, interims = [], 0
            continue
        m = INTERIM.match(line)
        assert m, "%s: not an interim or a final line: %r" % (name, line)
        words = m.group(1).split()
        assert words[:len(committed)] == committed, \
            "%s: committed words went back: '%s' after '%s'" % (
                name, m.group(1), " ".join(committed))
        committed, interims = words, interims + 1
    assert len(finals) == len(expected), "%s: final texts %s, the file mode's %s" % (
        name, finals, expected)
    ref, hyp = " ".join(expected).split(), " ".join(finals).split()
    e = edits(ref, hyp)
    assert e <= MAX_EDITS * len(ref), "%s: final texts %s, %d word edits from the file mode's %s" % (
        name, finals, e, expected)
    print("%s: %d utterances, their words %d edits from the file mode's %d" % (
        name, len(finals), e, len(ref)))


def main():
    transcribe, captions, model, wav = sys.argv[1:5]
    expected = offline_texts(transcribe, model, wav)
    assert any(expected), "the file mode found no words in %s" % wav
    runs = {"morok-transcribe --live": [transcribe, model, wav, "--live"],
            "morok-captions.py": ["/usr/bin/python3", captions, model, wav]}
    procs = {name: subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for name, cmd in runs.items()}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        print("== %s\n%s%s" % (name, out, err))
        assert proc.returncode == 0, "%s exited %d" % (name, proc.returncode)
        check(name, out, expected)


if __name__ == "__main__":
    main()
