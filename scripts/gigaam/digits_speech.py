# SPDX-License-Identifier: MIT
"""Spoken digit sequences from espeak-ng, with the time of every word.

Each digit word ("zero" ... "nine") is synthesised alone by espeak-ng, in
one voice (an English accent, a voice variant, a speed in words per minute
and a pitch 0-99), resampled to 16 kHz and trimmed of its silence; an
utterance is 1 to 6 such words laid end to end with pauses between them,
scaled and mixed with noise; a continuous run is 30 to 38 of them with
pauses too short to hear. Because the words are placed by the script, the
truth is exact: each word's start and end in seconds.

The voices are split in two. Training uses TRAIN_ACCENTS, TRAIN_VARIANTS and
TRAIN_SPEEDS; held-out speech uses voices with a held-out variant
(HELD_OUT_VARIANTS) at a held-out speed (HELD_OUT_SPEEDS), in any accent,
including two accents training never hears (HELD_OUT_ACCENTS).

    bank = synth_bank (held_out_voices (rng, 40))     # {voice: [10 clips]}
    wave, words = make_utterance (rng, bank)           # f32 [n], [{word, start, end}]
    wave, words = make_run (rng, bank)                 # 30-38 words without pauses
    rec, words, spans = recording (rng, 9, lambda: make_utterance (rng, bank))
    pieces = vad_pieces (rec, words, "build")          # [(f32 [n], words)] as morokvad cuts

vad_pieces runs the built morokvad element (gst-launch-1.0, remove-silence
at its defaults) over a recording and cuts it where the element does, so
that training sees what moroktranscriber receives.
"""

import concurrent.futures
import io
import os
import re
import subprocess
import tempfile
import wave

import numpy as np
import torch
import torchaudio

