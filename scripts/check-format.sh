#!/usr/bin/env bash
# Fails when a C source or header of the tree is not laid out as
# .clang-format says (Debian 12's clang-format 14, which scripts/setup.sh
# installs); prints what would change. Fix with:
#   clang-format -i $(git ls-files '*.c' '*.h')
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format is not installed (scripts/setup.sh installs it): skipped"
  exit 77
fi
if [ -d .git ] || [ -f .git ]; then
  mapfile -t files < <(git ls-files '*.c' '*.h')
else
  mapfile -t files < <(find core kernels plugin tests bench examples docs -name '*.[ch]' | sort)
fi
clang-format --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files as .clang-format lays them out"
