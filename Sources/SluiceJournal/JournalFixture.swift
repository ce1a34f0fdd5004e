#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A range of a recorded journal as a test fixture: the state before it, its actions, and the state after them.
///
/// Made by ``JournalReplay/fixture(after:through:includingStates:)`` (or `--export` of the replay command), kept
/// as JSON next to a test, and replayed there by `TestStore.replay(_:eachStep:)` of SluiceTesting: a production
/// incident becomes a regression test that runs the same actions through the reducer under test and compares
/// the states.
public struct JournalFixture<State: Codable, Action: Codable>: Codable {
    /// The reducer version that the journal's snapshots were made by, as the replay read them.
    public var reducerVersion: Int
    /// The sequence number of the state before the first action; the actions are
    /// `firstSequence + 1 ... firstSequence + actions.count`.
    public var firstSequence: UInt64
    /// The state before the first action.
    public var initialState: State
    /// The recorded actions, in order.
    public var actions: [Action]
    /// The state after the last action.
    public var finalState: State
    /// The state after each action, if the fixture was exported with them.
    public var states: [State]?

    /// Creates a fixture.
    public init(
        reducerVersion: Int = 0,
        firstSequence: UInt64,
        initialState: State,
        actions: [Action],
        finalState: State,
        states: [State]? = nil
    ) {
        self.reducerVersion = reducerVersion
        self.firstSequence = firstSequence
        self.initialState = initialState
        self.actions = actions
        self.finalState = finalState
        self.states = states
    }

    /// The sequence number of the last action (``firstSequence`` when there is none).
    public var lastSequence: UInt64 {
        firstSequence + UInt64(actions.count)
    }

    /// Reads a fixture from a JSON file.
    public init(contentsOfFile path: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes the fixture to a JSON file (keys sorted, so that a fixture kept in version control diffs well).
    public func write(toFile path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

extension JournalFixture: Equatable where State: Equatable, Action: Equatable {}
extension JournalFixture: Sendable where State: Sendable, Action: Sendable {}
