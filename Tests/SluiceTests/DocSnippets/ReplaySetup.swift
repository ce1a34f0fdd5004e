import Foundation
import Sluice

/// What Replay.md's blocks use without declaring it: a counter's journal of three actions.
extension ReplaySnippets {
    struct Counter: Codable, Sendable, Equatable {
        var count = 0
    }

    enum CounterAction: Codable, Sendable, Equatable {
        case add(Int)
    }

    static let counterReducer = Reducer<Counter, CounterAction>(mutating: { state, action in
        switch action {
        case .add(let amount): state.count += amount
        }
    })

    static var dataDirectory: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sluice-replay-\(UUID().uuidString)").path
    }
}
