import Sluice

/// What README.md's blocks use without declaring it.
extension READMESnippets {
    typealias Recorder = DocExample.Recorder

    /// What the README's `print` calls wrote, in order, for `readmeSnippetsRun`.
    static let printed = Locked<[String]>([])

    static func print(_ items: Any..., separator: String = " ") {
        printed.append(items.map { "\($0)" }.joined(separator: separator))
    }

    static func fetchCount() async throws -> Int {
        try await Task.sleep(for: .milliseconds(1))
        return 1
    }
}
