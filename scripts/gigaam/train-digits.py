#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Train the small GigaAM v3 CTC model that recognises spoken English digits.

usage: train-digits.py [--steps N] [--truncated P] [--out MODEL.safetensors]
                       [--ckpt FILE.ckpt] [--build DIR]

The model is the v3_ctc architecture of reference.py (64 log-mel bands,
conv1d subsampling by 4, rotary Conformer layers, CTC head; upstream
state-dict names) at a small size, trained from seeded random weights on
espeak-ng speech of the ten digit words (digits_speech.py: sequences of 1-6
words and continuous runs of 8-40 words up to 20 s, the training accents,
variants, speeds and pitches, noise, band limits, hum and level changes,
SpecAugment-style masks on the log-mel). Part of the speech is pieces cut by
the built morokvad element (DIR/plugin, default build/: remove-silence at its
defaults, run once by gst-launch-1.0 over a recording of 2000 sequences and
150 runs), as moroktranscriber receives them behind it: tight around the
speech and split at pauses; the rest is fresh, with its silence around, a
share P (default 0.5) of it cut at a random point as a live decode sees
the speech so far, its targets only the words that end before the cut. The
loss is CTC restricted to the alignments that emit each word's tokens near
where the word is (align_windows), so that word times, which follow the
emitted tokens, follow the audio. It is saved as an upstream-style
checkpoint ({"cfg", "state_dict"}) and converted by convert.py to f16
safetensors (default tests/fixtures/gigaam-digits.safetensors), and the
sha256 of that file is written beside it (`sha256sum -c` format).

