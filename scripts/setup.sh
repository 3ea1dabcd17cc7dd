#!/usr/bin/env bash
# Installs what Morok needs on Debian 12 (bookworm) and configures ./build.
# Idempotent: a second run only reconfigures.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PACKAGES=(
  meson ninja-build pkg-config clang clang-format libclang-rt-14-dev python3
  libglib2.0-dev libjson-glib-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  espeak-ng
  valgrind
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the Silero models (scripts/fetch-silero-models.sh); it comes
# with Debian's npm package or with a nodejs from elsewhere.
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

if [ -d build ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build >/dev/null
fi
