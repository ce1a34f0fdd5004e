import Sluice
public import SluiceHost
public import SluiceJournal

/// The state of the host benchmarks: a `Codable` counter (the journal encodes its actions and snapshots).
public struct HostTally: Codable, Sendable {
    public var count = 0

    public init() {}
}

/// Adds each action to the count.
public let hostTallyReducer = Reducer<HostTally, Int>(mutating: { state, action in state.count &+= action })

/// A journal storage that keeps nothing: each activation starts empty, and records and snapshots are dropped. It
/// measures the host and the store (encoding included) without the cost of a file system, and keeps the memory of a
/// run that touches a million ids to the host's own.
public final class DiscardingStorage: JournalStorage {
    public init() {}
    public func acquire() throws(JournalError) {}
    public func lastSequence() throws(JournalError) -> UInt64 { 0 }
    public func snapshotSequences() throws(JournalError) -> [UInt64] { [] }
    public func readSnapshot(covering sequence: UInt64) throws(JournalError) -> JournalSnapshot {
        throw .missingRecords(expected: sequence, file: "a discarding storage")
    }
    public func readRecords(
        after sequence: UInt64,
        _ body: (_ sequence: UInt64, _ payload: UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError) {}
    public func append(_ records: [JournalRecord]) throws(JournalError) {}
    public func sync() throws(JournalError) {}
    public func writeSnapshot(_ snapshot: JournalSnapshot) throws(JournalError) {}
    public func compact(keepingSnapshots keeping: Int) throws(JournalError) {}
    public func close() {}
}

/// A host of `HostTally` stores over discarding storage, with `.none` durability (each action is encoded and handed
/// to the storage as it is reduced).
public func makeDiscardingHost(activeLimit: Int, idleTimeout: Duration? = nil) -> StoreHost<Int, HostTally, Int> {
    StoreHost(
        storage: { _ in DiscardingStorage() },
        durability: .none,
        activeLimit: activeLimit,
        idleTimeout: idleTimeout,
        initialState: { _ in HostTally() },
        reducer: hostTallyReducer
    )
}

/// A store as the host makes it, for the direct reference: `.none` durability over a discarding storage.
public func makeDirectStore() throws -> Store<HostTally, Int> {
    try Store(
        recoveringFrom: Journal(storage: DiscardingStorage()),
        durability: .none,
        initialState: HostTally(),
        reducer: hostTallyReducer
    )
}

/// A discarding host (active limit 10,000) whose stores of `ids` are active.
public func makeActiveHost(ids: some Sequence<Int>) throws -> StoreHost<Int, HostTally, Int> {
    let host = makeDiscardingHost(activeLimit: 10_000)
    for id in ids {
        try host.dispatch(0, to: id)
    }
    return host
}
