import Sluice

// The test domain most suites use. A file of its own, without Sluice's package-internal `Lock`: the release build of
// the usage-error tests (Tests/ReleaseUsageErrors, another package) compiles it too.

/// The state most tests use: a counter and a log of the actions that the reducer saw.
struct TestState: Sendable, Equatable {
    var count = 0
    var log: [String] = []
}

enum TestAction: Sendable, Equatable {
    case increment
    case add(Int)
    case record(String)
    case noop
}

let testReducer = Reducer<TestState, TestAction>(mutating: { state, action in
    switch action {
    case .increment: state.count += 1
    case .add(let amount): state.count += amount
    case .record(let entry): state.log.append(entry)
    case .noop: break
    }
})

/// The error of a dependency whose value cannot be built.
struct BrokenConfiguration: Error, CustomStringConvertible {
    var description: String { "no API key in the environment" }
}
