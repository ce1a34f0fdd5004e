import Dispatch
import Foundation
import Sluice
import SluiceJournal
import Testing

/// The edges of a journal's and a store's life: refusal, a dropped action, close, cancellation, a failed write, and
/// producers that fill Swift's cooperative pool.
@Suite struct JournalLifeTests {
    static let modes: [JournalDurability] = [.everyAction, .none, .groupCommit(interval: .zero)]

    @Test(arguments: modes)
    func aRefusedActionIsNeverAcknowledged(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: durability)
            try await withWriter(journal) {
                try await store.dispatch(.add(1), durableIn: journal)
                _ = await store.shutdown(timeout: hangGuard)
                await #expect(throws: JournalError.refused) { try await store.dispatch(.add(2), durableIn: journal) }
                await #expect(throws: JournalError.refused) { try await store.send(.add(3), durableIn: journal) }
            }
            #expect(journal.lastSequence == 1)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [1]))
        }
    }

    @Test(arguments: modes)
    func anActionAMiddlewareDropsIsNeverAcknowledged(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStoreDroppingNegatives(recoveringFrom: journal, durability: durability)
            try await withWriter(journal) {
                try await store.dispatch(.add(1), durableIn: journal)
                await #expect(throws: JournalError.notRecorded) {
                    try await store.dispatch(.add(-1), durableIn: journal)
                }
                await #expect(throws: JournalError.notRecorded) { try await store.send(.add(-2), durableIn: journal) }
                try await store.send(.add(2), durableIn: journal)
                #expect(journal.durableThrough == 2)
            }
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [1, 2]))
        }
    }

    @Test(arguments: modes)
    func aClosedJournalWritesNothingAndRefusesEveryAction(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: durability)
            try await withWriter(journal) {
                for value in values.prefix(4) {
                    try await store.dispatch(.add(value), durableIn: journal)
                }
            }
            journal.close()
            let segments = try journalFiles(in: directory, prefix: "segment-")
            let bytes = try segments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }

            // The directory is free for a new owner, and the old store writes nothing into it.
            let next = try Journal(directory: directory)
            let nextStore = try ledgerStore(recoveringFrom: next, durability: .everyAction)
            await #expect(throws: JournalError.closed) { try await store.dispatch(.add(100), durableIn: journal) }
            await #expect(throws: JournalError.closed) { try await store.send(.add(101), durableIn: journal) }
            store.dispatch(.add(102))
            #expect(store.state == ledger(after: values.prefix(4)))
            #expect(journal.lastSequence == 4)
            #expect(try segments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == bytes)
            await #expect(throws: JournalError.closed) { try await journal.durable(through: 5) }
            try await journal.durable(through: 4)
            #expect(throws: JournalError.closed) { try journal.snapshot(store) }

            for value in values.suffix(6) {
                try await nextStore.dispatch(.add(value), durableIn: next)
            }
            store.dispatch(.add(103))
            next.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values))
        }
    }

    @Test func closeWakesTheTasksWaitingForDurability() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            store.dispatch(.add(1))
            // No writer runs: the waiters wait until close writes the pending action, or say it never will be.
            let recorded = Task { try await journal.durable(through: 1) }
            let beyond = Task { try await journal.durable(through: 2) }
            try await waitUntil { journal.waitingForDurability == 2 }
            journal.close()
            try await recorded.value
            await #expect(throws: JournalError.closed) { try await beyond.value }
            #expect(try recoverLedger(from: directory).state == ledger(after: [1]))
        }
    }

    @Test func aCancelledWaitForDurabilityEndsAtOnce() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            store.dispatch(.add(1))
            let waiter = Task { try await journal.durable(through: 1) }
            try await waitUntil { journal.waitingForDurability == 1 }
            waiter.cancel()
            await #expect(throws: JournalError.cancelled) { try await waiter.value }
            #expect(journal.waitingForDurability == 0)
            // Cancelled before it waits: the same.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await journal.durable(through: 1)
            }
            await #expect(throws: JournalError.cancelled) { try await early.value }
            journal.close()
            #expect(journal.durableThrough == 1)
        }
    }

    /// More producers than the cooperative pool has threads, each dispatching (a blocking call) or sending without
    /// a pause, past the pending limit, with the writer started as a task: the producer that meets the limit waits
    /// holding the store's lock, the others wait for that lock, and every thread of the pool is taken. The writer
    /// runs on a thread of its own, so it still drains the batch.
    @Test(arguments: [false, true])
    func producersThatFillTheCooperativePoolDoNotStopTheWriter(sending: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            // A low limit, so that the producers meet it within a few thousand actions: while they fill the pool,
            // every other test of the process waits for a thread.
            journal.limitPendingActions(to: 512)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            let producers = max(8, 4 * ProcessInfo.processInfo.activeProcessorCount)
            let perProducer = 8_000 / producers + 1
            let total = producers * perProducer
            // Four hang guards: the actions through the journal take far longer under the thread sanitizer on a
            // loaded machine.
            let watchdog = Watchdog(
                seconds: 4 * Int(hangGuardSeconds),
                "producersThatFillTheCooperativePoolDoNotStopTheWriter: no progress (the writer never ran)"
            )
            defer { watchdog.disarm() }
            let writer = Task { try await journal.run() }
            await withTaskGroup(of: Void.self) { group in
                for producer in 0..<producers {
                    group.addTask {
                        for index in 0..<perProducer {
                            if sending {
                                await store.send(.add(producer &* perProducer &+ index))
                            } else {
                                store.dispatch(.add(producer &* perProducer &+ index))
                            }
                        }
                    }
                }
            }
            try await journal.durable(through: UInt64(total))
            writer.cancel()
            try await writer.value
            #expect(store.state.count == total)
            let live = store.state
            journal.close()
            #expect(try recoverLedger(from: directory).state == live)
        }
    }

    @Test func aFailedGroupCommitLeavesTheFailedBatchOnlyInTheLiveState() async throws {
        try await withTemporaryDirectory { directory in
            let storage = FailingStorage(FileJournalStorage(directory: directory), failAppendNumber: 2)
            let journal = try Journal(storage: storage)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            let diskFull = JournalError.io(operation: "write", path: directory, errno: ENOSPC)
            try await withWriter(journal) {
                try await store.dispatch(.add(1), durableIn: journal)
                // Reduced before its batch failed: in the live state, never acknowledged, not in the log.
                await #expect(throws: diskFull) { try await store.dispatch(.add(2), durableIn: journal) }
                // From then on refused before the reducer.
                await #expect(throws: diskFull) { try await store.dispatch(.add(3), durableIn: journal) }
            }
            #expect(store.state == ledger(after: [1, 2]))
            #expect(journal.durableThrough == 1)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [1]))
        }
    }
}

private let values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]

/// Polls `condition` until it holds, as a hang guard for what has no event to await (a task that started waiting).
private func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + hangGuard
    while !condition() {
        try #require(ContinuousClock.now < deadline, "the condition did not hold within \(hangGuard)")
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// Ends the test process with a message if it is not disarmed in time: a test that can deadlock the cooperative
/// pool cannot time itself out from a task, since no task would run.
private final class Watchdog: Sendable {
    private let armed = Locked(true)

    init(seconds: Int, _ message: String) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [armed] in
            if armed.current {
                FileHandle.standardError.write(Data("error: \(message)\n".utf8))
                exit(1)
            }
        }
    }

    func disarm() {
        armed.withValue { $0 = false }
    }
}
