#!/usr/bin/env bash
# Fetches the Silero VAD ONNX models (v4, v5, v6) into a folder, checking
# each file's sha256.
#
# Usage: scripts/fetch-silero-models.sh [TARGET_DIR]   (default: models/)
#
# The files come from the npm package @ricky0123/vad-web, pinned below, which
# ships the upstream silero-vad ONNX files byte for byte. Nothing is downloaded
# when all three files are already in TARGET_DIR with the right hashes.
set -euo pipefail

PACKAGE="@ricky0123/vad-web@0.0.31"

# installed name | file inside the package | sha256
MODELS=(
  "silero_vad_v6.onnx|package/dist/silero_vad_v6.onnx|1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"
  "silero_vad_v5.onnx|package/dist/silero_vad_v5.onnx|2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
  "silero_vad_v4.onnx|package/dist/silero_vad_legacy.onnx|a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28"
)

repo_root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:-$repo_root/models}"

die () { echo "fetch-silero-models: $*" >&2; exit 1; }

sha_of () { sha256sum "$1" | cut -d' ' -f1; }

all_present () {
  local entry name sum
  for entry in "${MODELS[@]}"; do
    IFS='|' read -r name _ sum <<<"$entry"
    [ -f "$target/$name" ] || return 1
    [ "$(sha_of "$target/$name")" = "$sum" ] || return 1
  done
}

if all_present; then
  echo "fetch-silero-models: $target already holds v4, v5 and v6"
  exit 0
fi

command -v npm >/dev/null || die "npm is not installed (Debian: apt-get install npm)"
mkdir -p "$target"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "fetch-silero-models: fetching $PACKAGE"
tarball="$(cd "$tmp" && npm pack --silent "$PACKAGE" | tail -n 1)"
[ -f "$tmp/$tarball" ] || die "npm pack $PACKAGE did not produce a tarball"

for entry in "${MODELS[@]}"; do
  IFS='|' read -r name member sum <<<"$entry"
  tar -xzf "$tmp/$tarball" -C "$tmp" "$member" \
    || die "$PACKAGE has no $member"
  got="$(sha_of "$tmp/$member")"
  if [ "$got" != "$sum" ]; then
    die "$member: sha256 mismatch: expected $sum, got $got"
  fi
  # Copy, then rename, so an interrupted run never leaves a partial file.
  cp "$tmp/$member" "$target/.$name.part"
  mv -f "$target/.$name.part" "$target/$name"
  echo "fetch-silero-models: $target/$name ok"
done
