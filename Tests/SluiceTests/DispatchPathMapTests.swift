import Foundation
import Testing

/// The contributor map `DispatchPath.md` names files and symbols of the library; a rename that forgets the map
/// fails here instead of leaving the map wrong.
@Suite struct DispatchPathMapTests {
    /// The package's folder: three levels above this file (`Tests/SluiceTests/`).
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Names the map uses for other projects' types and the standard library's, not Sluice's.
    private let foreignNames: Set<String> = ["Core", "RootCore", "ScopedCore", "Task"]

    private func article() throws -> String {
        try String(
            contentsOf: root.appendingPathComponent("Sources/Sluice/Sluice.docc/DispatchPath.md"),
            encoding: .utf8
        )
    }

    /// Every Swift and C source of the package's `Sources`, by path relative to `Sources`.
    private func sources() throws -> [String: String] {
        let base = root.appendingPathComponent("Sources")
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard ["swift", "c", "h"].contains(url.pathExtension) else { continue }
            let relative = String(url.path.dropFirst(base.path.count + 1))
            files[relative] = try String(contentsOf: url, encoding: .utf8)
        }
        return files
    }

    /// The text between backticks.
    private func codeSpans(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    @Test func everyFileTheMapNamesExists() throws {
        let files = try sources()
        let named = Set(
            try codeSpans(article()).filter { $0.hasSuffix(".swift") || $0.hasSuffix(".c") || $0.hasSuffix(".h") }
        )
        #expect(!named.isEmpty)
        for name in named.sorted() {
            let found = files.keys.contains { $0 == name || $0.hasSuffix("/" + name) }
            #expect(found, "DispatchPath.md names \(name), which is not in Sources")
        }
    }

    @Test func everySymbolTheMapNamesIsDeclared() throws {
        let all = try sources().values.joined(separator: "\n")
        let symbol = /^([A-Z][A-Za-z]*)(?:\.([a-z_][A-Za-z]*|init|deinit))?(?:\(.*\))?$/
        var checked = 0
        for span in Set(try codeSpans(article())).sorted() {
            let isFile = [".swift", ".c", ".h"].contains { span.hasSuffix($0) }
            guard !isFile, let match = span.wholeMatch(of: symbol), !foreignNames.contains(String(match.1)) else {
                continue
            }
            let type = String(match.1)
            if FileManager.default.fileExists(atPath: root.appendingPathComponent("Sources/\(type)").path) {
                checked += 1
                continue  // a module
            }
            let declaresType = ["class", "struct", "enum", "protocol", "typealias", "extension"].contains {
                all.contains("\($0) \(type)")
            }
            #expect(declaresType, "DispatchPath.md names \(type) (in `\(span)`), which Sources does not declare")
            if let member = match.2.map(String.init) {
                let declaresMember =
                    switch member {
                    case "init": all.contains("init(")
                    case "deinit": all.contains("deinit {")
                    default: ["func ", "var ", "let ", "case "].contains { all.contains($0 + member) }
                    }
                #expect(declaresMember, "DispatchPath.md names \(span), whose member Sources does not declare")
            }
            checked += 1
        }
        #expect(checked > 20, "the map names fewer symbols than expected; is the pattern still right?")
    }
}
