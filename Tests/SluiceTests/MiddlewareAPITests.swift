import Foundation
import Testing

@testable import Sluice

/// `MiddlewareAPI.dispatch(_:)`: its answer (accepted or dropped), and dispatches made while the store is still
/// installing its middleware.
@Suite struct MiddlewareAPITests {
    private typealias API = MiddlewareAPI<TestState, TestAction>

    @Test func aDispatchThatIsProcessedAnswersTrue() {
        let (store, api) = makeStoreAndAPI()
        #expect(api.dispatch(.add(3)))
        #expect(store.current?.state.count == 3)
    }

    @Test func aDispatchQueuedBehindTheCurrentActionAnswersTrue() {
        let answers = Locked<[Bool]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, api in
                    if action == .increment {
                        answers.append(api.dispatch(.record("queued")))
                        // Queued, not processed yet: rule 2.
                        answers.append(api.state.log.isEmpty)
                    }
                    return true
                }
            ]
        )
        store.dispatch(.increment)
        #expect(answers.current == [true, true])
        #expect(store.state == TestState(count: 1, log: ["queued"]))
    }

    @Test func aDispatchAfterTheStoreIsGoneAnswersFalse() {
        let (store, api) = makeStoreAndAPI()
        store.withValue { $0 = nil }
        #expect(api.dispatch(.increment) == false)
        #expect(api.state == TestState())
    }

    @Test func aDispatchOfASupersededRunAnswersFalse() {
        let apis = Locked<[API]>([])
        let effect = Middlewares.takeLatest { (_: TestAction, api: API) in apis.append(api) }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.add(1))
        store.dispatch(.add(2))
        let (first, second) = (apis.current[0], apis.current[1])
        #expect(first.dispatch(.add(100)) == false)
        #expect(second.dispatch(.add(1_000)))
        #expect(store.state.count == 1 + 2 + 1_000)
    }

    /// The demo's miscount: a run checks that it is still current, a newer action supersedes it, then it dispatches
    /// its result. The store drops that result, and the answer says so.
    @Test func aRunSupersededBetweenItsCheckAndItsDispatchLearnsThatItsResultWasDropped() async {
        let checked = AsyncGate()
        let proceed = AsyncGate()
        let answers = Locked<[String]>([])
        let effect = Middlewares.takeLatest { (action: TestAction, api: API) async in
            guard case .add(let value) = action, value < 100 else { return }
            guard !Task.isCancelled else { return }
            if value == 1 {
                checked.open()
                await proceed.wait()
            }
            answers.append("\(value): \(api.dispatch(.add(value * 100)))")
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        store.dispatch(.add(1))
        await checked.wait()  // run 1 has checked `Task.isCancelled` and found it current
        store.dispatch(.add(2))  // supersedes run 1
        #expect(await answers.wait { $0 == ["2: true"] })
        proceed.open()
        #expect(await answers.wait { $0.count == 2 })
        #expect(answers.current == ["2: true", "1: false"])
        #expect(store.state.count == 1 + 2 + 200)
    }

    /// The demo's lost result: a run checks that it is current and dispatches its result, which waits in line while
    /// another thread owns the pipeline; that owner then processes a newer request, which supersedes the run. The
    /// waiting result must be dropped when its turn comes: processed, it overwrote the newer run's result (the
    /// demo's "latest quote wins" check failed under load, the last result older than the last request). The same
    /// for a result that is sent and waits in line as a task (which `takeLatest` also cancels as a task).
    @Test(arguments: [false, true])
    func aResultThatWaitedInLineWhileItsRunWasSupersededIsDropped(sends: Bool) async {
        let proceed = AsyncGate()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let answers = Locked<[String]>([])
        let effect = Middlewares.takeLatest { (action: TestAction, api: API) async in
            guard case .add(let value) = action, value < 100 else { return }
            if value == 1 {
                await proceed.wait()
            }
            guard !Task.isCancelled else { return }
            let accepted = sends ? await api.send(.add(value * 100)).isAccepted : api.dispatch(.add(value * 100))
            answers.append("\(value): \(accepted)")
        }
        // Holds the pipeline on `.record("block")` until released, then queues the newer request (rule 2), which
        // this thread processes before it hands the pipeline to the result waiting in line.
        let blocker = Middleware<TestState, TestAction> { api in
            { next in
                { action in
                    next(action)
                    guard action == .record("block") else { return }
                    entered.signal()
                    release.wait()
                    api.dispatch(.add(2))
                }
            }
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect), blocker])
        store.dispatch(.add(1))  // run 1 starts, and waits for `proceed`
        Thread { store.dispatch(.record("block")) }.start()
        await onThread { entered.wait() }
        proceed.open()  // run 1 is current: it dispatches its result, which waits for the blocked owner
        // No event announces a dispatch or send joining the line: polled.
        #expect(await waitUntil { store.core.lock.withLock { store.core.waiters } == 1 })
        release.signal()
        #expect(await answers.wait { $0.count == 2 })
        #expect(answers.current.sorted() == ["1: false", "2: true"])
        #expect(store.state == TestState(count: 1 + 2 + 200, log: ["block"]))
    }

    /// Many threads supersede each other's runs at random moments; every result that the store accepted was reduced,
    /// and none that it refused was: the counts agree exactly.
    @Test func acceptedResultsMatchReducedResultsUnderManyThreads() async {
        let threads = 8
        let requestsPerThread = 250
        let accepted = Locked(0)
        let refused = Locked(0)
        let finished = Locked(0)
        // Requests are `.noop`, results `.increment`: the state's count is the number of results reduced.
        let effect = Middlewares.takeLatest { (action: TestAction, api: API) async in
            defer { finished.withValue { $0 += 1 } }
            guard action == .noop else { return }
            await Task.yield()
            if api.dispatch(.increment) {
                accepted.withValue { $0 += 1 }
            } else {
                refused.withValue { $0 += 1 }
            }
        }
        let store = Store(initialState: TestState(), reducer: testReducer, middleware: [Middleware(effect)])
        await runOnThreads(threads) { _ in
            for _ in 0..<requestsPerThread {
                store.dispatch(.noop)
            }
        }
        let total = threads * requestsPerThread
        // Every request started one run (results start runs too, which return at once).
        #expect(await store.tasksEnded())
        #expect(finished.current == total + store.state.count)
        #expect(store.state.count == accepted.current)
        #expect(accepted.current + refused.current <= total)
        #expect(accepted.current >= 1)  // the last run is never superseded
    }

    /// A middleware that starts a poller when it is installed, while the installation of the rest of the chain is
    /// slow: the poller's action waits for the whole chain, then goes through it (it once skipped every middleware).
    @Test func aDispatchFromAnotherThreadDuringInstallationGoesThroughTheWholeChain() {
        let (store, seen) = storeWithAPollerDuringSlowInstallation { api in api.dispatch(.add(42)) }
        #expect(seen == ["slow saw add(42)", "poller saw add(42)"])
        #expect(store.state.count == 42)
    }
}
