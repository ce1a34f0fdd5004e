import Foundation
import Testing

// Code in the documentation is compiled by this test target.
//
// How it works. Every ```swift block of README.md and of the DocC articles (Sources/*/*.docc/**/*.md) is
// copied into a generated file, Tests/SluiceTests/DocSnippets/Generated/<Document>Snippets.swift, which the test
// target compiles: a block that stops compiling breaks `swift test`. `generatedFilesMatchTheDocuments` fails when a
// generated file is out of date with its document (a block was edited, added or removed without regenerating), so
// CI cannot pass with a stale copy. After editing a Swift block, regenerate and commit the generated files:
//
//     bash scripts/update-doc-snippets.sh
//
// Conventions for writers of README.md and the articles:
//
// - ```swift          compiled. Keep the info string exactly `swift`.
// - ```swift not-compiled
//                     deliberately not compiled (a Package.swift excerpt, say). Any other info string that starts
//                     with "swift" fails the test, so that a typo cannot silently turn compilation off.
//                     Blocks in other languages (```sh, ```text, plain ```) are left alone.
// - Scope: the compiled blocks of one document are, in order, the body of one function,
//   `static func snippets() async throws` of an enum named after the document (`ThrottleSnippets` for
//   Throttle.md). A block sees what the earlier blocks of its document declared; `try` and `await` work; the
//   function is compiled, and run only where a test calls it (`readmeSnippetsRun`, `articleSnippetsRun`).
// - `<!-- snippet: own-scope -->` on the line before a block (an HTML comment: neither GitHub nor DocC shows it)
//   wraps that block in `do { }`: it still sees the earlier blocks, and its declarations do not clash with later
//   ones (two independent examples that both declare `let store`).
// - Hidden setup: what a document's blocks use without declaring (a `client`, an `AppState` introduced in prose)
//   goes in Tests/SluiceTests/DocSnippets/<Document>Setup.swift, as members of an extension of the document's enum.
//   Documents that share a setup share a protocol with it in one of those files (DurabilitySetup.swift).
// - Rewrites, so that fragments compile as written: `import` lines move to the top of the file (the file always
//   imports Foundation, Sluice, SluiceTesting and Testing); `@Test` in front of a function at the block's top
//   level is dropped (a local function cannot be a test) and a call of the function (`await` for an `async` one)
//   follows the block, so that a test that runs `snippets()` runs the document's tests too; and every `let`/`var` at a block's top level is
//   followed by `_ = name`, so that a value the example only shows is not an unused variable warning.
// - Documents whose snippets run (their examples do what the prose says): README.md, ReducerComposition.md,
//   ServicesAndDependencies.md, TestingWithTestScheduler.md, PerKey.md, DeadlinesAndTimers.md,
//   EvolvingAJournaledService.md, SluiceHost.md and HostingManyStores.md (`readmeSnippetsRun` and
//   `articleSnippetsRun` below). The others need a service, an endless loop or output on standard error to run, and
//   are compiled only.
// - The generated files are not formatted (`swift-format-ignore-file`): they are the documents' code as written.

@Suite struct DocSnippetTests {
    @Test func generatedFilesMatchTheDocuments() throws {
        let sources = DocumentedSources()
        let expected = try sources.expectedFiles()
        let onDisk = try sources.filesOnDisk()
        #expect(!expected.isEmpty, "no Swift block found: are the documents where \(sources.root.path) says?")
        let hint = "regenerate: bash scripts/update-doc-snippets.sh"
        for name in expected.keys.sorted() {
            #expect(onDisk[name] != nil, "DocSnippets/Generated/\(name) is missing; \(hint)")
            if let file = onDisk[name], let wanted = expected[name], file != wanted {
                let lines = (
                    file.split(separator: "\n", omittingEmptySubsequences: false),
                    wanted.split(separator: "\n", omittingEmptySubsequences: false)
                )
                let first = zip(lines.0, lines.1).prefix { $0 == $1 }.count + 1
                Issue.record("DocSnippets/Generated/\(name) is out of date from line \(first) on; \(hint)")
            }
        }
        for name in onDisk.keys.sorted() where expected[name] == nil {
            Issue.record("DocSnippets/Generated/\(name) belongs to no document's Swift blocks; \(hint)")
        }
    }

