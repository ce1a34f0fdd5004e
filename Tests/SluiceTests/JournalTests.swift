import Foundation
import Sluice
import SluiceJournal
import Testing

@Suite struct JournalTests {
    /// Single-digit values: every record has the same size, so a test can compute a record's offset.
    private let values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
    private let segmentHeader = 8

    private func recordSize(_ segment: String, records: Int) throws -> Int {
        (try fileSize(segment) - segmentHeader) / records
    }

    @Test func crc32cMatchesKnownVectors() {
        // The check value of CRC-32C and the RFC 3720 (iSCSI) test vectors.
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
    }

    @Test func crc32cContinuesAcrossChunks() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let whole = CRC32C.checksum(bytes)
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let first = bytes[..<split].withUnsafeBytes { CRC32C.checksum($0) }
            let both = bytes[split...].withUnsafeBytes { CRC32C.checksum($0, continuing: first) }
            #expect(both == whole, "split at \(split)")
        }
    }

    @Test func crc32cOfTheProcessorMatchesTheTables() {
        // Every length up to two 8-byte words past a few alignments, then some long ones.
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 7) }
        bytes.withUnsafeBytes { buffer in
            for start in 0..<9 {
                for length in Array(0...40) + [1_000, 4_097, 65_536] {
                    let slice = UnsafeRawBufferPointer(rebasing: buffer[start..<start + length])
                    for crc: UInt32 in [0, 0xDEAD_BEEF] {
                        #expect(
                            CRC32C.checksum(slice, continuing: crc) == CRC32C.tableChecksum(slice, continuing: crc),
                            "start \(start), length \(length), crc \(crc), hardware \(CRC32C.hardware)"
                        )
                    }
                }
            }
        }
    }

    @Test func recoversEveryActionAndContinuesTheSequence() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let journal = try Journal(directory: directory)
            #expect(journal.lastSequence == 10)
            let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
            #expect(store.state == ledger(after: values))
            #expect(
                journal.recovery
                    == JournalRecovery(snapshotSequence: 0, skippedSnapshots: [], replayedActions: 10, lastSequence: 10)
            )
            store.dispatch(.add(7))
            #expect(journal.lastSequence == 11)
            #expect(journal.durableThrough == 11)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values + [7]))
        }
    }

    @Test func aSecondOpenOfTheDirectoryIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let first = try Journal(directory: directory)
            #expect(throws: JournalError.locked(directory: directory)) {
                _ = try Journal(directory: directory)
            }
            first.close()
            let second = try Journal(directory: directory)
            second.close()
        }
    }

    @Test func aTornLastRecordIsTruncated() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let segment = try #require(try journalFiles(in: directory, prefix: "segment-").first)
            let size = try fileSize(segment)
            let record = try recordSize(segment, records: 10)
            // The process died while writing the 10th record: only its first 11 bytes reached the file.
            try modifyFile(segment) { $0.removeLast(record - 11) }
            let recovered = try recoverLedger(from: directory)
            #expect(recovered.state == ledger(after: values.prefix(9)))
            #expect(recovered.recovery.lastSequence == 9)
            #expect(try fileSize(segment) == size - record)
        }
    }

    @Test func aTornRecordHeaderIsTruncated() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let segment = try #require(try journalFiles(in: directory, prefix: "segment-").first)
            let size = try fileSize(segment)
            // Half a header after the last complete record.
            try modifyFile(segment) { $0 += [9, 0, 0, 0, 11, 0, 0] }
            let journal = try Journal(directory: directory)
            #expect(journal.lastSequence == 10)
            #expect(try fileSize(segment) == size)
            let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
            store.dispatch(.add(8))
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values + [8]))
        }
    }

    @Test func aFlippedBitStopsRecoveryWithTheFileAndOffset() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let segment = try #require(try journalFiles(in: directory, prefix: "segment-").first)
            let record = try recordSize(segment, records: 10)
            let third = segmentHeader + 2 * record
            // One bit of the third record's payload.
            try modifyFile(segment) { $0[third + 18] ^= 0x04 }
            #expect(throws: JournalError.corruptRecord(file: segment, offset: third)) {
                _ = try recoverLedger(from: directory)
            }
        }
    }

    @Test func aFlippedBitInAnOlderSegmentStopsRecovery() async throws {
        try await withTemporaryDirectory { directory in
            // About three records per segment.
            try writeLedger(values, to: directory, segmentSize: 100)
            let segments = try journalFiles(in: directory, prefix: "segment-")
            #expect(segments.count > 2)
            // Flip a bit in the header (its sequence number) of the first segment's second record.
            let size = try fileSize(segments[0])
            let perRecord = (size - segmentHeader) / 3
            try modifyFile(segments[0]) { $0[segmentHeader + perRecord + 5] ^= 0x01 }
            #expect(throws: JournalError.corruptRecord(file: segments[0], offset: segmentHeader + perRecord)) {
                _ = try recoverLedger(from: directory, segmentSize: 100)
            }
        }
    }

    @Test func aMissingSegmentStopsRecovery() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory, segmentSize: 100)
            let segments = try journalFiles(in: directory, prefix: "segment-")
            #expect(segments.count > 2)
            try FileManager.default.removeItem(atPath: segments[1])
            let second = segments[1].split(separator: "-").last!.dropLast(4)
            #expect(throws: JournalError.missingRecords(expected: UInt64(second)!, file: segments[2])) {
                _ = try recoverLedger(from: directory, segmentSize: 100)
            }
        }
    }

    @Test func aTruncatedSnapshotFallsBackToThePreviousOne() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory, snapshotAfter: [4, 8])
            let snapshots = try journalFiles(in: directory, prefix: "snapshot-")
            #expect(
                snapshots.map { ($0 as NSString).lastPathComponent } == [
                    "snapshot-00000000000000000004.snap", "snapshot-00000000000000000008.snap",
                ]
            )
            try modifyFile(snapshots[1]) { $0.removeLast(3) }
            let recovered = try recoverLedger(from: directory)
            #expect(recovered.state == ledger(after: values))
            #expect(
                recovered.recovery
                    == JournalRecovery(
                        snapshotSequence: 4,
                        skippedSnapshots: [8],
                        skipped: [
                            JournalRecovery.SkippedSnapshot(
                                sequence: 8,
                                reducerVersion: nil,
                                error: .corruptRecord(file: snapshots[1], offset: 0),
                                coveredRecordsExist: true,
                                remedy: "the snapshot is damaged or unreadable; restore it from a backup if its "
                                    + "records are gone"
                            )
                        ],
                        replayedActions: 6,
                        lastSequence: 10
                    )
            )
        }
    }

    @Test func aSnapshotOfAnotherReducerVersionIsSkipped() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory, snapshotAfter: [4])
            let journal = try Journal(directory: directory)
            let recovered = try Store<LedgerState, LedgerAction>.recover(
                from: journal,
                reducerVersion: 2,
                initialState: LedgerState(),
                reducer: ledgerReducer
            )
            journal.close()
            #expect(recovered.state == ledger(after: values))
            #expect(
                recovered.recovery
                    == JournalRecovery(
                        snapshotSequence: 0,
                        skippedSnapshots: [4],
                        skipped: [
                            JournalRecovery.SkippedSnapshot(
                                sequence: 4,
                                reducerVersion: 0,
                                error: .undecodable(
                                    sequence: 4,
                                    description: "the snapshot was made by reducer version 0, this recovery reads "
                                        + "version 2 and declares no state migration from version 0"
                                ),
                                coveredRecordsExist: true,
                                remedy: "declare a state migration from version 0 (JournalMigrations().state(from: "
                                    + "0, as: <version 0's State>.self) { ... }), or recover with the build of "
                                    + "version 0"
                            )
                        ],
                        replayedActions: 10,
                        lastSequence: 10
                    )
            )
        }
    }

    @Test func snapshotsCompactTheSegmentsNoRecoveryNeeds() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values + values, to: directory, segmentSize: 100, snapshotAfter: [6, 12, 15])
            // Kept: the snapshots at 12 and 15; every segment that only holds actions up to 12 is gone.
            let snapshots = try journalFiles(in: directory, prefix: "snapshot-")
            #expect(
                snapshots.map { ($0 as NSString).lastPathComponent } == [
                    "snapshot-00000000000000000012.snap", "snapshot-00000000000000000015.snap",
                ]
            )
            let firstSegment = try #require(try journalFiles(in: directory, prefix: "segment-").first)
            #expect(firstSegment.hasSuffix("segment-00000000000000000013.log"))
            let recovered = try recoverLedger(from: directory, segmentSize: 100)
            #expect(recovered.state == ledger(after: values + values))
            #expect(recovered.recovery.snapshotSequence == 15)
            #expect(recovered.recovery.replayedActions == 5)
        }
    }

    @Test func aSubscriberCanSnapshotEverySoManyActions() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            let covered = Locked<[UInt64]>([])
            let subscription = store.subscribe { [unowned store] state in
                if state.count % 4 == 0 {
                    covered.append((try? journal.snapshot(store)) ?? 0)
                }
            }
            for value in values { store.dispatch(.add(value)) }
            subscription.cancel()
            #expect(covered.current == [4, 8])
            journal.close()
            let recovered = try recoverLedger(from: directory)
            #expect(recovered.state == ledger(after: values))
            #expect(
                recovered.recovery
                    == JournalRecovery(snapshotSequence: 8, skippedSnapshots: [], replayedActions: 2, lastSequence: 10)
            )
        }
    }

    @Test func groupCommitRecordsTheReducersOrderUnderConcurrency() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .microseconds(200)))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await journal.run() }
                await runOnThreads(8) { thread in
                    for index in 0..<500 {
                        store.dispatch(.add(thread * 1000 + index))
                    }
                }
                try await journal.durable(through: journal.lastSequence)
                #expect(journal.durableThrough == 4000)
                group.cancelAll()
            }
            let live = store.state
            journal.close()
            #expect(live.count == 4000)
            // The digest depends on the order: equal only if the journal's order is the reducer's.
            #expect(try recoverLedger(from: directory).state == live)
        }
    }

    @Test func groupCommitHoldsADispatchBackWhileTheWriterIsBehind() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            let limit = 65_536
            let finished = Locked(false)
            let producer = Thread {
                for value in 0...limit { store.dispatch(.add(value % 10)) }
                finished.withValue { $0 = true }
            }
            producer.start()
            // No writer yet: the producer records `limit` actions, then waits in its next dispatch. The journal
            // announces no recording, so this polls; the bound is two hang guards, for 65,536 dispatches under the
            // thread sanitizer.
            let deadline = ContinuousClock.now + hangGuard * 2
            while journal.lastSequence < UInt64(limit) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            #expect(journal.lastSequence == UInt64(limit))
            #expect(!finished.current)
            // Not `store.state` here: `.groupCommit` records in the reducer, so the producer waits with the store's
            // lock held, and a read of the state waits for the writer too.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await journal.run() }
                _ = await finished.wait(timeout: hangGuard * 2) { $0 }
                try await journal.durable(through: UInt64(limit + 1))
                group.cancelAll()
            }
            #expect(finished.current)
            #expect(store.state.count == limit + 1)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: (0...limit).map { $0 % 10 }))
        }
    }

    /// A dispatch wakes the writer only when it sleeps for want of actions; the first action after it went idle
    /// does, and the writer then writes it.
    @Test func groupCommitWakesAnIdleWriterWithTheFirstAction() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            try await withWriter(journal) {
                for value in values {
                    #expect(await waitUntil { journal.isWriterIdleForTests })
                    store.dispatch(.add(value))
                    try await journal.durable(through: journal.lastSequence)
                }
            }
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values))
        }
    }

    /// The writer gives the memory of a batch it wrote back to the buffer, and the next batch fills it: the actions
    /// of both are recorded in order.
    @Test func groupCommitKeepsAWrittenBatchsMemoryForTheNext() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            let first = (0..<1_000).map { $0 % 7 }
            let second = (0..<1_500).map { $0 % 5 }
            // Before the writer runs, the pending actions are one batch.
            for value in first { store.dispatch(.add(value)) }
            #expect(journal.keptCapacityForTests == 0)
            try await withWriter(journal) {
                try await journal.durable(through: 1_000)
                #expect(journal.keptCapacityForTests >= 1_000)
                for value in second { store.dispatch(.add(value)) }
                try await journal.durable(through: 2_500)
            }
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: first + second))
        }
    }

    /// With `.groupCommit(interval: .zero)` the writer yields to the senders each commit resumed before it takes
    /// the next batch; many senders acknowledged in turn all reach the log, in the reducer's order.
    @Test func groupCommitWithoutAnIntervalAcknowledgesEverySender() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            try await withWriter(journal) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for sender in 0..<16 {
                        group.addTask {
                            for index in 0..<20 {
                                try await store.send(.add(sender * 100 + index), durableIn: journal)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(journal.durableThrough == 320)
            }
            let live = store.state
            journal.close()
            #expect(live.count == 320)
            #expect(try recoverLedger(from: directory).state == live)
        }
    }

    /// A batch whose memory is larger than the buffer keeps (4 MiB) is freed once written, not kept.
    @Test func groupCommitFreesTheMemoryOfALargeBatch() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try Store<Int, WideAction>(
                recoveringFrom: journal,
                durability: .groupCommit(interval: .zero),
                initialState: 0,
                reducer: Reducer(mutating: { state, action in state &+= action.values.0 })
            )
            // 40,000 actions of 128 bytes: 5 MB in one batch.
            #expect(MemoryLayout<WideAction>.stride == 128)
            for index in 0..<40_000 { store.dispatch(WideAction(index)) }
            try await withWriter(journal) {
                try await journal.durable(through: 40_000)
                #expect(journal.keptCapacityForTests == 0)
            }
            journal.close()
        }
    }

    @Test func dispatchDurableInReturnsOnceTheActionIsSynced() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .milliseconds(5)))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await journal.run() }
                for value in values {
                    try await store.dispatch(.add(value), durableIn: journal)
                    #expect(journal.durableThrough == journal.lastSequence)
                }
                group.cancelAll()
            }
            #expect(journal.durableThrough == 10)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values))
        }
    }

    @Test func noneWritesWithoutSyncAndDurableSyncs() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .none)
            for value in values { store.dispatch(.add(value)) }
            #expect(journal.durableThrough == 0)
            try await journal.durable(through: 10)
            #expect(journal.durableThrough == 10)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values))
        }
    }

    @Test func aFailedWriteStopsTheJournalAndKeepsWhatWasRecorded() async throws {
        try await withTemporaryDirectory { directory in
            let errors = Locked<[JournalError]>([])
            let storage = FailingStorage(FileJournalStorage(directory: directory), failAppendNumber: 6)
            let journal = try Journal(storage: storage, onError: { errors.append($0) })
            let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
            for value in values { store.dispatch(.add(value)) }
            let diskFull = JournalError.io(operation: "write", path: directory, errno: ENOSPC)
            #expect(errors.current == [diskFull])
            // The failed action and every later one never reached the reducer.
            #expect(store.state == ledger(after: values.prefix(5)))
            #expect(journal.lastSequence == 5)
            await #expect(throws: diskFull) { try await journal.durable(through: 6) }
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values.prefix(5)))
        }
    }

    @Test func aFailedGroupCommitWakesTheWaitersWithTheError() async throws {
        try await withTemporaryDirectory { directory in
            let errors = Locked<[JournalError]>([])
            let storage = FailingStorage(FileJournalStorage(directory: directory), failAppendNumber: 2)
            let journal = try Journal(storage: storage, onError: { errors.append($0) })
            let store = try ledgerStore(recoveringFrom: journal, durability: .groupCommit(interval: .zero))
            let diskFull = JournalError.io(operation: "write", path: directory, errno: ENOSPC)
            await #expect(throws: diskFull) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await journal.run() }
                    store.dispatch(.add(1))
                    try await journal.durable(through: 1)
                    store.dispatch(.add(2))
                    try await journal.durable(through: 2)
                    group.cancelAll()
                }
            }
            #expect(errors.current == [diskFull])
            store.dispatch(.add(3))
            #expect(store.state == ledger(after: [1, 2]))
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: [1]))
        }
    }
}