Seeded throughout and run with 2 torch threads and deterministic algorithms,
so a rerun on the same machine and packages gives the same file; the time it
takes is in docs/digits-model.md. eval-digits.py and
tests/check-digits-e2e.py measure it.
"""

import argparse
import functools
import hashlib
import math
import os
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import convert  # noqa: E402
import digits_speech  # noqa: E402
import sentencepiece_lite  # noqa: E402
import reference  # noqa: E402

SEED = 20240611
N_LAYERS, D_MODEL, N_HEADS = 4, 96, 4
# Each word is written as two pieces, its start and its end: a word's time
# runs from its first token's frame to one frame after its last, and two
# tokens and a space fit in the frames of a fast word in continuous speech,
# where its letters (five in "eight", in 0.2 s) and the space did not.
PIECES = {"zero": ("ze", "ro"), "one": ("on", "e"), "two": ("tw", "o"),
          "three": ("thr", "ee"), "four": ("fo", "ur"), "five": ("fi", "ve"),
          "six": ("si", "x"), "seven": ("sev", "en"), "eight": ("ei", "ght"),
          "nine": ("ni", "ne")}
VOCAB = [" "] + sorted(p for word in digits_speech.WORDS for p in PIECES[word])  # 21 + blank
# The vocabulary as SentencePiece pieces (tokenizer.model, classes in VOCAB's
# order): a word's first piece carries U+2581, so a word ends where the next
# one begins even when the space between them is not emitted (as at the end
# of the audio a live decode has, where the space comes last); the space is
# a control piece: it ends a word and renders as nothing.
STARTS = {first for first, _ in PIECES.values()}
SP_PIECES = [" "] + ["\u2581" + p if p in STARTS else p for p in VOCAB[1:]]
SP_TYPES = ["control"] + ["normal"] * (len(VOCAB) - 1)
TOKENIZER_IDS = {"unk_id": -1, "bos_id": -1, "eos_id": -1, "pad_id": -1}  # no such pieces
N_VOICES = 1000       # training voices, 10 words each
N_VAD_UTTERANCES = 2000   # short utterances cut by the real morokvad (vad_corpus)
N_VAD_RUNS = 150      # continuous runs among them
RUN_WORDS = (8, 40)   # words in a continuous run (fresh_run)
RUN_GAPS = (0.05, 0.1, 0.4)  # the longest pause between a run's words, one drawn per run
MAX_SECONDS = 20.0    # a run's words end within this
SNR_DB = (3.0, 40.0)  # fresh speech's noise: wider than the held-out 8-40 dB
TRUNCATE = 0.5        # share of the fresh speech cut short (digits_speech.cut_short)
GROUP = (40, 24, 6)   # batches are drawn a group at a time: pieces, short utterances, runs
BATCH_SECONDS = 48.0  # of padded audio in a batch at most
MAX_BATCH = 32
SR = digits_speech.SR
FRAME = 0.04          # seconds per encoded frame (hop 10 ms, subsampling by 4)
# where a word's letters may be emitted (seconds around its true start and end;
# align_windows): first letter near the start, last letter so that the word's
# end, one frame after it, falls near the true end
EARLY, LATE = 0.08, 0.12
STEPS = 3000
LR, WARMUP = 2e-3, 300


def upstream_cfg():
    """The config as an upstream v3_ctc checkpoint spells it."""
    return {
        "model_class": "ctc",
        "sample_rate": digits_speech.SR,
        "preprocessor": {"_target_": "gigaam.preprocess.FeatureExtractor",
                         "sample_rate": digits_speech.SR, "features": 64,
                         "win_length": 320, "hop_length": 160, "n_fft": 320, "center": False},
        "encoder": {"_target_": "gigaam.encoder.ConformerEncoder", "feat_in": 64,
                    "n_layers": N_LAYERS, "d_model": D_MODEL, "n_heads": N_HEADS,
                    "subsampling": "conv1d", "subs_kernel_size": 5, "subsampling_factor": 4,
                    "ff_expansion_factor": 4, "self_attention_model": "rotary",
                    "pos_emb_max_len": 5000, "conv_kernel_size": 5,
                    "conv_norm_type": "layer_norm", "flash_attn": False},
        "head": {"_target_": "gigaam.decoder.CTCHead", "feat_in": D_MODEL,
                 "num_classes": len(VOCAB) + 1},
        "decoding": {"_target_": "gigaam.decoding.CTCGreedyDecoding",
                     "model_path": "gigaam-digits_tokenizer.model"},
    }


def morok_cfg():
    """What convert.py makes of upstream_cfg (checked after converting)."""
    return {
        "format": "morok-gigaam", "format_version": convert.FORMAT_VERSION, "model_class": "ctc",
        "preprocessor": {
            "sample_rate": digits_speech.SR, "n_mels": 64, "n_fft": 320, "win_length": 320,
            "hop_length": 160, "center": False, "pad_mode": "reflect",
            "window": "hann_periodic", "power": 2.0, "mel_scale": "htk", "f_min": 0.0,
            "f_max": digits_speech.SR / 2, "mel_norm": None, "log_clamp": [1e-9, 1e9],
        },
        "encoder": {
            "feat_in": 64, "n_layers": N_LAYERS, "d_model": D_MODEL, "n_heads": N_HEADS,
            "ff_expansion_factor": 4, "conv_kernel_size": 5, "conv_norm_type": "layer_norm",
            "subsampling": "conv1d", "subsampling_factor": 4, "subs_kernel_size": 5,
            "subs_stride": 2, "subs_padding": 2, "self_attention_model": "rotary",
            "rope_base": 5000.0, "layer_norm_eps": 1e-5, "batch_norm_eps": 1e-5,
        },
        "head": {"type": "ctc", "feat_in": D_MODEL, "num_classes": len(VOCAB) + 1,
                 "blank_id": len(VOCAB)},
        "vocabulary": dict({"type": "sentencepiece", "tokens": SP_PIECES, "piece_types": SP_TYPES},
                           **{k: v for k, v in sentencepiece_lite.DEFAULTS.items()
                              if k not in TOKENIZER_IDS}, **TOKENIZER_IDS),
    }


# ---- batches ----------------------------------------------------------------------------

def fresh_short(rng, bank):
    return digits_speech.make_utterance(rng, bank, snr_db=SNR_DB)


def fresh_run(rng, bank):
    """A continuous run: RUN_WORDS words of one voice with short pauses (at
    most 0.05, 0.1 or 0.4 s), ending within MAX_SECONDS."""
    n_words = int(rng.integers(RUN_WORDS[0], RUN_WORDS[1] + 1))
    return digits_speech.make_utterance(rng, bank, n_words, snr_db=SNR_DB,
                                        gap=(0.0, float(rng.choice(RUN_GAPS))),
                                        max_seconds=MAX_SECONDS)


def degrade(rng, wave):
    """Now and then a band limit (low-pass at 3-7 kHz, one in five) or mains
    hum (50 or 60 Hz and two harmonics at -40 to -20 dB of the peak, one in
    ten) over the noise make_utterance mixed in."""
    x = wave.astype(np.float64)
    kind = rng.random()
    if kind < 0.2:
        spectrum = np.fft.rfft(x)
        spectrum[np.fft.rfftfreq(len(x), 1 / SR) > rng.uniform(3000, 7000)] = 0
        x = np.fft.irfft(spectrum, len(x))
    elif kind < 0.3:
        t = np.arange(len(x)) / SR
        base = float(rng.choice((50.0, 60.0)))
        hum = sum(np.sin(2 * np.pi * base * k * t + rng.uniform(0, 2 * np.pi)) / k
                  for k in (1, 2, 3))
        x += hum * np.abs(x).max() * 10 ** (rng.uniform(-40, -20) / 20)
    return np.clip(x, -1, 1).astype(np.float32)


def vad_corpus(rng, bank, build_dir):
    """Pieces (wave, words) of N_VAD_UTTERANCES short utterances and
    N_VAD_RUNS runs laid out as make-digits-audio.py lays out a recording,
    cut by the built morokvad (remove-silence at its defaults) where it cuts
    them: tight around the speech and split at pauses, as moroktranscriber
    receives them."""
    share = N_VAD_RUNS / (N_VAD_UTTERANCES + N_VAD_RUNS)
    wave, words, _ = digits_speech.recording(
        rng, N_VAD_UTTERANCES + N_VAD_RUNS,
        lambda: fresh_run(rng, bank) if rng.random() < share else fresh_short(rng, bank))
    return digits_speech.vad_pieces(wave, words, build_dir)


def batches(rng, bank, pieces, truncated=TRUNCATE):
    """Endless batches, a group at a time: GROUP's morokvad pieces (at a
    random gain), fresh short utterances and fresh runs (a `truncated` share
    of them cut short, some degraded), sorted by length (less padding) and split
    into batches of at most BATCH_SECONDS of padded audio and MAX_BATCH
    utterances, handed out in random order."""
    n_vad, n_short, n_runs = GROUP
    while True:
        fresh = [fresh_short(rng, bank) for _ in range(n_short)]
        fresh += [fresh_run(rng, bank) for _ in range(n_runs)]
        utts = []
        for wave, words in fresh:
            if rng.random() < truncated:
                wave, words = digits_speech.cut_short(rng, wave, words)
            utts.append((degrade(rng, wave), words))
        for i in rng.integers(len(pieces), size=n_vad):
            wave, words = pieces[i]
            gain = min(10 ** (rng.uniform(-6, 6) / 20), 0.999 / max(np.abs(wave).max(), 1e-9))
            utts.append(((wave * gain).astype(np.float32), words))
        utts.sort(key=lambda u: len(u[0]))
        split, current = [], []
        for utt in utts:
            if current and (len(current) == MAX_BATCH or
                            (len(current) + 1) * len(utt[0]) > BATCH_SECONDS * SR):
                split.append(current)
                current = []
            current.append(utt)
        split.append(current)
        for i in rng.permutation(len(split)):
            yield make_batch(split[i])


def align_windows(words, n_frames):
    """Token ids of an utterance's text and, for each, the frames [lo, hi) in
    which aligned_ctc_loss lets it be emitted: a word's first piece from
    EARLY before its start to LATE after it, its last piece where the word's
    end (one frame after it) is from LATE before the true end to EARLY after
    it; spaces anywhere."""
    ids, windows = [], []

    def frames(t0, t1):
        lo = min(max(int(math.floor(t0 / FRAME)), 0), n_frames - 1)
        return lo, min(max(int(math.ceil(t1 / FRAME)) + 1, lo + 1), n_frames)

    for k, w in enumerate(words):
        if k:
            ids.append(VOCAB.index(" "))
            windows.append((0, n_frames))
        first, last = PIECES[w["word"]]
        ids += [VOCAB.index(first), VOCAB.index(last)]
        windows.append(frames(w["start"] - EARLY, w["start"] + LATE))
        windows.append(frames(w["end"] - LATE - FRAME, w["end"] + EARLY - FRAME))
    return ids, windows


def make_batch(utts):
    """Padded waves [B, n], lengths [B], and each utterance's words."""
    lengths = torch.tensor([len(w) for w, _ in utts])
    waves = torch.zeros(len(utts), int(lengths.max()))
    for i, (w, _) in enumerate(utts):
        waves[i, :len(w)] = torch.from_numpy(w)
    return waves, lengths, [words for _, words in utts]


