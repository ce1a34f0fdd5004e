#!/usr/bin/env bash
# CI for the order service example: builds the package and runs its tests (not the load script).
set -euo pipefail
cd "$(dirname "$0")/.."

# `.ci/run` sets SLUICE_SERVER_SCRATCH so that this package and Integrations/SluicePostgres share one build of the
# server packages they both use.
scratch=()
if [ -n "${SLUICE_SERVER_SCRATCH:-}" ]; then scratch=(--scratch-path "$SLUICE_SERVER_SCRATCH"); fi

echo "== Examples/OrderService: swift build"
swift build "${scratch[@]}" --build-tests

echo "== Examples/OrderService: swift test"
swift test "${scratch[@]}" --skip-build

echo "== Examples/OrderService: swift format lint --strict"
swift format lint --strict --recursive Package.swift Sources Tests
