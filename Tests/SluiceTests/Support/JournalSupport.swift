import Foundation
import Sluice
import SluiceJournal

/// The journal tests' state: the count, the sum and an order-sensitive digest of the values added.
struct LedgerState: Codable, Equatable, Sendable {
    var count = 0
    var sum = 0
    var digest: UInt64 = 0
}

enum LedgerAction: Codable, Equatable, Sendable {
    case add(Int)
}

let ledgerReducer = Reducer<LedgerState, LedgerAction>(mutating: { state, action in
    switch action {
    case .add(let value):
        state.count += 1
        state.sum += value
        state.digest = state.digest &* 31 &+ UInt64(bitPattern: Int64(value))
    }
})

/// The state after adding `values` in order, computed without a store or a journal.
func ledger(after values: some Sequence<Int>) -> LedgerState {
    var state = LedgerState()
    for value in values {
        ledgerReducer.reduce(into: &state, .add(value))
    }
    return state
}

/// A new empty directory that is removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-journal-\(UUID().uuidString)")
        .path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// The journal files in `directory` whose name starts with `prefix`, sorted.
func journalFiles(in directory: String, prefix: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(prefix) }.sorted()
        .map { directory + "/" + $0 }
}

/// Changes the bytes of a file.
func modifyFile(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    change(&bytes)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The size of a file in bytes.
func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
}

/// Writes `values` through a store journaling with `.everyAction` to a fresh journal in `directory`, then closes it.
func writeLedger(
    _ values: [Int],
    to directory: String,
    segmentSize: Int = 64 << 20,
    snapshotAfter: Set<Int> = []
) throws {
    let journal = try Journal(storage: FileJournalStorage(directory: directory, segmentSize: segmentSize))
    let store = try Store<LedgerState, LedgerAction>(
        recoveringFrom: journal,
        durability: .everyAction,
        initialState: LedgerState(),
        reducer: ledgerReducer
    )
    for (index, value) in values.enumerated() {
        store.dispatch(.add(value))
        if snapshotAfter.contains(index + 1) {
            try journal.snapshot(store)
        }
    }
    journal.close()
}

/// Recovers the ledger from `directory`.
func recoverLedger(
    from directory: String,
    segmentSize: Int = 64 << 20
) throws(JournalError) -> (state: LedgerState, recovery: JournalRecovery) {
    let journal = try Journal(storage: FileJournalStorage(directory: directory, segmentSize: segmentSize))
    defer { journal.close() }
    return try Store<LedgerState, LedgerAction>.recover(
        from: journal,
        initialState: LedgerState(),
        reducer: ledgerReducer
    )
}

/// A ledger store recovered from `journal` (empty or not), which journals with `durability`.
func ledgerStore(
    recoveringFrom journal: Journal,
    durability: JournalDurability
) throws -> Store<LedgerState, LedgerAction> {
    try Store<LedgerState, LedgerAction>(
        recoveringFrom: journal,
        durability: durability,
        initialState: LedgerState(),
        reducer: ledgerReducer
    )
}

/// Runs `body` with the journal's writer running (every durability mode runs it, as a service would).
func withWriter<T>(_ journal: Journal, _ body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await journal.run() }
        defer { group.cancelAll() }
        return try await body()
    }
}

/// A ledger store recovered from `journal` behind a middleware that drops every negative `.add` before the
/// journal and the reducer: for what happens to an action the journal never recorded.
func ledgerStoreDroppingNegatives(
    recoveringFrom journal: Journal,
    durability: JournalDurability
) throws -> Store<LedgerState, LedgerAction> {
    let dropNegatives = Middleware<LedgerState, LedgerAction> { _ in
        { next in
            { action in
                if case .add(let value) = action, value < 0 { return }
                next(action)
            }
        }
    }
    return try Store<LedgerState, LedgerAction>(
        recoveringFrom: journal,
        durability: durability,
        initialState: LedgerState(),
        reducer: ledgerReducer,
        middleware: [dropNegatives]
    )
}
