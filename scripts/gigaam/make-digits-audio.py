#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write a recording of spoken digit sequences in held-out voices, with its truth.

usage: make-digits-audio.py [--sequences N] [--seed S] [--voiced] [--continuous] OUT.wav

OUT.wav (16 kHz mono, 16-bit) holds N sequences of 1-6 digit words
(digits_speech.py), each in its own voice drawn from the held-out accents,
variants and speeds that train-digits.py never uses (--voiced: not the
whispering variant, which morokvad's Silero model does not hear as speech),
separated by 0.6-1.0 s of near silence. With --continuous each sequence is a
continuous run instead (digits_speech.make_run: 30-38 words without pauses,
10-15 s). OUT.json beside it holds the truth:

    {"sample_rate": 16000,
     "sequences": [{"voice": "en-us+m3", "speed": 155, "pitch": 40,
                    "text": "four two", "start": 0.31, "end": 1.12}, ...],
     "words": [{"word": "four", "start": 0.31, "end": 0.66}, ...]}

times in seconds from the start of the file; a word runs from its first to
its last sound (digits_speech.synth_word). Needs espeak-ng. The same seed
gives the same files with the same espeak-ng. tests/fixtures/digits-16k.wav
was made with the defaults (3 sequences, seed 1).
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits_speech  # noqa: E402

SR = digits_speech.SR


def make_recording(n_sequences, seed, voiced=False, continuous=False):
    """(wave f32, truth dict) of n_sequences (continuous: runs) in held-out voices."""
    rng = np.random.default_rng(seed)
    voices = digits_speech.held_out_voices(rng, n_sequences, voiced)
    bank = digits_speech.synth_bank(voices)
    turn = iter(voices)

    def next_utterance():
        voice = next(turn)
        make = digits_speech.make_run if continuous else digits_speech.make_utterance
        return make(rng, {voice: bank[voice]})

    wave, words, spans = digits_speech.recording(rng, len(voices), next_utterance)
    sequences = []
    for (accent, variant, speed, pitch), (start, end) in zip(voices, spans):
        text = digits_speech.text_of([w for w in words if start <= w["start"] < end])
        sequences.append({"voice": "%s+%s" % (accent, variant), "speed": speed,
                          "pitch": pitch, "text": text, "start": start, "end": end})
    truth = {"sample_rate": SR, "sequences": sequences, "words": words}
    return wave, truth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output .wav; the truth goes to the same name with .json")
    ap.add_argument("--sequences", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--voiced", action="store_true", help="leave out the whispering voice")
    ap.add_argument("--continuous", action="store_true",
                    help="continuous runs of 30-38 words instead of 1-6 word sequences")
    args = ap.parse_args()
    wave, truth = make_recording(args.sequences, args.seed, args.voiced, args.continuous)
    digits_speech.write_wav(args.out, wave)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    print("%s: %.2f s, %d words" % (args.out, len(wave) / SR, len(truth["words"])))


if __name__ == "__main__":
    main()
