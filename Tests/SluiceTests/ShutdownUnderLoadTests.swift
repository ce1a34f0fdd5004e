import Foundation
import Sluice
import Testing

/// `store.shutdown(timeout:)` while threads dispatch and tasks send, with several shutdown calls at once, on real
/// threads, real tasks and the modifiers' real queues: every owed run runs exactly once, and every task it starts is
/// awaited, before any of the calls returns.
@Suite struct ShutdownUnderLoadTests {
    /// What the store's side effects saw and ran, in order.
    struct Log {
        /// The actions in the order the chain processed them (the order each modifier received them in).
        var processed: [Int] = []
        /// Runs of `delay` (started, then finished: its effect is `async`).
        var delayStarted: [Int] = []
        var delayFinished: [Int] = []
        var debounced: [Int] = []
        var throttled: [Int] = []
        /// Runs of a `debounce` and of a `throttle` that each sit behind a `delay`.
        var debouncedAfterDelay: [Int] = []
        var throttledAfterDelay: [Int] = []
        var effectsStarted = 0
        var effectsFinished = 0
    }

    private static func value(of action: TestAction) -> Int? {
        if case .add(let value) = action { return value }
        return nil
    }

    /// A store with a `delay` (of an `async` effect), a `debounce(200 ms)`, a `throttle(500 ms)` with leading and
    /// trailing runs, a `debounce` and a `throttle` behind a `delay`, and an effect started every 7th action, which
    /// dispatches in turn; all of it written to `log`.
    private static func makeStore(
        _ log: Locked<Log>,
        _ apiBox: Locked<MiddlewareAPI<TestState, TestAction>?>,
        delay: Duration
    ) -> Store<TestState, TestAction> {
        func record(_ path: any WritableKeyPath<Log, [Int]> & Sendable) -> SideEffect<TestState, TestAction> {
            SideEffect { action, _ in
                if let value = value(of: action) {
                    log.withValue { $0[keyPath: path].append(value) }
                }
            }
        }
        let delayed = SideEffect<TestState, TestAction> { action, _ in
            guard let value = value(of: action) else { return }
            log.withValue { $0.delayStarted.append(value) }
            await Task.yield()
            log.withValue { $0.delayFinished.append(value) }
        }
        let startsEffects = SideEffect<TestState, TestAction> { action, api in
            guard let value = value(of: action), value > 0, value % 7 == 0 else { return }
            log.withValue { $0.effectsStarted += 1 }
            api.start { api in
                // Real time passing, not a wait: the effects are still running when shutdown begins.
                try? await Task.sleep(for: .milliseconds(1))
                api.dispatch(.add(-value))
                log.withValue { $0.effectsFinished += 1 }
            }
        }
        let middleware: [Middleware<TestState, TestAction>] = [
            savingAPI(into: apiBox),
            Middleware(record(\.processed)),
            Middleware(
                Middlewares.delay(delay * 2, delayed)
            ),
            Middleware(Middlewares.debounce(.milliseconds(200), record(\.debounced))),
            Middleware(
                Middlewares.throttle(.milliseconds(500), leading: true, trailing: true, record(\.throttled))
            ),
            Middleware(startsEffects),
            Middleware(
                Middlewares.delay(
                    delay,
                    Middlewares.debounce(.milliseconds(200), record(\.debouncedAfterDelay))
                )
            ),
            Middleware(
                Middlewares.delay(
                    delay,
                    Middlewares.throttle(
                        .milliseconds(500),
                        leading: true,
                        trailing: true,
                        record(\.throttledAfterDelay)
                    )
                )
            ),
        ]
        return Store(initialState: TestState(), reducer: testReducer, middleware: middleware)
    }