SR = 16000
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# espeak-ng 1.51's English voices (`espeak-ng --voices=en`, without the
# MBROLA ones, which need non-free voice files)
TRAIN_ACCENTS = ("en", "en-us", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-029")
HELD_OUT_ACCENTS = ("en-gb-x-gbcwmd", "en-us-nyc")
# espeak-ng-data/voices/!v: these are never heard in training
HELD_OUT_VARIANTS = ("m3", "f4", "klatt2", "Andy", "belinda", "grandpa", "iven3",
                     "robosoft4", "steph2", "edward2", "Annie", "max", "norbert",
                     "linda", "Gene2", "whisperf")
TRAIN_SPEEDS = (100, 115, 130, 145, 165, 185, 205, 225)  # words per minute
HELD_OUT_SPEEDS = (122, 155, 175, 195)
PITCHES = (25, 75)  # a held-out voice's pitch is drawn from this range
TRAIN_PITCHES = (10, 90)


def espeak_variants():
    """All voice variants espeak-ng has (names as `-v en+NAME` takes them)."""
    out = subprocess.run(["espeak-ng", "--voices=variant"], capture_output=True,
                         text=True, check=True).stdout
    names = [line.split()[-1].split("/")[-1] for line in out.splitlines()[1:] if line.strip()]
    return sorted(set(names))


def train_variants():
    return [v for v in espeak_variants() if v not in HELD_OUT_VARIANTS]


def _voices(rng, n, accents, variants, speeds, pitches=PITCHES):
    return [(str(rng.choice(accents)), str(rng.choice(variants)), int(rng.choice(speeds)),
             int(rng.integers(pitches[0], pitches[1] + 1))) for _ in range(n)]


def train_voices(rng, n):
    """n voices (accent, variant, speed, pitch) as training may use them."""
    return _voices(rng, n, TRAIN_ACCENTS, train_variants(), TRAIN_SPEEDS, TRAIN_PITCHES)


def held_out_voices(rng, n, voiced=False):
    """n voices with a variant and a speed training never uses; voiced: not
    the whispering one (whisperf), which Silero VAD does not take for speech."""
    variants = [v for v in HELD_OUT_VARIANTS if not (voiced and v.startswith("whisper"))]
    return _voices(rng, n, TRAIN_ACCENTS + HELD_OUT_ACCENTS, variants, HELD_OUT_SPEEDS)


# ---- synthesis ------------------------------------------------------------------------

def synth_word(voice, word):
    """One word in `voice`, f32 at 16 kHz, its leading and trailing silence cut:
    the clip runs from the first to the last 2.5 ms block whose peak reaches
    1.5 % of the word's peak (espeak-ng's decaying tail stays below 0.5 %)."""
    accent, variant, speed, pitch = voice
    pcm = subprocess.run(["espeak-ng", "-v", "%s+%s" % (accent, variant), "-s", str(speed),
                          "-p", str(pitch), "--stdout", word],
                         capture_output=True, check=True).stdout
    with wave.open(io.BytesIO(pcm), "rb") as w:
        rate = w.getframerate()
        x = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768
    x = torchaudio.functional.resample(torch.from_numpy(x), rate, SR).numpy()
    block = SR // 400
    peaks = np.abs(x[: len(x) // block * block]).reshape(-1, block).max(axis=1)
    loud = np.nonzero(peaks >= 0.015 * peaks.max())[0]
    return x[loud[0] * block:(loud[-1] + 1) * block].copy()


def synth_bank(voices, workers=2):
    """{voice: [clip of each of WORDS]}; espeak-ng runs `workers` at a time."""
    jobs = [(v, w) for v in voices for w in WORDS]
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        clips = list(pool.map(lambda job: synth_word(*job), jobs))
    return {v: clips[i * len(WORDS):(i + 1) * len(WORDS)] for i, v in enumerate(voices)}


# ---- utterances ------------------------------------------------------------------------

def _noise(rng, n):
    """White, pink-ish or brown-ish noise of unit peak."""
    white = rng.standard_normal(n + 1)
    colour = rng.integers(3)
    if colour == 1:
        noise = np.diff(np.cumsum(white) * 0.5 + white)
    elif colour == 2:
        noise = np.cumsum(white - white.mean())
        noise -= np.convolve(noise, np.ones(400) / 400, mode="same")
    else:
        noise = white
    noise = noise[:n]
    return noise / max(np.abs(noise).max(), 1e-9)


def make_utterance(rng, bank, n_words=None, snr_db=(8.0, 40.0), peak_db=(-26.0, -1.0),
                   gap=(0.03, 0.4), max_seconds=None):
    """1-6 (or n_words) digit words of one voice of `bank` with pauses of
    `gap` seconds, at a random level, over noise at a random SNR (against the
    speech's RMS); with max_seconds, only the words that end within that many
    seconds. Returns the wave (f32, PCM-exact values k/32768) and
    [{"word", "start", "end"}] in seconds."""
    voice = list(bank)[rng.integers(len(bank))]
    clips = bank[voice]
    n_words = n_words or int(rng.integers(1, 7))
    pieces = [np.zeros(int(rng.uniform(0.05, 0.5) * SR), np.float32)]
    words, pos = [], len(pieces[0])
    for i in range(n_words):
        pause = np.zeros(int(rng.uniform(*gap) * SR) if i else 0, np.float32)
        digit = int(rng.integers(10))
        clip = clips[digit]
        if max_seconds is not None and words and \
                pos + len(pause) + len(clip) > max_seconds * SR:
            break
        pieces.append(pause)
        pos += len(pause)
        words.append({"word": WORDS[digit], "start": pos / SR, "end": (pos + len(clip)) / SR})
        pieces.append(clip)
        pos += len(clip)
    pieces.append(np.zeros(int(rng.uniform(0.05, 0.5) * SR), np.float32))
    speech = np.concatenate(pieces).astype(np.float64)
    speech *= 10 ** (rng.uniform(*peak_db) / 20) / np.abs(speech).max()
    voiced = np.concatenate([speech[int(w["start"] * SR):int(w["end"] * SR)] for w in words])
    rms = np.sqrt(np.mean(voiced ** 2))
    noise = _noise(rng, len(speech))
    noise *= rms * 10 ** (-rng.uniform(*snr_db) / 20) / np.sqrt(np.mean(noise ** 2))
    mixed = np.clip(np.round((speech + noise) * 32768), -32768, 32767) / 32768
    return mixed.astype(np.float32), words


def make_run(rng, bank, max_seconds=15.0):
    """Continuous speech: 30-38 words of one voice of `bank` with pauses of at
    most 0.05 s (shorter than morokvad's minimum silence), the
    words ending within max_seconds (so fewer at the slowest speeds)."""
    return make_utterance(rng, bank, int(rng.integers(30, 39)), gap=(0.0, 0.05),
                          max_seconds=max_seconds)


def cut_short(rng, wave, words):
    """The wave cut at a random point at least 0.1 s after its first word
    starts, as a live decode sees the speech so far, with only the words
    that end before the cut (none heard in part)."""
    cut = rng.uniform(words[0]["start"] + 0.1, max(len(wave) / SR, words[0]["start"] + 0.1))
    return wave[:int(cut * SR)], [w for w in words if w["end"] <= cut]


def text_of(words):
    return " ".join(w["word"] for w in words)


def write_wav(path, x):
    pcm = np.clip(np.round(np.asarray(x, np.float64) * 32768), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())


# ---- recordings and what morokvad makes of them ----------------------------------------

def recording(rng, n, make):
    """n utterances of make() (each (wave, words)) one after another with
    0.6-1.0 s of near silence before each but the first. Returns (wave, words
    with times in the recording, [(start, end) of each utterance's speech])."""
    pieces, words, spans, pos = [], [], [], 0
    for i in range(n):
        if i:
            gap = np.zeros(int(rng.uniform(0.6, 1.0) * SR), np.float32)
            gap += (rng.standard_normal(len(gap)) * 1e-4).astype(np.float32)
            pieces.append(gap)
            pos += len(gap)
        wave_, utt_words = make()
        t0 = pos / SR
        utt_words = [{"word": w["word"], "start": round(t0 + w["start"], 4),
                      "end": round(t0 + w["end"], 4)} for w in utt_words]
        spans.append((utt_words[0]["start"], utt_words[-1]["end"]))
        words += utt_words
        pieces.append(wave_)
        pos += len(wave_)
    return np.concatenate(pieces), words, spans


def vad_segments(path, build_dir):
    """[(start, end)] in seconds of the speech segments (pads included) that
    `morokvad remove-silence=true` lets through of the WAV file at path."""
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.join(build_dir, "plugin"))
    out = subprocess.run(["gst-launch-1.0", "-m", "filesrc", "location=" + path, "!",
                          "wavparse", "!", "audioconvert", "!", "morokvad",
                          "remove-silence=true", "!", "fakesink"],
                         capture_output=True, text=True, check=True, env=env).stdout
    bounds = re.findall(r"morokvad, type=\(string\)speech-(start|end), "
                        r"timestamp=\(guint64\)(\d+)", out)
    starts = [int(t) / 1e9 for kind, t in bounds if kind == "start"]
    ends = [int(t) / 1e9 for kind, t in bounds if kind == "end"]
    if not starts or len(starts) != len(ends):
        raise RuntimeError("morokvad on %s: %d starts, %d ends" % (path, len(starts), len(ends)))
    return list(zip(starts, ends))


def vad_pieces(wave_, words, build_dir):
    """The segments morokvad cuts from a recording, each with the words most
    of whose sound falls inside it (times from the segment's start)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rec.wav")
        write_wav(path, wave_)
        segments = vad_segments(path, build_dir)
    owned = [[] for _ in segments]
    for w in words:
        overlap = [min(e, w["end"]) - max(s, w["start"]) for s, e in segments]
        best = int(np.argmax(overlap))
        if overlap[best] > 0:
            owned[best].append(w)
    return [(wave_[int(round(s * SR)):int(round(e * SR))],
             [{"word": w["word"], "start": w["start"] - s, "end": w["end"] - s} for w in mine])
            for (s, e), mine in zip(segments, owned)]
