#!/usr/bin/env bash
# CI for the server integrations (SluiceLogging, SluiceMetrics, SluiceLifecycle, SluiceTracing): lints, builds the
# package with its tests, and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Integrations/SluiceServer: swift format lint --strict"
swift format lint --strict --recursive Package.swift Sources Tests

# `.ci/run` sets SLUICE_SERVER_SCRATCH so that this package, Examples/OrderService and Integrations/SluicePostgres
# share one build of the server packages they all use (swift-log, swift-metrics, swift-service-lifecycle, ...).
scratch=()
if [ -n "${SLUICE_SERVER_SCRATCH:-}" ]; then scratch=(--scratch-path "$SLUICE_SERVER_SCRATCH"); fi

echo "== Integrations/SluiceServer: swift build"
swift build "${scratch[@]}" --build-tests

echo "== Integrations/SluiceServer: swift test"
timeout 600 swift test "${scratch[@]}" --skip-build
