#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make tests/fixtures/sentencepiece-decode.json: a SentencePiece vocabulary
with every piece type (unknown, control, the 256 byte pieces <0xNN>, normal,
user_defined, unused) and token id sequences with the text and words
reference.py gives them (detokenize, word_times; token k at frame k).
tests/test-transcript.c checks morok_transcript_new against it.

Where the sentencepiece package imports (Debian python3-sentencepiece), the
vocabulary is written as a ModelProto and every text is checked to be what
SentencePiece itself decodes (upstream GigaAM's Tokenizer.decode calls it);
check.py repeats that check on the committed file.

usage: make-transcript-fixture.py [OUT]   (default: tests/fixtures/sentencepiece-decode.json)
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402
import sentencepiece_lite  # noqa: E402

W = "\u2581"
PIECES = (["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
          + [W, W + "при", "вет", W + "Мир", ",", ".", "<b>", "zz"])
TYPES = (["unknown", "control", "control"] + ["byte"] * 256 + ["normal"] * 6
         + ["user_defined", "unused"])


def byte(b):
    return 3 + b


def piece(p):
    return PIECES.index(p)


SPACE, PRI, VET, MIR, COMMA, DOT, USER, UNUSED = (piece(p) for p in PIECES[259:])
CASES = [
    ("pieces join, a word's ▁ is a space, the first one dropped", [PRI, VET, COMMA, MIR, DOT]),
    ("control pieces give nothing", [1, PRI, VET, 2]),
    ("the unknown piece gives unk_surface, untrimmed", [0, PRI]),
    ("unknown inside a word", [PRI, 0, VET]),
    ("byte pieces form UTF-8 (П = D0 9F)", [PRI, byte(0xD0), byte(0x9F), VET]),
    ("a four-byte character (U+1F600)", [byte(0xF0), byte(0x9F), byte(0x98), byte(0x80)]),
    ("a truncated sequence: one U+FFFD per byte", [byte(0xE2), byte(0x96), VET]),
    ("a byte that starts nothing", [byte(0xFF)]),
    ("a truncated sequence before an ASCII byte", [byte(0xE2), byte(0x96), byte(0x41)]),
    ("an overlong form (C0 80) is invalid", [byte(0xC0), byte(0x80)]),
    ("a surrogate (ED A0 80) is invalid", [byte(0xED), byte(0xA0), byte(0x80)]),
    ("bytes of ▁ stay ▁", [byte(0xE2), byte(0x96), byte(0x81), VET]),
    ("a byte first: the text is no longer empty, ▁ stays a space", [byte(0x41), PRI]),
    ("a space byte first", [byte(0x20), PRI]),
    ("while the text is empty every leading ▁ goes", [1, SPACE, PRI]),
    ("only ▁ pieces: nothing", [SPACE, SPACE]),
    ("a trailing ▁ stays", [VET, MIR, SPACE]),
    ("user_defined and unused pieces give their text", [USER, PRI, UNUSED]),
    ("the unknown piece alone", [0]),
    ("no tokens", []),
]


def vocabulary():
    return dict(sentencepiece_lite.DEFAULTS, type="sentencepiece", tokens=PIECES,
                piece_types=TYPES, bos_id=1, eos_id=2)


def sentencepiece_texts(vocab, cases):
    """SentencePiece's own decoding of each case, or None without the package."""
    try:
        import sentencepiece
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sp.model")
        sentencepiece_lite.write(path, vocab["tokens"], vocab["piece_types"],
                                 bos_id=vocab["bos_id"], eos_id=vocab["eos_id"])
        proc = sentencepiece.SentencePieceProcessor()
        proc.load(path)
        return [proc.decode(ids) for ids in cases]


def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "..", "tests", "fixtures",
                                                       "sentencepiece-decode.json")
    vocab = vocabulary()
    cases = []
    for why, ids in CASES:
        words = reference.word_times(ids, list(range(len(ids))), vocab, 0.04)
        cases.append({"why": why, "ids": ids, "text": reference.detokenize(ids, vocab),
                      "words": [[w["word"], w["start_frame"], w["end_frame"]] for w in words]})
    want = sentencepiece_texts(vocab, [c["ids"] for c in cases])
    if want is None:
        print("sentencepiece not installed: texts not compared with it")
    else:
        for c, w in zip(cases, want):
            if c["text"] != w:
                raise SystemExit("%s: reference %r, SentencePiece %r" % (c["why"], c["text"], w))
        print("all %d texts are SentencePiece's" % len(cases))
    def dumps(x):
        return json.dumps(x, ensure_ascii=False)

    with open(out, "w", encoding="utf-8") as f:  # one case a line
        f.write('{\n "vocabulary": %s,\n "frame_seconds": 0.04,\n "cases": [\n  %s\n ]\n}\n'
                % (dumps(vocab), ",\n  ".join(dumps(c) for c in cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
