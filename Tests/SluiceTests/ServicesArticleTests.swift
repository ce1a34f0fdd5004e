import Foundation
import Testing

/// ServicesAndDependencies.md declares a key and an extension, which cannot be compiled inside the function that
/// holds the article's snippets: the block is fenced `swift not-compiled` and declared at file scope in
/// DocSnippets/ServicesAndDependenciesSetup.swift. This checks that the two say the same, so the article's
/// declaration is compiled after all.
@Suite struct ServicesArticleTests {
    @Test func theArticlesDeclarationIsTheOneTheTestsCompile() throws {
        let root = DocumentedSources().root
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/Sluice/Sluice.docc/ServicesAndDependencies.md"),
            encoding: .utf8
        )
        let setup = try String(
            contentsOf: root.appendingPathComponent("Tests/SluiceTests/DocSnippets/ServicesAndDependenciesSetup.swift"),
            encoding: .utf8
        )
        let block = try #require(article.between("```swift not-compiled\n", and: "```\n"))
        let compiled = try #require(
            setup.between(
                "// BEGIN ServicesAndDependencies.md declaration\n",
                and: "// END ServicesAndDependencies.md declaration\n"
            )
        )
        #expect(block.contains("enum PaymentGatewayKey: StoreDependencyKey"))
        #expect(block == compiled)
    }
}

extension String {
    /// The text between the first `start` and the next `end`.
    fileprivate func between(_ start: String, and end: String) -> String? {
        guard let from = range(of: start), let to = self[from.upperBound...].range(of: end) else { return nil }
        return String(self[from.upperBound..<to.lowerBound])
    }
}
