#!/usr/bin/env bash
# Builds the DocC catalogs of the Sluice, SluiceJournal and SluiceHost modules with the toolchain's `docc` and fails
# on any warning: unresolved symbol links in the catalogs' articles and in the `///` comments of Sources/Sluice,
# Sources/SluiceJournal and Sources/SluiceHost, missing articles, and other diagnostics. No swift-docc-plugin: the
# package has no dependencies.
#
#   bash scripts/docs.sh                # writes docs-output/<Module>.doccarchive for each module
#   SLUICE_DOCS_OUTPUT=/tmp/x bash scripts/docs.sh
#
# Browse the result with a static file server, or open an archive in Xcode. Each module is its own catalog: a link
# from one to the other is written in prose, since `docc convert` resolves the symbols of one module only. What
# SluiceJournal adds to Sluice's types (`Store(recoveringFrom:...)`, `Middlewares.journal`) is documented in the
# SluiceJournal catalog, under the extended module: a link to it is written ``Sluice/Store/...``.
set -euo pipefail
cd "$(dirname "$0")/.."

output="${SLUICE_DOCS_OUTPUT:-docs-output}"
modules=(Sluice SluiceJournal SluiceHost)

# Find docc next to the swift driver (the toolchain's), or on PATH.
docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
if [[ ! -x "$docc" ]]; then
    docc="$(command -v docc || xcrun --find docc 2>/dev/null || true)"
fi
if [[ -z "$docc" || ! -x "$docc" ]]; then
    echo "docs.sh: docc not found next to swift or on PATH" >&2
    exit 1
fi

echo "== symbol graphs (public symbols of ${modules[*]})"
# Builds SluiceHost, and with it SluiceJournal and Sluice, in a build folder of its own (.build-docs, so the flags
# below never invalidate .build), and has the compiler write the modules' symbol graphs as it builds them; an
# extension of another module's type gets an extension block, which DocC needs to document it. Nothing else needs to
# be built first: this is the first command that works on a fresh clone.
all_graphs=".build-docs/symbol-graphs"
build_for_graphs() {
    swift build --target SluiceHost --scratch-path .build-docs \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$all_graphs" \
        -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public \
        -Xswiftc -symbol-graph-skip-synthesized-members -Xswiftc -emit-extension-block-symbols >/dev/null
}
graphs_are_there() {
    local module
    for module in "${modules[@]}"; do
        [[ -f "$all_graphs/$module.symbols.json" ]] || return 1
    done
}
mkdir -p "$all_graphs"
# The compiler writes the graphs only when it compiles a module: if they are missing although the build is up to
# date (or that build folder is damaged), build again from scratch.
if ! build_for_graphs || ! graphs_are_there; then
    rm -rf .build-docs
    mkdir -p "$all_graphs"
    build_for_graphs
fi

# The symbols of one graph, one per line, as a Topics link names them: the path components joined with "/", after
# the extended module's name for a member that a graph `Module@Other` adds to a type of `Other`. Extension blocks
# are left out: DocC groups them under the extended type, whose members are what the overview lists.
symbol_paths() {
    local graph="$1" name prefix="" symbol='"kind":{"identifier":"[^"]*","displayName":"[^"]*"},"identifier":{"precise":"[^"]*","interfaceLanguage":"[^"]*"},"pathComponents":\[[^]]*\]'
    name="$(basename "$graph" .symbols.json)"
    if [[ "$name" == *@* ]]; then prefix="${name#*@}/"; fi
    # Every symbol must match the pattern (the compiler writes kind, identifier and path in that order): a graph
    # in another shape fails here rather than passing with symbols left unchecked.
    if [[ "$(grep -o "$symbol" "$graph" | wc -l)" -ne "$(grep -o '"pathComponents":' "$graph" | wc -l)" ]]; then
        echo "docs.sh: $graph has symbols in an unexpected shape; update symbol_paths" >&2
        return 1
    fi
    # A graph may hold no symbol at all (an extension whose members are all internal): no match is no path.
    { grep -o "$symbol" "$graph" || true; } | { grep -v '^"kind":{"identifier":"swift.extension"' || true; } \
        | sed -E 's/^.*"pathComponents":\[//; s/\]$//; s/","/\//g; s/"//g' | sed "s|^|$prefix|"
}

rm -rf "$output"
mkdir -p "$output"
diagnostics="$(mktemp)"
trap 'rm -f "$diagnostics"' EXIT
shopt -s nullglob
for module in "${modules[@]}"; do
    symbol_graphs=".build-docs/docs-symbol-graphs/$module"
    rm -rf "$symbol_graphs"
    mkdir -p "$symbol_graphs"
    # Only this module's graphs: the module itself, and what it adds to other modules' types.
    graphs=("$all_graphs/$module.symbols.json" "$all_graphs/$module"@*.symbols.json)
    cp "${graphs[@]}" "$symbol_graphs/"

    overview="Sources/$module/$module.docc/$module.md"
    echo "== every public symbol of $module is listed under Topics in $module.md"
    # $module.md must link each symbol (``Path`` or, for an overload, ``Path-disambiguation``) at least as many
    # times as there are symbols with that path.
    paths="$(for graph in "$symbol_graphs"/*.symbols.json; do symbol_paths "$graph" || exit 1; done)"
    missing=0
    while IFS= read -r path; do
        [[ -n "$path" ]] || continue
        wanted="$(grep -cxF -- "$path" <<<"$paths" || true)"
        found="$({ grep -oF -- "\`\`$path\`\`" "$overview" || true; grep -oF -- "\`\`$path-" "$overview" || true; } \
            | wc -l)"
        if ((found < wanted)); then
            echo "$module.md: ${path} is not listed under Topics (public symbols with that path: ${wanted}," \
                "links: ${found})" >&2
            missing=1
        fi
    done < <(sort -u <<<"$paths")
    if ((missing)); then
        echo "docs.sh: add the symbols above to the Topics of $overview" >&2
        exit 1
    fi

    echo "== docc convert $module"
    status=0
    "$docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$symbol_graphs" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.sluice.$module" \
        --fallback-default-module-kind Framework \
        --output-path "$output/$module.doccarchive" \
        --warnings-as-errors \
        2>&1 | tee "$diagnostics" || status=$?
    # --warnings-as-errors turns warnings into errors; check the log too, so that no diagnostic slips through.
    if [[ $status -ne 0 ]] || grep -qE "(warning|error):" "$diagnostics"; then
        echo "docs.sh: docc reported problems in $module's documentation (above)" >&2
        exit 1
    fi
    echo "Documentation built: $output/$module.doccarchive"
done
