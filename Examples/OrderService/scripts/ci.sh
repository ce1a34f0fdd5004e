#!/usr/bin/env bash
# CI for the order service example: builds the package and runs its tests (not the load script).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Examples/OrderService: swift build"
swift build --build-tests

echo "== Examples/OrderService: swift test"
swift test --skip-build

echo "== Examples/OrderService: swift format lint --strict"
swift format lint --strict --recursive Package.swift Sources Tests
