import Foundation
import Sluice

/// What SluiceHost.md's blocks use without declaring it.
extension SluiceHostSnippets {
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

    static var dataDirectory: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sluice-host-\(UUID().uuidString)").path
    }
}
