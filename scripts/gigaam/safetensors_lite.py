# SPDX-License-Identifier: MIT
"""A small safetensors writer and reader (no `safetensors` package needed).

File layout (https://github.com/huggingface/safetensors, format section):

    u64 little-endian N | N bytes of JSON header | data buffer

The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin,
end]} (offsets relative to the data buffer) and may hold "__metadata__", a map
of string to string. The writer pads the header with spaces to a multiple of 8
bytes and places tensors by decreasing element size, so that every tensor
starts at an offset aligned to its element size and the buffer has no holes
(strict readers reject holes).
"""

import json
import sys

import torch

# safetensors dtype name <-> torch dtype
DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
NAMES = {v: k for k, v in DTYPES.items()}

# torch dtypes numpy cannot hold are moved as integers of the same width
_RAW_VIEW = {torch.bfloat16: torch.int16}

assert sys.byteorder == "little", "safetensors data is little-endian"


def _raw_bytes(t):
    t = t.detach().cpu().contiguous()
    if t.dtype in _RAW_VIEW:
        t = t.view(_RAW_VIEW[t.dtype])
    return t.numpy().tobytes()


def write(path, tensors, metadata=None):
    """Write `tensors` (name -> torch.Tensor) and `metadata` (str -> str)."""
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("metadata must map str to str: %r" % (k,))
    for name, t in tensors.items():
        if t.dtype not in NAMES:
            raise TypeError("tensor %r: dtype %s not supported" % (name, t.dtype))
    # Largest elements first: every offset stays a multiple of its element size.
    order = sorted(tensors, key=lambda n: -tensors[n].element_size())
    header = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    blobs = []
    offset = 0
    for name in order:
        t = tensors[name]
        blob = _raw_bytes(t)
        assert len(blob) == t.numel() * t.element_size()
        header[name] = {
            "dtype": NAMES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read(path):
    """Return (tensors: name -> torch.Tensor in file order, metadata: dict)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("%s: shorter than the 8-byte header length" % path)
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise ValueError("%s: header length %d past end of file" % (path, n))
    header = json.loads(data[8:8 + n].decode("utf-8"))
    buf = memoryview(data)[8 + n:]
    metadata = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        dtype = DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        raw = bytearray(buf[begin:end])
        view = _RAW_VIEW.get(dtype, dtype)
        if len(raw) == 0:
            t = torch.zeros(0, dtype=view)
        else:
            t = torch.frombuffer(raw, dtype=view)
        if view is not dtype:
            t = t.view(dtype)
        tensors[name] = t.reshape(info["shape"])
    return tensors, metadata
