import Foundation
import Sluice

/// What README.md's blocks use without declaring it.
extension READMESnippets {
    typealias Recorder = DocExample.Recorder

    /// What the README's `print` calls wrote, in order, for `readmeSnippetsRun`.
    static let printed = Locked<[String]>([])

    static func print(_ items: Any..., separator: String = " ") {
        printed.append(items.map { "\($0)" }.joined(separator: separator))
    }

    struct Counter: Codable, Sendable {
        var count = 0
    }

    enum CounterAction: Codable, Sendable {
        case add(Int)
    }

    static let counterReducer = Reducer<Counter, CounterAction>(mutating: { state, action in
        switch action {
        case .add(let amount): state.count += amount
        }
    })

    /// The journal section's directory: a new one under the temporary directory.
    static var dataDirectory: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sluice-readme-\(UUID().uuidString)").path
    }

    static func fetchCount() async throws -> Int {
        try await Task.sleep(for: .milliseconds(1))
        return 1
    }
}
