import Foundation

// The generator of the documentation's snippets (see DocSnippetTests.swift for the conventions). It imports only
// Foundation: scripts/update-doc-snippets.sh compiles this file on its own to regenerate the files, since the test
// target may not compile while a generated file is out of date.

/// Turns the Swift blocks of one Markdown document into a Swift source file.
struct DocSnippetExtractor {
    /// A compiled block: its first code line (1-based) and its lines, without the fence's indentation.
    struct Block: Equatable {
        var line: Int
        var code: [String]
        var ownScope = false
    }

    struct Problem: Error, CustomStringConvertible {
        var document: String
        var line: Int
        var message: String
        var description: String { "\(document):\(line): \(message)" }
    }

    static let compiledInfo = "swift"
    static let notCompiledInfo = "swift not-compiled"
    static let ownScopeDirective = "<!-- snippet: own-scope -->"

    /// The compiled Swift blocks of `markdown`, in order.
    static func blocks(in markdown: String, document: String) throws -> [Block] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = []
        var pendingDirective: Int?  // the line of an own-scope directive waiting for its block
        var index = 0
        while index < lines.count {
            let line = lines[index]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("<!-- snippet") {
                guard trimmed == ownScopeDirective else {
                    throw Problem(document: document, line: index + 1, message: "unknown directive \(trimmed)")
                }
                pendingDirective = index + 1
                index += 1
                continue
            }
            guard trimmed.hasPrefix("```") else {
                if let directive = pendingDirective, !trimmed.isEmpty {
                    throw Problem(document: document, line: directive, message: "directive not before a swift block")
                }
                index += 1
                continue
            }
            let indent = line.prefix { $0 == " " }.count
            let info = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces)
            guard
                let end = lines[(index + 1)...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "```" })
            else {
                throw Problem(document: document, line: index + 1, message: "code block without its closing fence")
            }
            let code = lines[(index + 1)..<end].map { codeLine in
                String(codeLine.dropFirst(min(indent, codeLine.prefix { $0 == " " }.count)))
            }
            if info == compiledInfo {
                blocks.append(Block(line: index + 2, code: code, ownScope: pendingDirective != nil))
                pendingDirective = nil
            } else if let directive = pendingDirective {
                throw Problem(document: document, line: directive, message: "directive not before a swift block")
            } else if info != notCompiledInfo && info.lowercased().hasPrefix("swift") {
                throw Problem(
                    document: document,
                    line: index + 1,
                    message: "info string \"\(info)\": use \"\(compiledInfo)\" or \"\(notCompiledInfo)\""
                )
            }
            index = end + 1
        }
        if let directive = pendingDirective {
            throw Problem(document: document, line: directive, message: "directive not before a swift block")
        }
        return blocks
    }

    /// The enum that holds the snippets of `document` (a path): `ThrottleSnippets` for `.../Throttle.md`.
    static func namespace(of document: String) -> String {
        let base = document.split(separator: "/").last.map(String.init) ?? document
        let name = base.hasSuffix(".md") ? String(base.dropLast(3)) : base
        return name.filter { $0.isLetter || $0.isNumber } + "Snippets"
    }

    static let defaultImports = ["Foundation", "Sluice", "SluiceTesting", "Testing"]

    /// The generated source file for `document`, or `nil` when it has no compiled block.
    static func source(of markdown: String, document: String) throws -> String? {
        let blocks = try blocks(in: markdown, document: document)
        guard !blocks.isEmpty else { return nil }
        var imports = Set(defaultImports)
        var body: [String] = []
        for (number, block) in blocks.enumerated() {
            if number > 0 { body.append("") }
            body.append("// \(document):\(block.line)")
            var code: [String] = []
            var declared: [String] = []
            var tests: [String] = []
            for line in block.code {
                if let module = importedModule(line) {
                    imports.insert(module)
                    continue
                }
                if let name = declaredName(line) { declared.append(name) }
                if let call = testFunction(line) { tests.append(call) }
                code.append(withoutTestAttribute(line))
            }
            // Leading and trailing blank lines left by a moved import.
            while code.first?.isEmpty == true { code.removeFirst() }
            while code.last?.isEmpty == true { code.removeLast() }
            code += declared.map { "_ = \($0)" }
            code += tests
            if block.ownScope {
                body.append("do {")
                body += code.map(indented)
                body.append("}")
            } else {
                body += code
            }
        }
        let name = namespace(of: document)
        var file = [
            "// swift-format-ignore-file",
            "// Generated from \(document) by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).",
            "// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh",
            "",
        ]
        file += imports.sorted().map { "import \($0)" }
        file += [
            "",
            "/// The Swift blocks of \(document), in order (compiled; run only where a test calls `snippets()`).",
            "enum \(name) {",
            "    static func snippets() async throws {",
        ]
        file += body.map { indented(indented($0)) }
        file += ["    }", "}", ""]
        return file.joined(separator: "\n")
    }

    static func indented(_ line: String) -> String {
        line.isEmpty ? line : "    " + line
    }

    /// `Observation` for `import Observation` at the top level of a block.
    static func importedModule(_ line: String) -> String? {
        guard line.hasPrefix("import ") else { return nil }
        let module = line.dropFirst("import ".count).trimmingCharacters(in: .whitespaces)
        return module.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } ? module : nil
    }

    /// `store` for `let store = ...` or `var store: Store<...> = ...` at the top level of a block.
    static func declaredName(_ line: String) -> String? {
        for keyword in ["let ", "var "] where line.hasPrefix(keyword) {
            let name = line.dropFirst(keyword.count).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            return name.isEmpty ? nil : String(name)
        }
        return nil
    }

    /// The call `name()` (`await name()` for an `async` test, `try` for a throwing one) for `@Test func name() {`
    /// at the top level of a block: a test without parameters, which the generated code calls after the block, so
    /// that running `snippets()` runs the document's tests.
    static func testFunction(_ line: String) -> String? {
        guard line.hasPrefix("@Test"), let function = line.range(of: "func ") else { return nil }
        let rest = line[function.upperBound...]
        let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        guard !name.isEmpty, rest.dropFirst(name.count).hasPrefix("()") else { return nil }
        let effects = rest.dropFirst(name.count + 2)
        let call = (effects.contains("throws") ? "try " : "") + (effects.contains("async") ? "await " : "")
        return call + name + "()"
    }

    /// `func name() {` for `@Test func name() {` at the top level of a block.
    static func withoutTestAttribute(_ line: String) -> String {
        guard line.hasPrefix("@Test") else { return line }
        guard let function = line.range(of: "func ") else { return line }
        return String(line[function.lowerBound...])
    }
}

