// SPDX-License-Identifier: MIT
// onnxruntime's side of bench/compare-gigaam.sh: the full-size GigaAM v3
// encoder exported by scripts/gigaam/make-bench-model.py (waveform -> encoder
// output, front-end included) on the first 10 s and all 30 s of audio.bench,
// batch 1, with 1 and 2 intra-op threads (one inter-op thread, sequential
// execution, graph optimisation 'all'; one session per thread count).
//
// First checks the output on audio.check against the float64 reference of
// reference.py (check.encoded) and prints the largest absolute difference.
// Then, per thread count and length, one untimed run and `reps` timed runs of
// session.run (), and one line per case:
//   RESULT ort threads=1 seconds=10 median=0.8312 min=0.8123
// ($ORT_LABEL in place of "ort": ort-int8 for the model of
// scripts/gigaam/quantize-bench-onnx.py; $BENCH_GIGAAM_SECONDS=10: 10 s only).
//
// usage: ORT_DIR=<dir with node_modules/onnxruntime-node> \
//        node gigaam-ort.mjs model.onnx inputs.safetensors [reps] [threads...]
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [modelPath, inputsPath, repsArg, ...threadArgs] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(process.env.ORT_DIR), 'package.json'));
const ort = require('onnxruntime-node');
const version = require('onnxruntime-node/package.json').version;
const reps = Number(repsArg || 5);
const threadCounts = threadArgs.length ? threadArgs.map(Number) : [1, 2];
const SR = 16000;
const label = process.env.ORT_LABEL || 'ort'; // ort-int8 for the quantised model
// $BENCH_GIGAAM_SECONDS: only that length
const lengths = [10, 30].filter((s) => !process.env.BENCH_GIGAAM_SECONDS || s === Number(process.env.BENCH_GIGAAM_SECONDS));

// The F32 tensors of a safetensors file, by name (copied, so aligned).
function readSafetensors (file) {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.toString('utf8', 8, 8 + n));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__' || t.dtype !== 'F32') continue;
    const [begin, end] = t.data_offsets;
    const bytes = buf.subarray(8 + n + begin, 8 + n + end);
    const data = new Float32Array((end - begin) / 4);
    new Uint8Array(data.buffer).set(bytes);
    out[name] = { shape: t.shape, data };
  }
  return out;
}

const inputs = readSafetensors(inputsPath);
const feeds = (samples) => ({
  wav: new ort.Tensor('float32', samples, [1, samples.length]),
  lengths: new ort.Tensor('int64', BigInt64Array.from([BigInt(samples.length)]), [1]),
});
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

console.log(`onnxruntime-node ${version}, ${path.basename(modelPath)}`);
for (const threads of threadCounts) {
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const createS = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`${label} ${threads} thread(s): session created in ${createS.toFixed(2)} s`);
  if (threads === threadCounts[0]) {
    const ref = inputs['check.encoded'];
    const got = (await session.run(feeds(inputs['audio.check'].data))).encoded;
    if (got.dims.join() !== ref.shape.join())
      throw new Error(`check: output ${got.dims} expected ${ref.shape}`);
    let err = 0, big = 0;
    for (let i = 0; i < ref.data.length; i++) {
      err = Math.max(err, Math.abs(got.data[i] - ref.data[i]));
      big = Math.max(big, Math.abs(ref.data[i]));
    }
    console.log(`${label} check: ${got.dims.join('x')} encoder output of 2 s, max abs error ${err.toExponential(2)} against the float64 reference (${(err / big).toExponential(2)} of its max |x|)`);
  }
  for (const seconds of lengths) {
    const samples = inputs['audio.bench'].data.slice(0, seconds * SR);
    const f = feeds(samples);
    await session.run(f);
    const times = [];
    for (let r = 0; r < reps; r++) {
      const s0 = process.hrtime.bigint();
      await session.run(f);
      times.push(Number(process.hrtime.bigint() - s0) / 1e9);
    }
    console.log(`RESULT ${label} threads=${threads} seconds=${seconds} median=${median(times).toFixed(4)} min=${Math.min(...times).toFixed(4)}`);
  }
  await session.release();
}
