import Dispatch
import Foundation
import Sluice
import SluiceHost
import SluiceJournal
import SluiceTesting
import Testing

/// The store host: activation once per id, requests during passivation, the active limit, idle time on virtual time,
/// shutdown, and recovery after passivation.
@Suite struct StoreHostTests {
    struct Tally: Codable, Sendable, Equatable {
        var total = 0
        var count = 0
    }

    enum TallyAction: Codable, Sendable, Equatable {
        case add(Int)
    }

    static let tallyReducer = Reducer<Tally, TallyAction> { state, action in
        switch action {
        case .add(let value):
            state.total += value
            state.count += 1
        }
    }

    /// Counts the activations that the host asks for, and how many stores hold an activation at once.
    final class CountingOwnership: StoreOwnership, @unchecked Sendable {
        // @unchecked: every property is guarded by `lock`.
        private let lock = NSLock()
        private var held: Set<String> = []
        private var acquisitions = 0
        private var mostHeld = 0
        private var refused: Set<String>

        init(refusing refused: Set<String> = []) {
            self.refused = refused
        }

        struct NotMine: Error {}

        func acquire(_ id: String) throws {
            try lock.withLock {
                if refused.contains(id) { throw NotMine() }
                #expect(!held.contains(id), "\(id) acquired twice without a release")
                held.insert(id)
                acquisitions += 1
                mostHeld = max(mostHeld, held.count)
            }
        }

        func release(_ id: String) {
            lock.withLock { _ = held.remove(id) }
        }

        var counts: (acquisitions: Int, held: Int, mostHeld: Int) {
            lock.withLock { (acquisitions, held.count, mostHeld) }
        }
    }

    static func makeHost(
        _ directory: String,
        durability: JournalDurability = .none,
        activeLimit: Int = 10_000,
        idleTimeout: Duration? = nil,
        scheduler: any EffectScheduler = TestScheduler(),
        ownership: CountingOwnership? = nil,
        middleware: @escaping @Sendable (String) -> [Middleware<Tally, TallyAction>] = { _ in [] }
    ) -> StoreHost<String, Tally, TallyAction> {
        StoreHost(
            directory: directory,
            durability: durability,
            activeLimit: activeLimit,
            idleTimeout: idleTimeout,
            scheduler: scheduler,
            initialState: { _ in Tally() },
            reducer: tallyReducer,
            middleware: middleware,
            ownership: ownership
        )
    }

    /// The state that the journal of `id` holds, recovered without the host.
    static func recovered(_ directory: String, _ id: String) throws -> Tally {
        let journal = try Journal(directory: directory + "/" + id)
        defer { journal.close() }
        return try Store<Tally, TallyAction>.recover(from: journal, initialState: Tally(), reducer: tallyReducer).state
    }

    static func isShutDown(_ error: any Error) -> Bool {
        if case .shutDown? = error as? StoreHostError { return true }
        return false
    }

