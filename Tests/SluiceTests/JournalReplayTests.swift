import Foundation
import Sluice
import SluiceJournal
import SluiceTesting
import Testing

@Suite struct JournalReplayTests {
    /// Single-digit values: every record has the same size, so a test can compute a record's offset.
    private let values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
    private let segmentHeader = 8

    private func replay(
        _ directory: String,
        reducerVersion: Int = 0
    ) throws(JournalError) -> JournalReplay<LedgerState, LedgerAction> {
        try JournalReplay(
            directory: directory,
            reducerVersion: reducerVersion,
            initialState: LedgerState(),
            reducer: ledgerReducer
        )
    }

    @Test func theStateAtEverySequenceIsTheLedgerAfterThatManyActions() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values + values, to: directory, segmentSize: 100, snapshotAfter: [7])
            let replay = try replay(directory)
            #expect(replay.firstSequence == 0)
            #expect(replay.lastSequence == 20)
            #expect(replay.damage == nil)
            #expect(replay.checkpointSequences == [0, 7])
            for sequence in 0...20 {
                #expect(try replay.state(at: UInt64(sequence)) == ledger(after: (values + values).prefix(sequence)))
            }
            for sequence in 1...20 {
                #expect(try replay.action(at: UInt64(sequence)) == .add((values + values)[sequence - 1]))
            }
            // From the snapshot at 7: three reductions, not ten.
            let before = replay.reductions
            _ = try replay.state(at: 10)
            #expect(replay.reductions - before == 3)
            #expect(throws: JournalError.self) { try replay.state(at: 21) }
            #expect(throws: JournalError.self) { try replay.action(at: 0) }
        }
    }

    @Test func aStepNamesItsActionAndTheChangeItMade() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let replay = try replay(directory)
            let step = try replay.step(at: 3)
            #expect(step.sequence == 3)
            #expect(step.action == .add(4))
            #expect(step.before == ledger(after: values.prefix(2)))
            #expect(step.after == ledger(after: values.prefix(3)))
            let changes = step.changes.map(\.description)
            #expect(changes.contains("count: 2 -> 3"))
            #expect(changes.contains("sum: 4 -> 8"))
            #expect(step.omittedChanges == 0)
            let bounded = try replay.step(at: 3, maxChanges: 1)
            #expect(bounded.changes.count == 1)
            #expect(bounded.omittedChanges == 2)
            var walked: [UInt64] = []
            try replay.forEachStep(after: 4, through: 10) { step in
                walked.append(step.sequence)
                #expect(step.after == ledger(after: values.prefix(Int(step.sequence))))
                return step.sequence < 7
            }
            #expect(walked == [5, 6, 7])
        }
    }

    @Test func aCompactedJournalStartsAtItsOldestSnapshot() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values + values, to: directory, segmentSize: 100, snapshotAfter: [6, 12, 15])
            let replay = try replay(directory)
            #expect(replay.firstSequence == 12)
            #expect(replay.lastSequence == 20)
            #expect(replay.checkpointSequences == [12, 15])
            #expect(try replay.state(at: 12) == ledger(after: (values + values).prefix(12)))
            #expect(try replay.state(at: 20) == ledger(after: values + values))
            #expect(throws: JournalError.self) { try replay.state(at: 11) }
        }
    }

    @Test func aFlippedBitIsReadUpToTheDamageAndNamed() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let segment = try #require(try journalFiles(in: directory, prefix: "segment-").first)
            let record = (try fileSize(segment) - segmentHeader) / values.count
            let third = segmentHeader + 2 * record
            try modifyFile(segment) { $0[third + 18] ^= 0x04 }
            let replay = try replay(directory)
            #expect(replay.damage == .corruptRecord(file: segment, offset: third))
            #expect(replay.lastSequence == 2)
            #expect(try replay.state(at: 2) == ledger(after: values.prefix(2)))
        }
    }

    @Test func aTornLastRecordIsLeftInPlace() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let segment = try #require(try journalFiles(in: directory, prefix: "segment-").first)
            let record = (try fileSize(segment) - segmentHeader) / values.count
            try modifyFile(segment) { $0.removeLast(record - 11) }
            let size = try fileSize(segment)
            let replay = try replay(directory)
            #expect(replay.lastSequence == 9)
            #expect(replay.damage == nil)
            #expect(try replay.state(at: 9) == ledger(after: values.prefix(9)))
            // Recovery would truncate it; a replay never writes.
            #expect(try fileSize(segment) == size)
        }
    }

    @Test func snapshotsOfAnotherReducerVersionAreNamed() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory, snapshotAfter: [4])
            let replay = try replay(directory, reducerVersion: 2)
            #expect(replay.otherVersionSnapshots == [JournalSnapshotVersion(sequence: 4, version: 0)])
            #expect(replay.checkpointSequences == [0])
            #expect(try replay.state(at: 10) == ledger(after: values))
        }
        try await withTemporaryDirectory { directory in
            // Compacted: only the snapshots of version 0 can rebuild a state, and version 3 cannot use them.
            try writeLedger(values + values, to: directory, segmentSize: 100, snapshotAfter: [6, 12, 15])
            #expect {
                try replay(directory, reducerVersion: 3)
            } throws: { error in
                guard case JournalError.undecodable(12, let description) = error else { return false }
                return description.contains("reducer version 0") && description.contains("version 3")
            }
        }
    }

    @Test func aSnapshotThatDoesNotDecodeIsSkippedWhenFirstNeeded() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory, snapshotAfter: [4])
            // Intact (its checksum matches) but not a ledger state.
            try FileJournalStorage(directory: directory)
                .writeSnapshot(JournalSnapshot(sequence: 7, reducerVersion: 0, payload: Array("[1,2]".utf8)))
            let replay = try replay(directory)
            #expect(replay.checkpointSequences == [0, 4, 7])
            #expect(replay.skippedSnapshots.isEmpty)
            #expect(try replay.state(at: 8) == ledger(after: values.prefix(8)))
            #expect(replay.checkpointSequences == [0, 4])
            #expect(replay.skippedSnapshots == [7])
            let found = replay.bisect { $0.count < 9 }
            #expect(found.failingStep?.sequence == 9)
        }
    }

    @Test func aJournalInUseIsReadWithoutItsLockAndKeepsBeingWritten() async throws {
        try await withTemporaryDirectory { directory in
            let journal = try Journal(directory: directory)
            let store = try ledgerStore(recoveringFrom: journal, durability: .everyAction)
            for value in values { store.dispatch(.add(value)) }
            let replay = try replay(directory)
            #expect(replay.lastSequence == 10)
            #expect(try replay.state(at: 10) == store.state)
            // The writer still holds the directory and goes on writing.
            #expect(throws: JournalError.locked(directory: directory)) {
                _ = try Journal(storage: FileJournalStorage(directory: directory, lockWait: .zero))
            }
            store.dispatch(.add(7))
            #expect(journal.lastSequence == 11)
            journal.close()
            #expect(try recoverLedger(from: directory).state == ledger(after: values + [7]))
        }
    }

    @Test func bisectFindsTheFirstActionAfterWhichTheInvariantFails() async throws {
        let many = (0..<400).map { $0 % 7 }
        let threshold = 700
        let firstFailing = try #require(
            (1...many.count).first { ledger(after: many.prefix($0)).sum >= threshold }
        )
        for snapshots in [Set<Int>(), [100, 200, 300]] {
            try await withTemporaryDirectory { directory in
                try writeLedger(many, to: directory, segmentSize: 1_024, snapshotAfter: snapshots)
                let replay = try replay(directory)
                let found = replay.bisect { $0.sum < threshold }
                let step = try #require(found.failingStep)
                #expect(step.sequence == UInt64(firstFailing))
                #expect(step.action == .add(many[firstFailing - 1]))
                #expect(step.before.sum < threshold && step.after.sum >= threshold)
                #expect(step.changes.map(\.path).contains("sum"))
                // O(log n) checks of the invariant.
                #expect(found.evaluations <= 12)
                // Snapshots bound the reductions by the actions between two of them.
                #expect(found.reductions <= (snapshots.isEmpty ? 2 * many.count : 2 * 100) + 1)
            }
        }
        try await withTemporaryDirectory { directory in
            try writeLedger(many, to: directory)
            let replay = try replay(directory)
            guard case .holds = replay.bisect({ $0.sum >= 0 }).outcome else {
                Issue.record("an invariant that always holds was reported broken")
                return
            }
            guard case .failsAtStart(0) = replay.bisect({ $0.count > 0 }).outcome else {
                Issue.record("an invariant broken at the initial state was not reported at sequence 0")
                return
            }
        }
    }

    @Test func aFixtureRoundTripsThroughJSONAndReplaysInATestStore() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory, snapshotAfter: [5])
            let replay = try replay(directory)
            let fixture = try replay.fixture(after: 3, through: 8, includingStates: true)
            #expect(fixture.firstSequence == 3)
            #expect(fixture.lastSequence == 8)
            #expect(fixture.initialState == ledger(after: values.prefix(3)))
            #expect(fixture.actions == values[3..<8].map { .add($0) })
            #expect(fixture.finalState == ledger(after: values.prefix(8)))
            #expect(fixture.states?.count == 5)
            let path = directory + "/fixture.json"
            try fixture.write(toFile: path)
            let loaded = try JournalFixture<LedgerState, LedgerAction>(contentsOfFile: path)
            #expect(loaded == fixture)

            let store = TestStore(replaying: loaded, reducer: ledgerReducer)
            store.replay(loaded, eachStep: true)
            #expect(store.state == ledger(after: values.prefix(8)))
            await store.finish()
        }
    }

    @Test func aTestStoreReplayNamesTheStepWhereAnotherReducerDiffers() async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger(values, to: directory)
            let fixture = try replay(directory).fixture(after: 0, through: 10, includingStates: true)
            // A "fixed" reducer that ignores 9s: the sixth action (.add(9)) leaves another state.
            let changed = Reducer<LedgerState, LedgerAction>(mutating: { state, action in
                if case .add(9) = action { return }
                ledgerReducer.reduce(into: &state, action)
            })
            var recorded: [TestStoreIssueRecorder.Issue] = []
            for eachStep in [true, false] {
                let log = IssueLog()
                await TestStoreIssueRecorder.$current.withValue({ log.append($0) }) {
                    let store = TestStore(replaying: fixture, reducer: changed)
                    store.replay(fixture, eachStep: eachStep)
                    await store.finish()
                }
                recorded += log.issues
            }
            #expect(recorded.count == 2)
            let first = try #require(recorded.first?.message)
            #expect(first.hasPrefix("replay: the state after action 6 (add(9)) is not the recorded one:"))
            #expect(first.contains("sum: expected 23, actual 14"))
            let last = try #require(recorded.last?.message)
            #expect(last.hasPrefix("replay: the 10 actions after sequence 0 do not end in the recorded state"))
        }
    }
}

/// Issues a test store reported, from any thread.
private final class IssueLog: @unchecked Sendable {
    // @unchecked: `storage` is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [TestStoreIssueRecorder.Issue] = []

    func append(_ issue: TestStoreIssueRecorder.Issue) {
        lock.withLock { storage.append(issue) }
    }

    var issues: [TestStoreIssueRecorder.Issue] {
        lock.withLock { storage }
    }
}