/// The documents whose Swift blocks are compiled, and where their generated files go.
struct DocumentedSources {
    let root: URL

    /// `root` is the package's folder; by default, the one that holds this file.
    init(root: URL? = nil) {
        // Tests/SluiceTests/DocSnippets/DocSnippetExtractor.swift
        let thisFile = URL(fileURLWithPath: #filePath)
        self.root =
            root
            ?? thisFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    var generatedDirectory: URL {
        root.appendingPathComponent("Tests/SluiceTests/DocSnippets/Generated")
    }

    /// README.md and every Markdown file of the DocC catalogs (`Sources/<Module>/<Module>.docc`), as paths relative
    /// to the package root.
    func documents() throws -> [String] {
        var documents = ["README.md"]
        let modules = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)
        for module in modules {
            let catalog = "Sources/\(module)/\(module).docc"
            let files = FileManager.default.enumerator(atPath: root.appendingPathComponent(catalog).path)
            while let file = files?.nextObject() as? String {
                if file.hasSuffix(".md") { documents.append(catalog + "/" + file) }
            }
        }
        return documents.sorted()
    }

    /// The expected generated files: file name to contents.
    func expectedFiles() throws -> [String: String] {
        var files: [String: String] = [:]
        for document in try documents() {
            let markdown = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            guard let source = try DocSnippetExtractor.source(of: markdown, document: document) else { continue }
            let name = DocSnippetExtractor.namespace(of: document) + ".swift"
            guard files[name] == nil else {
                throw DocSnippetExtractor.Problem(
                    document: document,
                    line: 1,
                    message: "a second document makes \(name)"
                )
            }
            files[name] = source
        }
        return files
    }

    /// The generated files on disk: file name to contents.
    func filesOnDisk() throws -> [String: String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: generatedDirectory.path)) ?? []
        var files: [String: String] = [:]
        for name in names where name.hasSuffix(".swift") {
            files[name] = try String(contentsOf: generatedDirectory.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    /// Writes the expected files and removes the stale ones.
    func regenerate(_ expected: [String: String], replacing onDisk: [String: String]) throws {
        try FileManager.default.createDirectory(at: generatedDirectory, withIntermediateDirectories: true)
        for name in onDisk.keys where expected[name] == nil {
            try FileManager.default.removeItem(at: generatedDirectory.appendingPathComponent(name))
        }
        for (name, contents) in expected where onDisk[name] != contents {
            try contents.write(to: generatedDirectory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }
}
