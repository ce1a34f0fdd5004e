#!/usr/bin/env bash
# Regenerates Tests/SluiceTests/DocSnippets/Generated/ from the ```swift blocks of README.md and of the DocC
# articles. Run it after changing such a block, and commit the result: `swift test` compiles the generated files
# (so a block that does not compile fails the tests) and fails when they are out of date with the documents
# (DocSnippetTests). The conventions (scopes, own-scope blocks, hidden setup, not-compiled blocks) are described
# at the top of Tests/SluiceTests/DocSnippetTests.swift.
#
# The generator is Tests/SluiceTests/DocSnippets/DocSnippetExtractor.swift, compiled here on its own: the test
# target may not compile while a generated file is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp Tests/SluiceTests/DocSnippets/DocSnippetExtractor.swift "$work/"
cat >"$work/main.swift" <<'SWIFT'
import Foundation

let sources = DocumentedSources(root: URL(fileURLWithPath: CommandLine.arguments[1]))
do {
    let expected = try sources.expectedFiles()
    let onDisk = try sources.filesOnDisk()
    try sources.regenerate(expected, replacing: onDisk)
    let changed = Set(expected.keys).union(onDisk.keys).filter { expected[$0] != onDisk[$0] }.sorted()
    print(changed.isEmpty ? "update-doc-snippets: up to date" : "update-doc-snippets: wrote \(changed)")
} catch {
    FileHandle.standardError.write(Data("update-doc-snippets: \(error)\n".utf8))
    exit(1)
}
SWIFT
swiftc -swift-version 6 -o "$work/update-doc-snippets" "$work/DocSnippetExtractor.swift" "$work/main.swift"
"$work/update-doc-snippets" "$PWD"
