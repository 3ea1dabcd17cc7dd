// SPDX-License-Identifier: MIT
// The samples of a 16-bit PCM WAV file as floats / 32768, for the
// onnxruntime sides of the bench scripts (the data chunk found by walking
// the chunks; the fixtures are known, so nothing else is checked).
import { readFileSync } from 'node:fs';

export function readWavS16 (file) {
  const buf = readFileSync(file);
  for (let off = 12; off + 8 <= buf.length;) {
    const size = buf.readUInt32LE(off + 4);
    if (buf.toString('ascii', off, off + 4) === 'data') {
      const n = Math.floor(Math.min(size, buf.length - off - 8) / 2);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = buf.readInt16LE(off + 8 + 2 * i) / 32768;
      return out;
    }
    off += 8 + size;
  }
  throw new Error(`${file}: no data chunk`);
}