    /// The README's quick start runs and prints what the README says it prints, in that order.
    @Test func readmeSnippetsRun() async throws {
        try await READMESnippets.snippets()
        let printed = ["count is now 1", "increment -> count 1", "count is now 42", "add(41) -> count 42"]
        #expect(READMESnippets.printed.current == printed)
        // The sentence after the quick start says so; compared with the README's lines joined, so a rewrap is fine.
        let readme = try String(
            contentsOf: DocumentedSources().root.appendingPathComponent("README.md"),
            encoding: .utf8
        ).replacingOccurrences(of: "\n", with: " ")
        let sentence = "It prints " + printed.map { "`\($0)`" }.joined(separator: ", ") + ":"
        let saysSo = readme.contains(sentence)
        #expect(saysSo, "README.md does not say what the quick start prints: \(sentence)")
    }

    /// The articles whose examples are self-contained run too; their example tests record their failures here.
    @Test func articleSnippetsRun() async throws {
        try await ReducerCompositionSnippets.snippets()
        try await ServicesAndDependenciesSnippets.snippets()
        try await TestingWithTestSchedulerSnippets.snippets()
        try await PerKeySnippets.snippets()
        try await DeadlinesAndTimersSnippets.snippets()
        defer { try? FileManager.default.removeItem(atPath: EvolvingAJournaledServiceSnippets.dataDirectory) }
        try await EvolvingAJournaledServiceSnippets.snippets()
        try await SluiceHostSnippets.snippets()
        try await HostingManyStoresSnippets.snippets()
    }

    // The extractor itself, on small documents.

    @Test func blocksOfOneDocumentShareAScopeInOrder() throws {
        let markdown = """
            Text.

            ```swift
            import Observation
            let a = 1
            ```

            ```sh
            swift test
            ```

              ```swift
              @Test func b() { #expect(a == 1) }
              ```
            """
        let source = try #require(try DocSnippetExtractor.source(of: markdown, document: "Docs/Some Thing.md"))
        #expect(source.contains("import Foundation\nimport Observation\nimport Sluice\n"))
        #expect(source.contains("enum SomeThingSnippets {\n    static func snippets() async throws {"))
        #expect(
            source.contains(
                """
                        // Docs/Some Thing.md:4
                        let a = 1
                        _ = a

                        // Docs/Some Thing.md:13
                        func b() { #expect(a == 1) }
                        b()
                    }
                """
            )
        )
        #expect(!source.contains("    swift test\n"))
    }

    @Test func ownScopeWrapsTheBlockInDo() throws {
        let markdown = """
            ```swift
            let store = 1
            ```
            <!-- snippet: own-scope -->
            ```swift
            let store = 2
            ```
            """
        let blocks = try DocSnippetExtractor.blocks(in: markdown, document: "A.md")
        #expect(
            blocks == [
                .init(line: 2, code: ["let store = 1"]), .init(line: 6, code: ["let store = 2"], ownScope: true),
            ]
        )
        let source = try #require(try DocSnippetExtractor.source(of: markdown, document: "A.md"))
        #expect(source.contains("        do {\n            let store = 2\n            _ = store\n        }\n"))
    }

    @Test func notCompiledBlocksAreSkippedAndUnknownSwiftInfoStringsFail() throws {
        let skipped = "```swift not-compiled\ndependencies: [],\n```\n"
        #expect(try DocSnippetExtractor.blocks(in: skipped, document: "A.md").isEmpty)
        #expect(try DocSnippetExtractor.source(of: skipped, document: "A.md") == nil)
        for info in ["swift-not-compiled", "Swift", "swift nocompile"] {
            #expect(throws: DocSnippetExtractor.Problem.self) {
                try DocSnippetExtractor.blocks(in: "```\(info)\nlet a = 1\n```\n", document: "A.md")
            }
        }
    }

    @Test func misplacedDirectivesAndOpenFencesFail() {
        let documents = [
            "<!-- snippet: own-scope -->\nText.\n```swift\nlet a = 1\n```\n",
            "<!-- snippet: own-scope -->\n```text\nx\n```\n",
            "<!-- snippet: isolated -->\n```swift\nlet a = 1\n```\n",
            "```swift\nlet a = 1\n",
            "Text.\n<!-- snippet: own-scope -->\n",
        ]
        for markdown in documents {
            #expect(throws: DocSnippetExtractor.Problem.self) {
                try DocSnippetExtractor.blocks(in: markdown, document: "A.md")
            }
        }
    }
}
