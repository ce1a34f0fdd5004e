import Foundation
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A writer process is killed with SIGKILL at seeded moments; a standby process that waits for the stream takes
/// over each time. Every acknowledged sequence is in the stream, the stream runs 1...N without a gap, the epoch
/// never decreases along it, and a recovery equals the sequential replay.
@Suite(.serialized, .enabled(if: TestDatabase.available), .timeLimit(.minutes(3)))
struct WriterCrashTests {
    @Test func standbyTakesOverFromKilledWriters() async throws {
        let storeID = TestDatabase.uniqueStoreID("crash")
        var random = SplitMix64(seed: 19)
        var acknowledged: [Int] = []
        var epochs: [Int] = []
        var takeovers: [Duration] = []
        var writer = try WriterProcess(storeID: storeID, name: "w0", lease: 2_000, acquireWait: 0)
        try writer.wait(for: "the first writer's first acknowledgement") { !$0.acknowledged.isEmpty }
        for round in 1...5 {
            // The standby waits for the stream from the start; the writer is killed at a seeded moment.
            let standby = try WriterProcess(storeID: storeID, name: "w\(round)", lease: 2_000, acquireWait: 30_000)
            usleep(UInt32(50_000 + random.next() % 250_000))
            let killed = ContinuousClock.now
            writer.killAndWait()
            acknowledged += writer.acknowledged
            epochs.append(Int(writer.value(of: "epoch") ?? "") ?? -1)
            try standby.wait(for: "the standby's first acknowledgement (round \(round))") { !$0.acknowledged.isEmpty }
            takeovers.append(ContinuousClock.now - killed)
            let recovered = Int(standby.value(of: "recovered") ?? "") ?? -1
            #expect(recovered >= writer.acknowledged.last ?? 0, "round \(round): the standby recovered less")
            writer = standby
        }
        usleep(100_000)
        writer.killAndWait()
        acknowledged += writer.acknowledged
        epochs.append(Int(writer.value(of: "epoch") ?? "") ?? -1)

        #expect(epochs == epochs.sorted() && Set(epochs).count == epochs.count, "epochs \(epochs)")
        // A recovery through the journal equals the sequential replay. It takes the stream over first, which waits
        // for a statement of the killed writer that the server was still committing (never acknowledged).
        let storage = try PostgresJournalStorage(
            configuration: TestDatabase.configuration(storeID, acquireWait: .seconds(10))
        )
        let journal = try Journal(storage: storage)
        let (state, recovery) = try Store<Ledger, LedgerAction>.recover(
            from: journal,
            initialState: Ledger(),
            reducer: ledgerReducer
        )
        journal.close()
        let records = try await checkStream(storeID)
        let present = Set(records.map { Int($0.sequence) })
        #expect(acknowledged.allSatisfy(present.contains), "an acknowledged sequence is missing")
        #expect(acknowledged == acknowledged.sorted())
        #expect(acknowledged.count > 5)

        #expect(recovery.lastSequence == UInt64(records.count))
        #expect(state == sequentialLedger(count: records.count))
        let milliseconds = takeovers.map {
            Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1e3
        }
        print("writer crash: \(records.count) records, epochs \(epochs), SIGKILL-to-first-ack ms \(milliseconds)")
        #expect(takeovers.allSatisfy { $0 < .seconds(5) })
    }
}

/// A writer is stopped with SIGSTOP; a standby takes over after the lease; the old writer, resumed, is refused
/// and no record of it lies above the takeover.
@Suite(.serialized, .enabled(if: TestDatabase.available), .timeLimit(.minutes(2)))
struct ZombieWriterTests {
    @Test func resumedWriterIsFenced() async throws {
        let storeID = TestDatabase.uniqueStoreID("zombie")
        let zombie = try WriterProcess(storeID: storeID, name: "zombie", lease: 600, acquireWait: 0)
        try zombie.wait(for: "the writer's acknowledgements") { $0.acknowledged.count >= 20 }
        zombie.signal(SIGSTOP)
        let stopped = ContinuousClock.now
        let standby = try WriterProcess(storeID: storeID, name: "standby", lease: 600, acquireWait: 30_000)
        try standby.wait(for: "the standby's acknowledgements") { $0.acknowledged.count >= 20 }
        let takeover = ContinuousClock.now - stopped
        // Its session (and advisory lock) was alive all along: only the lease let the standby in.
        #expect(takeover >= .milliseconds(500), "took over after \(takeover), before the lease ran out")
        zombie.signal(SIGCONT)
        let status = zombie.waitForExit(timeout: .seconds(20))
        #expect(status == 3, "the resumed writer must stop with an error, exit status \(String(describing: status))")
        #expect(zombie.lines.contains { $0.hasPrefix("fenced") }, "\(zombie.lines.suffix(3))")
        try standby.wait(for: "more acknowledgements after the zombie woke") { $0.acknowledged.count >= 40 }
        standby.killAndWait()

        let takeoverHead = Int64(standby.value(of: "recovered") ?? "") ?? -1
        let standbyEpoch = Int64(standby.value(of: "epoch") ?? "") ?? -1
        let records = try await checkStream(storeID)
        #expect(records.filter { $0.sequence > takeoverHead }.allSatisfy { $0.epoch == standbyEpoch })
        #expect(records.filter { $0.sequence <= takeoverHead }.allSatisfy { $0.epoch < standbyEpoch })
        let present = Set(records.map { Int($0.sequence) })
        #expect((zombie.acknowledged + standby.acknowledged).allSatisfy(present.contains))
        #expect(zombie.acknowledged.allSatisfy { $0 <= takeoverHead })
    }
}