NEG = -1e4  # log-probability of what a path may not do


def _lse3(a, b, c):
    m = torch.maximum(torch.maximum(a, b), c)
    return m + torch.log(torch.exp(a - m) + torch.exp(b - m) + torch.exp(c - m))


def _shift(x, k, fill=NEG):
    """x[:, s - k] (k > 0) or x[:, s + |k|] (k < 0) at s, `fill` where out of range."""
    pad = torch.full((x.shape[0], abs(k)), fill, dtype=x.dtype)
    return torch.cat([pad, x[:, :-k]], 1) if k > 0 else torch.cat([x[:, -k:], pad], 1)


class _AlignedCtc(torch.autograd.Function):
    """-log P of each utterance's restricted alignments from emit [B, T, S],
    the log-probability of each extended target position (blanks between the
    tokens) at each frame, NEG where it may not be emitted. The forward-backward
    recursions run here without autograd, which would record and replay a few
    operations per frame (the frames of a 20 s utterance are 500); the
    gradient is minus each position's posterior at each frame."""

    @staticmethod
    def forward(ctx, emit, lengths, skip, last):
        b, t_max, s_max = emit.shape
        rows = torch.arange(b)
        alphas = torch.empty(t_max, b, s_max)
        alpha = torch.full((b, s_max), NEG)
        alpha[:, :2] = emit[:, 0, :2]
        alphas[0] = alpha
        for t in range(1, t_max):
            jump = _shift(alpha, 2).masked_fill(~skip, NEG)
            new = _lse3(alpha, _shift(alpha, 1), jump) + emit[:, t]
            alpha = torch.where((t < lengths)[:, None], new, alpha)
            alphas[t] = alpha
        log_p = torch.logaddexp(alpha[rows, last], torch.where(
            last > 0, alpha[rows, (last - 1).clamp(min=0)], torch.full((b,), NEG)))
        final = torch.zeros(b, s_max, dtype=torch.bool)
        final[rows, last] = True
        final[rows, (last - 1).clamp(min=0)] |= last > 0
        skip_up = _shift(skip, -2, False)  # s -> s + 2 allowed
        betas = torch.empty(t_max, b, s_max)
        beta = torch.full((b, s_max), NEG)
        for t in range(t_max - 1, -1, -1):
            jump = _shift(beta, -2).masked_fill(~skip_up, NEG)
            new = _lse3(beta, _shift(beta, -1), jump) + emit[:, t]
            start = emit[:, t].masked_fill(~final, NEG)
            beta = torch.where((t == lengths - 1)[:, None], start,
                               torch.where((t < lengths - 1)[:, None], new, NEG))
            betas[t] = beta
        nll = -log_p
        valid = nll < -NEG / 2
        post = torch.exp(alphas + betas - emit.transpose(0, 1) - log_p[None, :, None])
        ctx.save_for_backward(-(post * valid[None, :, None]).transpose(0, 1))
        return torch.where(valid, nll, torch.zeros_like(nll))

    @staticmethod
    def backward(ctx, grad_nll):
        (grad_emit,) = ctx.saved_tensors
        return grad_nll[:, None, None] * grad_emit, None, None, None


