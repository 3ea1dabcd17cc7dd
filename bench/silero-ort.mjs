// SPDX-License-Identifier: MIT
// onnxruntime's side of bench/compare-silero.sh: the Silero VAD v5 16 kHz
// model run chunk by chunk over a WAV file with the official chunking (64
// context samples + 512 new ones, state carried), one thread, graph
// optimisation 'all'. Prints the median µs of one session.run () per chunk.
//
// usage: ORT_DIR=<dir with node_modules/onnxruntime-node> node silero-ort.mjs model.onnx file.wav passes
import { createRequire } from 'node:module';
import { readWavS16 } from './wav.mjs';
import path from 'node:path';

const [modelPath, wavPath, passesArg] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(process.env.ORT_DIR), 'package.json'));
const ort = require('onnxruntime-node');
const version = require('onnxruntime-node/package.json').version;

const CONTEXT = 64, HOP = 512;
const samples = readWavS16(wavPath);
const session = await ort.InferenceSession.create(modelPath, {
  intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  executionMode: 'sequential',
});
const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
const times = [];
for (let pass = 0; pass < Number(passesArg || 5); pass++) {
  let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const window = new Float32Array(CONTEXT + HOP);
  for (let at = 0; at < samples.length; at += HOP) {
    window.copyWithin(0, HOP, HOP + CONTEXT);
    window.fill(0, CONTEXT);
    window.set(samples.subarray(at, Math.min(at + HOP, samples.length)), CONTEXT);
    const input = new ort.Tensor('float32', window.slice(), [1, CONTEXT + HOP]);
    const t0 = process.hrtime.bigint();
    const out = await session.run({ input, state, sr });
    times.push(Number(process.hrtime.bigint() - t0) / 1e3);
    state = out.stateN;
  }
}
times.sort((a, b) => a - b);
console.log(`onnxruntime ${version}: median ${times[times.length >> 1].toFixed(2)} us per chunk`);