/// A storage whose `n`th append fails as a full disk would, for the fault tests.
final class FailingStorage: JournalStorage, @unchecked Sendable {
    private let base: FileJournalStorage
    private let failAppendNumber: Int
    private let appends = Locked(0)

    init(_ base: FileJournalStorage, failAppendNumber: Int) {
        self.base = base
        self.failAppendNumber = failAppendNumber
    }

    func acquire() throws(JournalError) { try base.acquire() }
    func lastSequence() throws(JournalError) -> UInt64 { try base.lastSequence() }
    func snapshotSequences() throws(JournalError) -> [UInt64] { try base.snapshotSequences() }
    func readSnapshot(covering sequence: UInt64) throws(JournalError) -> JournalSnapshot {
        try base.readSnapshot(covering: sequence)
    }
    func readRecords(
        after sequence: UInt64,
        _ body: (UInt64, UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError) {
        try base.readRecords(after: sequence, body)
    }
    func append(_ records: [JournalRecord]) throws(JournalError) {
        let number = appends.withValue { count in
            count += 1
            return count
        }
        if number >= failAppendNumber {
            throw .io(operation: "write", path: base.directory, errno: ENOSPC)
        }
        try base.append(records)
    }
    func sync() throws(JournalError) { try base.sync() }
    func writeSnapshot(_ snapshot: JournalSnapshot) throws(JournalError) { try base.writeSnapshot(snapshot) }
    func compact(keepingSnapshots keeping: Int) throws(JournalError) { try base.compact(keepingSnapshots: keeping) }
    func close() { base.close() }
}

/// An action of 128 bytes, for the memory the group-commit buffer keeps.
private struct WideAction: Codable, Sendable {
    var values: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int)

    init(_ value: Int) {
        values = (value, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Int.self))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values.0)
    }
}
