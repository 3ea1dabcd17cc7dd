# SPDX-License-Identifier: MIT
"""Read and write SentencePiece `.model` files (no `sentencepiece` package needed).

A `.model` file is one protobuf ModelProto (sentencepiece_model.proto). The
fields used here:

    ModelProto      1: repeated SentencePiece   2: TrainerSpec   3: NormalizerSpec
    SentencePiece   1: piece (string)   2: score (float)   3: type (enum, default NORMAL)
    TrainerSpec     3: model_type (1 unigram, 2 bpe)   4: vocab_size
                    40: unk_id (default 0)   41: bos_id (1)   42: eos_id (2)
                    43: pad_id (-1)   44: unk_surface (" \u2047 ")
    NormalizerSpec  1: name   3: add_dummy_prefix (true)   4: remove_extra_whitespaces (true)

A piece's id is its position in ModelProto field 1; GigaAM uses it as the
class id (the blank is the class after the last piece).
"""

import struct

# SentencePiece.Type, as stored in the Morok file's vocabulary.piece_types
PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined",
               5: "unused", 6: "byte"}
TYPE_NUMBERS = {v: k for k, v in PIECE_TYPES.items()}
DEFAULTS = {"unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1,
            "unk_surface": " \u2047 ", "add_dummy_prefix": True,
            "remove_extra_whitespaces": True}


class ModelError(Exception):
    pass


# ---- protobuf wire format -----------------------------------------------------

def _varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf):
            raise ModelError("truncated protobuf varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _fields(buf):
    """Yield (field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = bytes(buf[i:i + 8]), i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = bytes(buf[i:i + n]), i + n
        elif wire == 5:
            value, i = bytes(buf[i:i + 4]), i + 4
        else:
            raise ModelError("unsupported protobuf wire type %d" % wire)
        if i > len(buf):
            raise ModelError("truncated protobuf field %d" % field)
        yield field, wire, value


def _int32(v):
    """An int32 field's varint (negative values are sign-extended to 64 bits)."""
    return v - (1 << 64) if v >= 1 << 63 else v


def _key(field, wire):
    return _uvarint(field << 3 | wire)


def _uvarint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _bytes_field(field, payload):
    return _key(field, 2) + _uvarint(len(payload)) + payload


def _int_field(field, value):
    return _key(field, 0) + _uvarint(value)


# ---- reading --------------------------------------------------------------------

def read(path):
    """{"pieces": [str], "scores": [float], "types": [str], "model_type": int,
    unk_id, bos_id, eos_id, pad_id, unk_surface, add_dummy_prefix,
    remove_extra_whitespaces} of a `.model` file."""
    with open(path, "rb") as f:
        buf = f.read()
    out = dict(DEFAULTS, pieces=[], scores=[], types=[], model_type=1)
    try:
        for field, wire, value in _fields(buf):
            if field == 1 and wire == 2:
                piece, score, kind = "", 0.0, 1
                for fn, w, v in _fields(value):
                    if fn == 1 and w == 2:
                        piece = v.decode("utf-8")
                    elif fn == 2 and w == 5:
                        score = struct.unpack("<f", v)[0]
                    elif fn == 3 and w == 0:
                        kind = v
                if kind not in PIECE_TYPES:
                    raise ModelError("piece %d has unknown type %d" % (len(out["pieces"]), kind))
                out["pieces"].append(piece)
                out["scores"].append(score)
                out["types"].append(PIECE_TYPES[kind])
            elif field == 2 and wire == 2:
                names = {3: "model_type", 40: "unk_id", 41: "bos_id", 42: "eos_id", 43: "pad_id"}
                for fn, w, v in _fields(value):
                    if fn in names and w == 0:
                        out[names[fn]] = _int32(v)
                    elif fn == 44 and w == 2:
                        out["unk_surface"] = v.decode("utf-8")
            elif field == 3 and wire == 2:
                for fn, w, v in _fields(value):
                    if fn == 3 and w == 0:
                        out["add_dummy_prefix"] = bool(v)
                    elif fn == 4 and w == 0:
                        out["remove_extra_whitespaces"] = bool(v)
    except (ModelError, UnicodeDecodeError) as e:
        raise ModelError("%s: not a SentencePiece model: %s" % (path, e)) from e
    if not out["pieces"]:
        raise ModelError("%s: no SentencePiece pieces found" % path)
    return out


# ---- writing (test fixtures) -------------------------------------------------------

def write(path, pieces, types=None, scores=None, model_type=2, unk_id=0, bos_id=-1,
          eos_id=-1, pad_id=-1):
    """Write a minimal ModelProto: the pieces (ids = positions) with their
    types and scores, a TrainerSpec with the special ids and an identity
    NormalizerSpec that adds the dummy prefix and removes extra whitespace.
    With byte pieces (SentencePiece then wants all 256, <0x00> .. <0xFF>)
    the TrainerSpec says byte_fallback (field 35)."""
    types = types or ["normal"] * len(pieces)
    scores = scores or [-float(i) for i in range(len(pieces))]
    proto = b""
    for piece, kind, score in zip(pieces, types, scores):
        body = _bytes_field(1, piece.encode("utf-8")) + _key(2, 5) + struct.pack("<f", score)
        if kind != "normal":
            body += _int_field(3, TYPE_NUMBERS[kind])
        proto += _bytes_field(1, body)
    trainer = (_int_field(3, model_type) + _int_field(4, len(pieces)) + _int_field(40, unk_id)
               + _int_field(41, bos_id) + _int_field(42, eos_id) + _int_field(43, pad_id))
    if "byte" in types:
        trainer += _int_field(35, 1)
    normalizer = _bytes_field(1, b"identity") + _int_field(3, 1) + _int_field(4, 1)
    proto += _bytes_field(2, trainer) + _bytes_field(3, normalizer)
    with open(path, "wb") as f:
        f.write(proto)