    /// One run of the scenario: load, three shutdowns at once, then the exact counts. Returns the failures.
    private func shutDownUnderLoad(
        delay: Duration = .milliseconds(10),
        shutdownAfter: Duration? = nil,
        timeout: Duration = hangGuard
    ) async -> [String] {
        let log = Locked(Log())
        let apiBox = Locked<MiddlewareAPI<TestState, TestAction>?>(nil)
        let store = Self.makeStore(log, apiBox, delay: delay)
        let api = apiBox.current!
        let threadsDone = AsyncGate()
        // Four threads of their own dispatch until they are refused.
        Thread.detachNewThread {
            runOnThreadsBlocking(4) { thread in
                for index in 1...1_000_000 where !api.dispatch(.add((thread + 1) * 10_000_000 + index)) {
                    return
                }
            }
            threadsDone.open()
        }
        // Four tasks send until they are refused.
        let senders = Task {
            await withTaskGroup(of: Void.self) { group in
                for sender in 0..<4 {
                    group.addTask {
                        for index in 1...1_000_000 {
                            let value = (sender + 5) * 10_000_000 + index
                            guard await store.send(.add(value)).isAccepted else { return }
                            // A send that finds the store free does not suspend: without a yield, four senders
                            // hold both threads of the pool, and the task that begins shutdown (and every other
                            // suite's task) waits for one while the load runs on, for tens of seconds under load.
                            if index % 32 == 0 { await Task.yield() }
                        }
                    }
                }
            }
        }
        var failures: [String] = []
        if let shutdownAfter {
            try? await Task.sleep(for: shutdownAfter)
        } else if !(await log.wait { $0.processed.count >= 100 }) {
            failures.append("the load never started")
        }
        // Three shutdown calls at once; each notes what had run when it returned.
        let returned = await withTaskGroup(of: (Log, ShutdownReport).self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let report = await store.shutdown(timeout: timeout)
                    return (log.current, report)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let seenAtReturn = returned.map(\.0)
        await threadsDone.wait()
        await senders.value
        let final = log.current
        let processed = final.processed
        func check(_ holds: Bool, _ what: String) {
            if !holds { failures.append(what) }
        }
        // Every accepted action ran once through `delay`, in order, and its task finished.
        check(
            final.delayStarted.sorted() == processed.sorted(),
            "delay runs \(final.delayStarted.count) of \(processed.count)"
        )
        check(
            final.delayFinished.sorted() == processed.sorted(),
            "delay tasks finished \(final.delayFinished.count) of \(processed.count)"
        )
        // The debounce run owed at shutdown (the last action: no quiet time came after it) ran, once.
        check(final.debounced.last == processed.last, "no owed debounce run")
        check(Set(final.debounced).count == final.debounced.count, "a debounce run twice")
        // The throttle ran the first action at once, and the last one (owed as its trailing run), each once.
        check(final.throttled.first == processed.first, "no leading throttle run")
        check(final.throttled.last == processed.last, "no owed trailing throttle run")
        check(Set(final.throttled).count == final.throttled.count, "a throttle run twice")
        // The same behind a delay: the delayed runs happen at shutdown, and the runs that they leave owed run then.
        check(final.debouncedAfterDelay.last == processed.last, "no owed debounce run behind the delay")
        check(
            Set(final.debouncedAfterDelay).count == final.debouncedAfterDelay.count,
            "a debounce run behind the delay twice"
        )
        check(final.throttledAfterDelay.last == processed.last, "no owed throttle run behind the delay")
        check(
            Set(final.throttledAfterDelay).count == final.throttledAfterDelay.count,
            "a throttle run behind the delay twice"
        )
        check(
            final.effectsFinished == final.effectsStarted,
            "effects \(final.effectsFinished) of \(final.effectsStarted)"
        )
        // Each shutdown call returned only once all of that had run, and none reports a run it dropped.
        check(seenAtReturn.count == 3, "\(seenAtReturn.count) shutdown calls returned")
        check(returned.allSatisfy { $0.1.droppedRuns == 0 }, "dropped runs \(returned.map(\.1.droppedRuns))")
        for (index, seen) in seenAtReturn.enumerated() {
            check(seen.delayStarted == final.delayStarted, "call \(index) returned before the delay runs")
            check(seen.delayFinished.count == final.delayFinished.count, "call \(index) returned before delay tasks")
            check(seen.debounced == final.debounced, "call \(index) returned before the debounce run")
            check(seen.throttled == final.throttled, "call \(index) returned before the throttle run")
            check(seen.debouncedAfterDelay == final.debouncedAfterDelay, "call \(index) returned early (debounce 2)")
            check(seen.throttledAfterDelay == final.throttledAfterDelay, "call \(index) returned early (throttle 2)")
        }
        return failures
    }

    /// The same with longer delays, shutdown at a random moment, and a short timeout that the delayed runs' tasks
    /// may outlast: the owed runs still run, each once, before any call returns.
    @Test func owedRunsRunUnderLoadWithAShortTimeout() async {
        var generator = SystemRandomNumberGenerator()
        for iteration in 0..<10 {
            let delay = Duration.milliseconds(Int.random(in: 1...300, using: &generator))
            let after = Duration.milliseconds(Int.random(in: 20...200, using: &generator))
            let failures = await shutDownUnderLoad(delay: delay, shutdownAfter: after, timeout: .seconds(2))
            #expect(failures.isEmpty, "iteration \(iteration), delay \(delay), shutdown after \(after): \(failures)")
        }
    }

    @Test func concurrentShutdownsUnderLoadRunEveryOwedRunOnce() async {
        for iteration in 0..<32 {
            let failures = await shutDownUnderLoad()
            #expect(failures.isEmpty, "iteration \(iteration): \(failures)")
        }
    }

    /// A `throttle` behind a `delay`: the delay's queue thread is inside a run when shutdown flushes the delay, so
    /// the delayed runs that shutdown releases are performed on that thread afterwards, after every flush of the
    /// throttle that a fixed sequence of flushes would do; the trailing run that they leave owed still runs, once,
    /// before any shutdown call returns.
    @Test func aRunOwedByARunOnAnotherThreadAfterTheFlushRuns() async {
        for _ in 0..<10 {
            let entered = AsyncGate()
            let held = DispatchSemaphore(value: 0)
            let throttled = Locked<[Int]>([])
            let debounced = Locked<[Int]>([])
            let store = Store<TestState, TestAction>(
                initialState: TestState(),
                reducer: testReducer,
                middleware: [
                    Middleware(
                        Middlewares.delay(
                            .milliseconds(1),
                            Middlewares.throttle(.seconds(3_600), leading: true, trailing: true, runs: .inDispatch) {
                                action,
                                _ in
                                guard let value = Self.value(of: action) else { return }
                                if value == 1 {
                                    // Holds the delay's queue thread inside the run of 1.
                                    entered.open()
                                    held.wait()
                                }
                                throttled.append(value)
                            }
                        )
                    ),
                    Middleware(
                        Middlewares.debounce(.seconds(3_600)) { action, _ in
                            if let value = Self.value(of: action) { debounced.append(value) }
                        }
                    ),
                ]
            )
            store.dispatch(.add(1))
            await entered.wait()
            for value in 2...50 {
                store.dispatch(.add(value))
            }
            async let calls = withTaskGroup(of: (ShutdownReport, [Int]).self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        // Longer than the wait for the flush below, which shutdown must outlast.
                        let report = await store.shutdown(timeout: hangGuard * 2)
                        return (report, throttled.current)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            // Shutdown's flush ran the debounce on the calling thread: the delay is flushed too, into its queue
            // thread, which is still held. Let it go on.
            #expect(await debounced.wait { $0 == [50] })
            held.signal()
            let returned = await calls
            #expect(returned.count == 3)
            for (report, throttledAtReturn) in returned {
                // 49 delayed runs, the debounce run and the throttle's trailing run.
                #expect(report.flushedRuns == 51)
                #expect(throttledAtReturn == [1, 50])
            }
            #expect(throttled.current == [1, 50])
            #expect(debounced.current == [50])
        }
    }
}
