#!/usr/bin/env bash
# Builds and runs the `sync` load benchmark (README, Performance: "Sync under load").
#
#   Benchmarks/scripts/sync_load.sh [FIGURE...] [--backend sqlite|postgres|both] [--records N] ...
#
# SCRATCH=PATH builds in another scratch path (default: Benchmarks/.build).
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch=${SCRATCH:-Benchmarks/.build}
swift build -c release --package-path Benchmarks --scratch-path "$scratch" --product sync >&2
ulimit -n 20000 2>/dev/null || true
exec "$scratch/release/sync" "$@"