    @Test func concurrentActivationOfOneIDActivatesOnce() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let ownership = CountingOwnership()
            let host = Self.makeHost(directory, ownership: ownership)
            await runOnThreads(16) { _ in
                for _ in 0..<50 {
                    try! host.dispatch(.add(1), to: "one")
                }
            }
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<64 {
                    group.addTask { try! await host.send(.add(1), to: "one") }
                }
            }
            #expect(host.statistics.activations == 1)
            #expect(ownership.counts.acquisitions == 1)
            #expect(try await host.read("one") { $0 } == Tally(total: 16 * 50 + 64, count: 16 * 50 + 64))
            await host.shutdown()
            #expect(try Self.recovered(directory, "one") == Tally(total: 16 * 50 + 64, count: 16 * 50 + 64))
        }
    }

    @Test func manyIDsActivatedAtOnceAreEachActivatedOnce() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let ownership = CountingOwnership()
            let host = Self.makeHost(directory, ownership: ownership)
            await runOnThreads(8) { thread in
                for round in 0..<20 {
                    try! host.dispatch(.add(thread), to: "id\((round + thread) % 20)")
                }
            }
            #expect(host.statistics.activations == 20)
            #expect(ownership.counts.acquisitions == 20)
            await host.shutdown()
            var total = 0
            for id in 0..<20 { total += try Self.recovered(directory, "id\(id)").total }
            #expect(total == 20 * (0..<8).reduce(0, +))
        }
    }

    /// Requests from many threads and tasks over more ids than the active limit: stores are passivated and
    /// activated again all the time, and every action reaches its store exactly once.
    @Test(arguments: [JournalDurability.none, .everyAction, .groupCommit(interval: .zero)])
    func requestsDuringPassivationAreAllApplied(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let ownership = CountingOwnership()
            let host = Self.makeHost(directory, durability: durability, activeLimit: 3, ownership: ownership)
            let ids = 12
            let threads = 6
            let perThread = 60
            let passivator = Task {
                var round = 0
                while !Task.isCancelled {
                    await host.passivate("id\(round % ids)")
                    round += 1
                    await Task.yield()
                }
            }
            async let fromThreads: Void = runOnThreads(threads) { thread in
                for step in 0..<perThread {
                    try! host.dispatch(.add(1), to: "id\((step * 7 + thread) % ids)")
                }
            }
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<threads {
                    group.addTask {
                        for step in 0..<perThread {
                            try! await host.sendDurably(.add(1000), to: "id\((step * 5 + task) % ids)")
                        }
                    }
                }
            }
            await fromThreads
            passivator.cancel()
            await passivator.value
            let statistics = host.statistics
            #expect(statistics.limitPassivations > 0)
            #expect(ownership.counts.mostHeld <= 3)
            await host.shutdown()
            #expect(ownership.counts.held == 0)
            var tally = Tally()
            for id in 0..<ids {
                let recovered = try Self.recovered(directory, "id\(id)")
                tally.total += recovered.total
                tally.count += recovered.count
            }
            #expect(tally == Tally(total: threads * perThread * 1001, count: 2 * threads * perThread))
        }
    }

    /// Idle passivation on a real queue: a 2 ms idle time swept on a `DispatchQueueScheduler` races the requests of
    /// threads and tasks, then passivates the stores left idle; the requests after that activate them again, and
    /// every action reaches its store exactly once.
    @Test func idlePassivationOnARealQueueRacesRequestsAndLosesNone() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let host = Self.makeHost(
                directory,
                idleTimeout: .milliseconds(2),
                scheduler: DispatchQueueScheduler(queue: DispatchQueue(label: "host-sweep"))
            )
            let ids = 12
            let threads = 4
            let perThread = 100
            func load() async {
                async let fromThreads: Void = runOnThreads(threads) { thread in
                    for step in 0..<perThread {
                        try! host.dispatch(.add(1), to: "id\((step * 7 + thread) % ids)")
                    }
                }
                await withTaskGroup(of: Void.self) { group in
                    for task in 0..<threads {
                        group.addTask {
                            for step in 0..<perThread {
                                try! await host.send(.add(1000), to: "id\((step * 5 + task) % ids)")
                                if step % 10 == 0 { await Task.yield() }
                            }
                        }
                    }
                }
                await fromThreads
            }
            await load()
            // Real time passes: the sweep passivates the stores that the load left idle.
            #expect(await waitUntil { host.statistics.liveStores == 0 })
            let passivatedWhileIdle = host.statistics.idlePassivations
            #expect(passivatedWhileIdle >= ids)
            await load()
            #expect(host.statistics.activations > ids)
            await host.shutdown()
            var tally = Tally()
            for id in 0..<ids {
                let recovered = try Self.recovered(directory, "id\(id)")
                tally.total += recovered.total
                tally.count += recovered.count
            }
            #expect(tally == Tally(total: 2 * threads * perThread * 1001, count: 4 * threads * perThread))
        }
    }

    @Test func theActiveLimitIsRespected() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let ownership = CountingOwnership()
            let host = Self.makeHost(directory, activeLimit: 4, ownership: ownership)
            for id in 0..<40 {
                try await host.send(.add(id), to: "id\(id)")
                #expect(host.statistics.liveStores <= 4)
            }
            await withTaskGroup(of: Void.self) { group in
                for id in 0..<40 {
                    group.addTask { try! await host.send(.add(id), to: "id\(id)") }
                }
            }
            await host.waitUntilSettled()
            #expect(ownership.counts.mostHeld <= 4)
            #expect(host.statistics.liveStores <= 4)
            #expect(host.statistics.limitPassivations >= 80 - 4 - 4)
            await host.shutdown()
            for id in 0..<40 {
                #expect(try Self.recovered(directory, "id\(id)") == Tally(total: 2 * id, count: 2))
            }
        }
    }

    @Test func aStoreInUseStaysWhileTheLimitPassivatesOthers() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let host = Self.makeHost(directory, activeLimit: 4)
            // On a thread of its own: a dispatch that waits for a passivation blocks its thread.
            await onThread {
                for id in 0..<40 {
                    try! host.dispatch(.add(1), to: "busy")
                    try! host.dispatch(.add(1), to: "id\(id)")
                }
            }
            #expect(host.isActive("busy"))
            await host.shutdown()
        }
    }

    @Test func idleStoresArePassivatedOnVirtualTime() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let scheduler = TestScheduler()
            let host = Self.makeHost(directory, idleTimeout: .seconds(4), scheduler: scheduler)
            try await host.send(.add(1), to: "idle")
            try await host.send(.add(1), to: "busy")
            for _ in 0..<8 {
                scheduler.advance(by: .milliseconds(500))
                try await host.send(.add(1), to: "busy")
            }
            // 4 s after "idle" was last used: not passivated before its idle time.
            await host.waitUntilSettled()
            #expect(host.isActive("idle"))
            // Within a quarter of the idle time more, it is.
            scheduler.advance(by: .seconds(1))
            await host.waitUntilSettled()
            #expect(!host.isActive("idle"))
            #expect(host.isActive("busy"))
            #expect(host.statistics.idlePassivations == 1)
            // The next request activates it again, with its state.
            #expect(try await host.read("idle") { $0 } == Tally(total: 1, count: 1))
            #expect(host.statistics.activations == 3)
            await host.shutdown()
        }
    }

    @Test func shutdownPassivatesEveryStoreAndLaterRequestsFail() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let ownership = CountingOwnership()
            let host = Self.makeHost(directory, ownership: ownership)
            for id in 0..<10 {
                try await host.sendDurably(.add(id), to: "id\(id)")
            }
            await host.shutdown()
            #expect(host.statistics.liveStores == 0)
            #expect(host.statistics.requestedPassivations == 10)
            #expect(ownership.counts.held == 0)
            #expect(throws: StoreHostError.self) { try host.dispatch(.add(1), to: "id1") }
            do {
                try host.dispatch(.add(1), to: "new")
                Issue.record("a dispatch after shutdown was taken")
            } catch {
                #expect(Self.isShutDown(error))
            }
            do {
                try await host.send(.add(1), to: "id1")
                Issue.record("a send after shutdown was taken")
            } catch {
                #expect(Self.isShutDown(error))
            }
            do {
                try await host.sendDurably(.add(1), to: "id2")
                Issue.record("a durable send after shutdown was taken")
            } catch {
                #expect(Self.isShutDown(error))
            }
            do {
                _ = try await host.read("id3") { $0.total }
                Issue.record("a read after shutdown was served")
            } catch {
                #expect(Self.isShutDown(error))
            }
            await host.shutdown()  // again: nothing to do
            // Every journal was closed (its directory is free) and holds its actions, and nothing later.
            for id in 0..<10 {
                #expect(try Self.recovered(directory, "id\(id)") == Tally(total: id, count: 1))
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/new"))
        }
    }

    @Test func runShutsTheHostDownWhenCancelled() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let host = Self.makeHost(directory)
            let running = Task { await host.run() }
            try await host.send(.add(1), to: "a")
            running.cancel()
            await running.value
            #expect(host.statistics.liveStores == 0)
            #expect(throws: StoreHostError.self) { try host.dispatch(.add(1), to: "a") }
        }
    }

    @Test func recoveryAfterPassivationYieldsTheSameState() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let host = Self.makeHost(directory)
            for value in 1...100 {
                try host.dispatch(.add(value), to: "a")
            }
            let before = try await host.read("a") { $0 }
            #expect(await host.passivate("a"))
            #expect(!host.isActive("a"))
            #expect(await host.passivate("a") == false)
            #expect(try await host.read("a") { $0 } == before)
            #expect(host.statistics.activations == 2)
            // Passivation wrote a snapshot: the second activation replayed nothing.
            await host.shutdown()
            let journal = try Journal(directory: directory + "/a")
            let (state, recovery) = try Store<Tally, TallyAction>.recover(
                from: journal,
                initialState: Tally(),
                reducer: Self.tallyReducer
            )
            journal.close()
            #expect(state == before)
            #expect(recovery.replayedActions == 0)
            #expect(recovery.snapshotSequence == 100)
        }
    }

    @Test func passivationReleasesTheStore() async throws {
        final class Tracker: Sendable {
            let released: Locked<Int>
            init(_ released: Locked<Int>) { self.released = released }
            deinit { released.withValue { $0 += 1 } }
        }
        try await withTemporaryDirectory { (directory: String) async throws in
            let released = Locked(0)
            let host = Self.makeHost(directory) { _ in
                let tracker = Tracker(released)
                return [
                    Middleware { _ in
                        { next in
                            { action in
                                _ = tracker
                                next(action)
                            }
                        }
                    }
                ]
            }
            for round in 0..<3 {
                try await host.send(.add(round), to: "a")
                await host.passivate("a")
                #expect(released.current == round + 1)
            }
            await host.shutdown()
        }
    }

    @Test func aRefusedOrFailedActivationFailsItsRequestOnly() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let ownership = CountingOwnership(refusing: ["theirs"])
            let host = Self.makeHost(directory, ownership: ownership)
            do {
                try await host.send(.add(1), to: "theirs")
                Issue.record("a refused activation took the action")
            } catch {
                guard case .notOwned(let id, _)? = error as? StoreHostError else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(id == "theirs")
            }
            // A file where the journal's directory should be: opening it fails, and the next request tries again.
            _ = FileManager.default.createFile(atPath: directory + "/blocked", contents: Data())
            do {
                try host.dispatch(.add(1), to: "blocked")
                Issue.record("an activation without a journal took the action")
            } catch {
                guard case .activationFailed(let id, _)? = error as? StoreHostError else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(id == "blocked")
            }
            try FileManager.default.removeItem(atPath: directory + "/blocked")
            try host.dispatch(.add(1), to: "blocked")
            #expect(host.statistics.failedActivations == 2)
            #expect(host.statistics.activations == 1)
            #expect(ownership.counts.held == 1)
            await host.shutdown()
        }
    }

    @Test func theReadingFormsReadTheStateRightAfterTheirAction() async throws {
        try await withTemporaryDirectory { (directory: String) async throws in
            let host = Self.makeHost(directory, activeLimit: 1)
            #expect(try host.dispatch(.add(1), to: "a", reading: { $0.total }) == 1)
            #expect(try await host.send(.add(2), to: "a", reading: { $0.total }) == 3)
            #expect(try await host.sendDurably(.add(3), to: "a", reading: { $0.total }) == 6)
            // Another id takes the only place: "a" is passivated, and the next reading activates it again.
            #expect(try await host.send(.add(10), to: "b", reading: { $0.total }) == 10)
            #expect(try await host.sendDurably(.add(4), to: "a", reading: { $0.count }) == 4)
            #expect(host.statistics.activations == 3)
            await host.shutdown()
            #expect(try Self.recovered(directory, "a") == Tally(total: 10, count: 4))
        }
    }

    @Test func everyIDNamesOneDirectoryInsideTheRoot() {
        #expect(journalDirectoryName("alice") == "alice")
        #expect(journalDirectoryName("order-7_b.v2") == "order-7_b.v2")
        #expect(journalDirectoryName("a/b") == "a%2Fb")
        #expect(journalDirectoryName("..") == "%2E.")
        #expect(journalDirectoryName(".") == "%2E")
        #expect(journalDirectoryName("") == "%")
        #expect(journalDirectoryName("50%") == "50%25")
        #expect(journalDirectoryName("é") == "%C3%A9")
    }
}
