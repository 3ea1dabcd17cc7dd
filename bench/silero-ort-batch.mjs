// SPDX-License-Identifier: MIT
// onnxruntime's side of bench/compare-vad-streams.sh: Silero VAD v5 16 kHz
// with B streams in one session.run () — input [B, 64 + 512], state
// [2, B, 128] — each stream on its own stretch of the WAV (as
// bench-vad-streams does), one thread, graph optimisation 'all'. Prints
// the median µs per stream-chunk for each B given.
//
// usage: ORT_DIR=<dir with node_modules/onnxruntime-node> node silero-ort-batch.mjs model.onnx file.wav B...
import { createRequire } from 'node:module';
import { readWavS16 } from './wav.mjs';
import path from 'node:path';

const [modelPath, wavPath, ...counts] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(process.env.ORT_DIR), 'package.json'));
const ort = require('onnxruntime-node');

const C = 64, N = 512, H = 128, ROUNDS = 200;
const samples = readWavS16(wavPath);
const chunks = Math.floor(samples.length / N);
const session = await ort.InferenceSession.create(modelPath, {
  intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  executionMode: 'sequential',
});
const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
for (const arg of counts) {
  const B = Number(arg);
  let state = new ort.Tensor('float32', new Float32Array(2 * B * H), [2, B, H]);
  const input = new Float32Array(B * (C + N));
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < B; i++) {
      const at = ((i * 37 + r) % chunks) * N; // the chunk bench-vad-streams gives stream i
      input.copyWithin(i * (C + N), i * (C + N) + N, (i + 1) * (C + N));
      input.set(samples.subarray(at, at + N), i * (C + N) + C);
    }
    const t0 = process.hrtime.bigint();
    const out = await session.run({ input: new ort.Tensor('float32', input, [B, C + N]), state, sr });
    times.push(Number(process.hrtime.bigint() - t0) / 1e3 / B);
    state = out.stateN;
  }
  times.sort((a, b) => a - b);
  console.log(`${B} ${times[times.length >> 1].toFixed(2)}`);
}
