# Sourced by bench/compare-asr.sh and bench/compare-transcriber.sh (from the
# repository root): the full-size GigaAM v3 benchmark models and audio,
# made on first use (~2.7 GB in .cache/gigaam-bench, some minutes).
dir=.cache/gigaam-bench
ctc=$dir/gigaam-v3-full.safetensors
rnnt=$dir/gigaam-v3-rnnt-full.safetensors
inputs=$dir/gigaam-asr-bench-inputs.safetensors
if ! [ -f "$ctc" ] || ! [ -f "$dir/gigaam-bench-inputs.safetensors" ]; then
  /usr/bin/python3 scripts/gigaam/make-bench-model.py "$dir"
fi
if ! [ -f "$rnnt" ] || ! [ -f "$inputs" ]; then
  /usr/bin/python3 scripts/gigaam/make-bench-asr.py "$dir"
fi
