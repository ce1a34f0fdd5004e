/// One journaled action: its sequence number and its encoded bytes.
public struct JournalRecord: Sendable, Equatable {
    /// The action's position in the log, from 1, without gaps.
    public var sequence: UInt64
    /// The encoded action.
    public var payload: [UInt8]

    /// Creates a record.
    public init(sequence: UInt64, payload: [UInt8]) {
        self.sequence = sequence
        self.payload = payload
    }
}

/// A saved state and the last sequence number whose action it includes.
public struct JournalSnapshot: Sendable, Equatable {
    /// The state includes every action up to and including this sequence number.
    public var sequence: UInt64
    /// The version of the reducer that made the state, so that a store with an incompatible reducer can refuse it.
    public var reducerVersion: Int
    /// The encoded state.
    public var payload: [UInt8]

    /// Creates a snapshot.
    public init(sequence: UInt64, reducerVersion: Int, payload: [UInt8]) {
        self.sequence = sequence
        self.reducerVersion = reducerVersion
        self.payload = payload
    }
}
