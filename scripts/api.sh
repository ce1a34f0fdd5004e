#!/usr/bin/env bash
# The public API of every library product of the package, recorded in API/<Module>.api.txt, one line per public
# or open declaration (scripts/api-lines.py describes a line). A change of the public API updates those files in
# the same commit, so that a review sees it and a release's version follows it (semantic versioning).
#
#   bash scripts/api.sh update   # writes API/*.api.txt from the current build
#   bash scripts/api.sh check    # fails, printing the difference, when the build's API differs from API/*.api.txt
#
# The modules are the targets of the library products in Package.swift: a new library product is recorded with no
# change here (`update` writes its file; `check` fails until it is committed). The record is that of a Linux build
# with the toolchain that CI uses; another toolchain may print some declarations differently.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
if [[ "$mode" != "update" && "$mode" != "check" ]]; then
    echo "usage: bash scripts/api.sh update|check" >&2
    exit 2
fi
export PYTHONUTF8=1 LC_ALL=C

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The targets of the library products, one per line, sorted.
swift package dump-package >"$work/package.json"
mapfile -t modules < <(python3 -c '
import json, sys
package = json.load(open(sys.argv[1]))
targets = {t for p in package["products"] if "library" in p["type"] for t in p["targets"]}
print("\n".join(sorted(targets)))
' "$work/package.json")
if [[ ${#modules[@]} -eq 0 ]]; then
    echo "api.sh: no library product in Package.swift" >&2
    exit 1
fi

echo "== api: symbol graphs of ${modules[*]}"
# Builds the package (nothing to do after `swift build`) and extracts every module's symbol graph. At the internal
# level, so that public declarations whose names start with `_` are in it too; scripts/api-lines.py keeps only the
# public and open ones. SPI declarations are included and marked.
if ! swift package dump-symbol-graph --minimum-access-level internal --include-spi-symbols \
    --skip-synthesized-members >"$work/dump.log" 2>&1; then
    cat "$work/dump.log" >&2
    echo "api.sh: swift package dump-symbol-graph failed" >&2
    exit 1
fi
graphs="$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -n 1)"
if [[ -z "$graphs" || ! -d "$graphs" ]]; then
    cat "$work/dump.log" >&2
    echo "api.sh: no symbol graph directory in the output of dump-symbol-graph" >&2
    exit 1
fi

mkdir -p "$work/API"
for module in "${modules[@]}"; do
    {
        echo "# The public API of the $module module: \`Container | declaration\`, one line per public or open"
        echo "# declaration, written by \`bash scripts/api.sh update\` (scripts/api-lines.py describes a line)."
        echo "# CI fails when the API differs from this file: a change of the API updates it in the same commit."
        python3 scripts/api-lines.py "$module" "$graphs"
    } >"$work/API/$module.api.txt"
done

if [[ "$mode" == "update" ]]; then
    mkdir -p API
    # A module that is no longer a library product leaves the record.
    find API -maxdepth 1 -name '*.api.txt' -delete
    cp "$work/API/"*.api.txt API/
    echo "api.sh: wrote $(cd API && echo *.api.txt)"
    exit 0
fi

status=0
for file in "$work/API/"*.api.txt API/*.api.txt; do
    [[ -e "$file" ]] || continue
    name="$(basename "$file")"
    if [[ ! -f "API/$name" ]]; then
        echo "api.sh: API/$name is missing (a new library product?)" >&2
        status=1
    elif [[ ! -f "$work/API/$name" ]]; then
        echo "api.sh: API/$name records a module that is not a library product" >&2
        status=1
    elif [[ "$file" == "$work/API/$name" ]] && ! diff -u --label "API/$name (committed)" \
        --label "API/$name (this build)" "API/$name" "$file"; then
        status=1
    fi
done
if ((status)); then
    echo "api.sh: the public API differs from API/*.api.txt (above: - committed, + this build)." >&2
    echo "        If the change is meant, run \`bash scripts/api.sh update\` and commit API/ with it." >&2
    exit 1
fi
echo "api.sh: the public API matches API/*.api.txt"