def aligned_ctc_loss(log_probs, lengths, targets, windows, blank):
    """CTC loss (mean over the batch of -log P / target length, as
    torch.nn.functional.ctc_loss's "mean") over the alignments in which each
    target token is emitted within its window of frames: log_probs [B, T, C],
    lengths [B], targets and windows lists (align_windows). Utterances whose
    windows admit no alignment add nothing."""
    b, t_max, _ = log_probs.shape
    s_max = 2 * max(max((len(t) for t in targets), default=0), 1) + 1
    ext = torch.full((b, s_max), blank, dtype=torch.long)
    allowed = torch.ones(b, t_max, s_max, dtype=torch.bool)
    for i, (ids, wins) in enumerate(zip(targets, windows)):
        for j, (tok, (lo, hi)) in enumerate(zip(ids, wins)):
            ext[i, 2 * j + 1] = tok
            allowed[i, :, 2 * j + 1] = False
            allowed[i, lo:hi, 2 * j + 1] = True
    skip = torch.zeros(b, s_max, dtype=torch.bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    emit = log_probs.gather(2, ext[:, None, :].expand(b, t_max, s_max))
    emit = emit.masked_fill(~allowed, NEG)
    n_tok = torch.tensor([len(t) for t in targets])
    last = (2 * n_tok).clamp(max=s_max - 1)
    nll = _AlignedCtc.apply(emit, lengths, skip, last)
    return (nll / n_tok.clamp(min=1)).mean()


def spec_augment(gen, features, lengths):
    """Two bands of up to 8 mels and 1-3 spans of up to 6 frames (60 ms) per
    utterance set to the utterance's mean; in place."""
    b, n_mels, _ = features.shape
    for i in range(b):
        fill = features[i, :, :int(lengths[i])].mean()
        for _ in range(2):
            width = int(torch.randint(0, 9, (1,), generator=gen))
            lo = int(torch.randint(0, n_mels - width + 1, (1,), generator=gen))
            features[i, lo:lo + width, :] = fill
        for _ in range(int(torch.randint(1, 4, (1,), generator=gen))):
            width = int(torch.randint(0, 7, (1,), generator=gen))
            lo = int(torch.randint(0, max(int(lengths[i]) - width, 1), (1,), generator=gen))
            features[i, :, lo:lo + width] = fill


# ---- training --------------------------------------------------------------------------

def init_state(model, gen):
    """Seeded weights: Xavier-like normal for matrices, zero biases, unit norms."""
    state = {}
    for name, t in model.state_dict().items():
        if name.startswith("preprocessor."):
            state[name] = t
        elif name.endswith(".bias"):
            state[name] = torch.zeros_like(t)
        elif "norm" in name:
            state[name] = torch.ones_like(t)
        else:
            fan_in = t[0].numel()
            state[name] = torch.randn(t.shape, generator=gen) / math.sqrt(fan_in)
    return state


def train(steps, build_dir, truncated, log=functools.partial(print, flush=True)):
    rng = np.random.default_rng(SEED)
    gen = torch.Generator().manual_seed(SEED)
    t0 = time.time()
    bank = digits_speech.synth_bank(digits_speech.train_voices(rng, N_VOICES))
    log("synthesised %d voices x %d words in %.0f s"
        % (len(bank), len(digits_speech.WORDS), time.time() - t0))
    pieces = vad_corpus(rng, bank, build_dir)
    log("morokvad cut %d utterances and %d runs into %d pieces (%.0f s of audio) in %.0f s"
        % (N_VAD_UTTERANCES, N_VAD_RUNS, len(pieces), sum(len(w) for w, _ in pieces) / digits_speech.SR,
           time.time() - t0))

    model = reference.GigaAM(morok_cfg())
    model.load_state_dict(init_state(model, gen))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=LR, betas=(0.9, 0.98), weight_decay=1e-3)
    blank = len(VOCAB)
    t1, smooth = time.time(), None
    data = batches(rng, bank, pieces, truncated)
    for step in range(steps):
        lr = LR * min((step + 1) / WARMUP, 0.5 * (1 + math.cos(math.pi * step / steps)))
        for group in opt.param_groups:
            group["lr"] = lr
        waves, lengths, words = next(data)
        with torch.no_grad():
            features, feat_lengths = model.preprocessor(waves, lengths, True)
        spec_augment(gen, features, feat_lengths)
        encoded, enc_lengths = model.encoder(features, feat_lengths, True)
        log_probs = model.head(encoded)
        targets, windows = zip(*(align_windows(w, int(n)) for w, n in zip(words, enc_lengths)))
        loss = aligned_ctc_loss(log_probs, enc_lengths, targets, windows, blank)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        smooth = loss.item() if smooth is None else 0.98 * smooth + 0.02 * loss.item()
        if step % 100 == 0 or step == steps - 1:
            log("step %5d  loss %.4f  lr %.2e  %.0f s" % (step, smooth, lr, time.time() - t1))
    log("trained %d steps in %.0f s (%.0f s in all)" % (steps, time.time() - t1, time.time() - t0))
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# Set before the process starts: OpenBLAS instead of Debian's default reference
# BLAS (ten times faster here), glibc keeping freed memory instead of unmapping
# it (first-touch page faults of fresh buffers cost more than the arithmetic),
# OpenMP threads sleeping instead of spinning (a shared 2-core machine).
ENVIRONMENT = {
    "LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu/openblas-pthread",
    "MALLOC_MMAP_THRESHOLD_": str(1 << 32), "MALLOC_TRIM_THRESHOLD_": str(1 << 32),
    "MALLOC_TOP_PAD_": str(1 << 28), "OMP_WAIT_POLICY": "passive",
}


