#!/usr/bin/env bash
# Builds the DocC catalog of the Sluice module with the toolchain's `docc` and fails on any warning: unresolved
# symbol links in the catalog's articles and in the `///` comments of Sources/Sluice, missing articles, and
# other diagnostics. No swift-docc-plugin: the package has no dependencies.
#
#   bash scripts/docs.sh                # writes docs-output/Sluice.doccarchive
#   SLUICE_DOCS_OUTPUT=/tmp/x bash scripts/docs.sh
#
# Browse the result with a static file server, or open the archive in Xcode.
set -euo pipefail
cd "$(dirname "$0")/.."

output="${SLUICE_DOCS_OUTPUT:-docs-output}"
symbol_graphs=".build-docs/docs-symbol-graphs"

# Find docc next to the swift driver (the toolchain's), or on PATH.
docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
if [[ ! -x "$docc" ]]; then
    docc="$(command -v docc || xcrun --find docc 2>/dev/null || true)"
fi
if [[ -z "$docc" || ! -x "$docc" ]]; then
    echo "docs.sh: docc not found next to swift or on PATH" >&2
    exit 1
fi

echo "== symbol graphs (public symbols of Sluice)"
# Builds the Sluice module alone, in a build folder of its own (.build-docs, so the flags below never invalidate
# .build), and has the compiler write its symbol graphs as it builds. Nothing else needs to be built first: this is
# the first command that works on a fresh clone.
all_graphs=".build-docs/symbol-graphs"
build_for_graphs() {
    swift build --target Sluice --scratch-path .build-docs \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$all_graphs" \
        -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public \
        -Xswiftc -symbol-graph-skip-synthesized-members >/dev/null
}
mkdir -p "$all_graphs"
# The compiler writes the graphs only when it compiles the module: if they are missing although the build is up to
# date (or that build folder is damaged), build again from scratch.
if ! build_for_graphs || [[ ! -f "$all_graphs/Sluice.symbols.json" ]]; then
    rm -rf .build-docs
    mkdir -p "$all_graphs"
    build_for_graphs
fi
rm -rf "$symbol_graphs"
mkdir -p "$symbol_graphs"
# Only the library: other modules are not documented here.
shopt -s nullglob
graphs=("$all_graphs"/Sluice.symbols.json "$all_graphs"/Sluice@*.symbols.json)
if [[ ${#graphs[@]} -eq 0 ]]; then
    echo "docs.sh: no symbol graph for Sluice in $all_graphs" >&2
    exit 1
fi
cp "${graphs[@]}" "$symbol_graphs/"

echo "== every public symbol is listed under Topics in Sluice.md"
# A symbol's path is its pathComponents joined with "/"; Sluice.md must link each one (``Path`` or, for an
# overload, ``Path-disambiguation``) at least as many times as there are symbols with that path.
overview="Sources/Sluice/Sluice.docc/Sluice.md"
missing=0
while IFS= read -r path; do
    wanted="$(grep -o '"pathComponents":\[[^]]*\]' "$symbol_graphs"/*.symbols.json \
        | sed -E 's/^[^[]*\[//; s/\]$//; s/","/\//g; s/"//g' | grep -cxF -- "$path" || true)"
    found="$({ grep -oF -- "\`\`$path\`\`" "$overview" || true; grep -oF -- "\`\`$path-" "$overview" || true; } | wc -l)"
    if ((found < wanted)); then
        echo "Sluice.md: ${path} is not listed under Topics (public symbols with that path: ${wanted}," \
            "links: ${found})" >&2
        missing=1
    fi
done < <(grep -ho '"pathComponents":\[[^]]*\]' "$symbol_graphs"/*.symbols.json \
    | sed -E 's/^[^[]*\[//; s/\]$//; s/","/\//g; s/"//g' | sort -u)
if ((missing)); then
    echo "docs.sh: add the symbols above to the Topics of $overview" >&2
    exit 1
fi

echo "== docc convert"
rm -rf "$output"
mkdir -p "$output"
diagnostics="$(mktemp)"
trap 'rm -f "$diagnostics"' EXIT
status=0
"$docc" convert Sources/Sluice/Sluice.docc \
    --additional-symbol-graph-dir "$symbol_graphs" \
    --fallback-display-name Sluice \
    --fallback-bundle-identifier org.sluice.Sluice \
    --fallback-default-module-kind Framework \
    --output-path "$output/Sluice.doccarchive" \
    --warnings-as-errors \
    2>&1 | tee "$diagnostics" || status=$?
# --warnings-as-errors turns warnings into errors; check the log too, so that no diagnostic slips through.
if [[ $status -ne 0 ]] || grep -qE "(warning|error):" "$diagnostics"; then
    echo "docs.sh: docc reported problems (above)" >&2
    exit 1
fi
echo "Documentation built: $output/Sluice.doccarchive"
