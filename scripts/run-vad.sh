#!/usr/bin/env bash
# The main job: voice activity detection on a WAV file (default: the bundled
# espeak-ng sample) with morokvad and the default model (Silero VAD v6),
# printing each speech segment. Builds the plugin and fetches the models first.
#
#   scripts/run-vad.sh [file.wav] [extra morokvad properties, e.g. model-version=v5]
set -euo pipefail
cd "$(dirname "$0")/.."
file="${1:-tests/fixtures/speech-16k.wav}"
shift || true
ninja -C build >/dev/null
./scripts/fetch-silero-models.sh >/dev/null
export GST_PLUGIN_PATH="$PWD/build/plugin"

echo "morokvad on $file:"
gst-launch-1.0 -m filesrc location="$file" ! wavparse ! audioconvert ! audioresample ! \
  morokvad "$@" ! fakesink 2>&1 |
  sed -n 's/.*type=(string)\(speech-[a-z]*\), timestamp=(guint64)\([0-9]*\).*probability=(double)\([0-9.e-]*\).*/\1 \2 \3/p' |
  awk '{ printf "  %-12s at %8.3f s  (p = %.3f)\n", $1, $2 / 1e9, $3 }'