def main():
    if any(os.environ.get(k) != v for k, v in ENVIRONMENT.items()):
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **ENVIRONMENT})
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "fixtures",
                                                   "gigaam-digits.safetensors"))
    ap.add_argument("--truncated", type=float, default=TRUNCATE,
                    help="share of the fresh speech cut at a random point (default %(default)s)")
    ap.add_argument("--ckpt", help="also keep the upstream-style checkpoint here")
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"),
                    help="the meson build whose plugin/ has morokvad (default build/)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)

    state = train(args.steps, args.build, args.truncated)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = args.ckpt or os.path.join(tmp, "gigaam-digits.ckpt")
        torch.save({"cfg": upstream_cfg(), "state_dict": state}, ckpt)
        tokenizer = os.path.join(tmp, "gigaam-digits_tokenizer.model")
        sentencepiece_lite.write(tokenizer, SP_PIECES, SP_TYPES, **TOKENIZER_IDS)
        got = convert.convert(ckpt, args.out, "f16", tokenizer=tokenizer)
    if got != morok_cfg():
        raise SystemExit("convert.py made config %s, expected %s" % (got, morok_cfg()))
    digest = sha256_of(args.out)
    with open(args.out + ".sha256", "w") as f:
        f.write("%s  %s\n" % (digest, os.path.basename(args.out)))
    print("%s: %d bytes, sha256 %s" % (args.out, os.path.getsize(args.out), digest))


if __name__ == "__main__":
    main()
