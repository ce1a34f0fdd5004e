import Sluice

/// What a follower's ``PostgresFollower/store`` receives: one record of the writer's stream (the writer's action
/// and its sequence number), or the snapshot that the follower started from.
///
/// Only the follower makes them: the type has no public initializer, so code that holds the follower's store can
/// read it, scope it and subscribe to it like any store, but cannot dispatch into the replica (it would no longer
/// equal the writer's state).
public struct FollowerRecord<State: Sendable, Action: Sendable>: Sendable {
    enum Content: Sendable {
        case action(Action)
        case snapshot(State)
    }

    let content: Content

    /// The sequence number of the writer's stream that the state covers once this record is applied.
    public let sequence: UInt64

    init(_ content: Content, sequence: UInt64) {
        self.content = content
        self.sequence = sequence
    }

    /// The writer's action; `nil` when this record replaced the state with a snapshot.
    public var action: Action? {
        if case .action(let action) = content { action } else { nil }
    }

    /// Whether this record replaced the state with a snapshot.
    public var isSnapshot: Bool {
        if case .snapshot = content { true } else { false }
    }

    /// Applies records to a replica: an action through the writer's reducer, a snapshot by replacing the state.
    static func replicaReducer(_ reducer: Reducer<State, Action>) -> Reducer<State, FollowerRecord> {
        Reducer(mutating: { state, record in
            switch record.content {
            case .action(let action): reducer.reduce(into: &state, action)
            case .snapshot(let snapshot): state = snapshot
            }
        })
    }
}
