import Dispatch
import Foundation
import Sluice
import SluiceJournal
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The edges of a journal that attacks found: a journal released without `close()`, a writer asleep in its
/// group-commit interval, crafted file names, temporary snapshot files left by a crash, a directory holding only a
/// snapshot, and the reason a snapshot was skipped.
@Suite struct JournalEdgeTests {
    // MARK: Released without close()

    /// A store and its journal released without `close()` give up the directory: it opens again at once, and the
    /// `.groupCommit` actions that no writer wrote are in it.
    @Test(arguments: [JournalDurability.groupCommit(interval: .zero), .everyAction, .none])
    func aJournalReleasedWithItsStoreGivesUpItsDirectory(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            for round in 1...5 {
                do {
                    let journal = try Journal(storage: FileJournalStorage(directory: directory, lockWait: .zero))
                    let store = try ledgerStore(recoveringFrom: journal, durability: durability)
                    store.dispatch(.add(round))
                    #expect(store.state == ledger(after: Array(1...round)))
                }
                #expect(try recoverLedger(from: directory).state == ledger(after: Array(1...round)))
            }
        }
    }

    /// The same through `Middlewares.journal` on an empty journal, the other way a store records.
    @Test func aJournalReleasedWithItsMiddlewareStoreGivesUpItsDirectory() async throws {
        try await withTemporaryDirectory { directory in
            do {
                let journal = try Journal(storage: FileJournalStorage(directory: directory, lockWait: .zero))
                let store = Store<LedgerState, LedgerAction>(
                    initialState: LedgerState(),
                    reducer: ledgerReducer,
                    middleware: [Middlewares.journal(journal, durability: .groupCommit(interval: .zero))]
                )
                store.dispatch(.add(7))
            }
            #expect(try recoverLedger(from: directory).state == ledger(after: [7]))
        }
    }

    #if os(Linux)
    /// Opening and releasing a journal with its store many times leaks no file descriptor.
    @Test func openingAndReleasingLeaksNoDescriptor() async throws {
        try await withTemporaryDirectory { directory in
            // Only the descriptors of files in this journal's directory: other suites open and close files in the
            // same process meanwhile, which made a count of every descriptor flaky.
            func openDescriptors() throws -> Int {
                try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { fd in
                    let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
                    return target?.hasPrefix(directory) == true
                }
            }
            func openAndRelease() throws {
                let journal = try Journal(storage: FileJournalStorage(directory: directory, lockWait: .zero))
                let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
                store.dispatch(.add(1))
            }
            try openAndRelease()
            let before = try openDescriptors()
            for _ in 0..<50 {
                try openAndRelease()
            }
            // Other suites open files meanwhile: allow a few, not one or two per round.
            #expect(try openDescriptors() - before < 20)
            #expect(try recoverLedger(from: directory).recovery.lastSequence == 51)
        }
    }
    #endif

    /// After its store shut down, a journal refuses an action that reaches it (its pending actions are written).
    @Test func aJournalDetachedAtShutdownWritesWhatWasPending() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .seconds(3600)))
            store.dispatch(.add(1))
            store.dispatch(.add(2))
            #expect(journal.durableThrough == 0)
            _ = await store.shutdown(timeout: hangGuard)
            #expect(journal.durableThrough == 2)
            try await journal.durable(through: 2)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [1, 2]))
        }
    }

    // MARK: The writer's interval

    /// `close()` and cancelling `run()` end the writer at once, not after its group-commit interval.
    @Test(arguments: [Duration.seconds(3600), .seconds(Int64.max)])
    func theWriterStopsWithoutWaitingOutItsInterval(interval: Duration) async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: interval))
            // Cancelled: the writer writes what is pending and returns.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await journal.run() }
                store.dispatch(.add(1))
                // The writer is in its interval once it has been woken for the pending action.
                #expect(await waitUntil { journal.isGatheringForTests })
                group.cancelAll()
                try await group.waitForAll()
            }
            #expect(journal.durableThrough == 1)
            // Closed: the same.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await journal.run() }
                store.dispatch(.add(2))
                #expect(await waitUntil { journal.isGatheringForTests })
                journal.close()
                try await group.waitForAll()
            }
            #expect(journal.durableThrough == 2)
            #expect(try recoverLedger(from: directory).state == ledger(after: [1, 2]))
        }
    }

    // MARK: Crafted file names

    /// A segment named for sequence 0 (sequences start at 1) is refused with an error naming it.
    @Test(arguments: [false, true])
    func aSegmentNamedForSequenceZeroIsRefused(hasHeader: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let name = "segment-" + String(repeating: "0", count: 20) + ".log"
            let bytes: [UInt8] = hasHeader ? Array("SLUICEJ1".utf8) : []
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
            #expect(throws: JournalError.badFileName(file: directory + "/" + name)) {
                _ = try Journal(directory: directory)
            }
        }
    }

    /// A snapshot named for the largest sequence number is refused, checksummed or not, with an error naming it.
    @Test func aSnapshotNamedForTheLargestSequenceIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let source = try Journal(storage: FileJournalStorage(directory: directory + "/source"))
            try source.storage.writeSnapshot(
                JournalSnapshot(
                    sequence: .max,
                    reducerVersion: 0,
                    payload: try JournalPayloadCoder().encode(LedgerState())
                )
            )
            source.close()
            let name = "snapshot-18446744073709551615.snap"
            try FileManager.default.createDirectory(atPath: directory + "/target", withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: directory + "/source/" + name,
                toPath: directory + "/target/" + name
            )
            #expect(throws: JournalError.badFileName(file: directory + "/target/" + name)) {
                _ = try Journal(directory: directory + "/target")
            }
        }
    }

    // MARK: Temporary snapshot files

    /// A temporary snapshot file that a killed write left behind is removed when the journal opens.
    @Test func aTemporarySnapshotFileIsRemovedOnOpen() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger([1, 2, 3], to: directory)
            let temporary = directory + "/snapshot-00000000000000000003.snap.tmp"
            try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: temporary))
            let journal = try Journal(directory: directory)
            #expect(!FileManager.default.fileExists(atPath: temporary))
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [1, 2, 3]))
        }
    }

    // MARK: A directory holding only a snapshot

    /// Recovery and replay agree on a journal that holds a snapshot and no record (as seeding a new journal from a
    /// replayed state leaves it).
    @Test func replayAndRecoveryAgreeOnASnapshotWithoutRecords() async throws {
        try await withTemporaryDirectory { directory in
            let seeded = ledger(after: [4, 5, 6])
            let journal = try Journal(directory: directory)
            try journal.storage.writeSnapshot(
                JournalSnapshot(sequence: 3, reducerVersion: 0, payload: try JournalPayloadCoder().encode(seeded))
            )
            journal.close()

            let recovered = try recoverLedger(from: directory)
            #expect(recovered.state == seeded)
            #expect(recovered.recovery.lastSequence == 3)

            let replay = try JournalReplay<LedgerState, LedgerAction>(
                directory: directory,
                initialState: LedgerState(),
                reducer: ledgerReducer
            )
            #expect(replay.firstSequence == 3)
            #expect(replay.lastSequence == 3)
            #expect(try replay.state(at: 3) == seeded)
            #expect(throws: JournalError.self) { try replay.state(at: 2) }
        }
    }

    // MARK: Why a snapshot was skipped

    /// A snapshot of another reducer version whose records were compacted away: recovery throws an error that names
    /// the snapshot, why it was skipped and what to do, not only "records missing".
    @Test func aSkippedSnapshotWhoseRecordsAreGoneIsNamedInTheError() async throws {
        try await withTemporaryDirectory { directory in
            // Two snapshots, so that compaction removes the segments before the older one.
            try writeLedger(Array(1...40), to: directory, segmentSize: 64, snapshotAfter: [20, 30])
            #expect(try journalFiles(in: directory, prefix: "segment-").count < 40)
            let journal = try Journal(directory: directory)
            defer { journal.close() }
            do throws(JournalError) {
                _ = try Store<LedgerState, LedgerAction>.recover(
                    from: journal,
                    reducerVersion: 2,
                    initialState: LedgerState(),
                    reducer: ledgerReducer
                )
                Issue.record("recovery started from the initial state with records missing")
            } catch .notRecoverable(let failure) {
                #expect(failure.skipped.map(\.sequence) == [30, 20])
                #expect(failure.skipped.allSatisfy { $0.reducerVersion == 0 && !$0.coveredRecordsExist })
                #expect(failure.description.contains("the snapshot at 30 (reducer version 0)"))
                #expect(failure.description.contains("the records it covers are gone"))
                #expect(failure.remedy.contains("declare a state migration from version 0"))
            } catch {
                Issue.record("unexpected error: \(error)")
            }
        }
    }

    /// A snapshot that cannot be decoded is reported with the decoding error, not only as a skipped sequence.
    @Test func aSkippedSnapshotSaysWhyItWasSkipped() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            try journal.storage.writeSnapshot(
                JournalSnapshot(
                    sequence: 0,
                    reducerVersion: 0,
                    payload: try JournalPayloadCoder().encode("not a ledger")
                )
            )
            journal.close()
            let reopened = try Journal(directory: directory)
            defer { reopened.close() }
            let (state, recovery) = try Store<LedgerState, LedgerAction>.recover(
                from: reopened,
                initialState: LedgerState(),
                reducer: ledgerReducer
            )
            #expect(state == LedgerState())
            #expect(recovery.skippedSnapshots == [0])
            let skipped = try #require(recovery.skipped.first)
            #expect(skipped.sequence == 0)
            #expect(skipped.reducerVersion == 0)
            guard case .undecodable(0, let description) = skipped.error else {
                Issue.record("expected the decoding error, got \(skipped.error)")
                return
            }
            // The decoder's own words: what it expected, not a generic "does not decode".
            #expect(description != "the snapshot does not decode")
            #expect(!description.isEmpty)
        }
    }
}
