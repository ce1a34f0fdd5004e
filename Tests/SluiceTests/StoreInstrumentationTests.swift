import Foundation
import SluiceJournal
import Testing

@testable import Sluice

/// `StoreInstrumentation`: one measurement per processed action, with its case name, the time it waited for the
/// store, the time its work took and the queue behind it; exact under many threads; absent, nothing at all.
@Suite struct StoreInstrumentationTests {
    enum OrderAction: Sendable, Equatable {
        case place(id: Int, quantity: Int)
        case cancel(Int)
    }

    enum ShopAction: Sendable, Equatable {
        case orders(OrderAction)
        case restock(Int)
        case reset
    }

    @Test func theCaseNameFollowsNestedEnums() {
        func name(_ action: ShopAction) -> String {
            DispatchMeasurement(action: action, waited: .zero, duration: .zero, queueDepth: 0).actionCaseName
        }
        #expect(name(.orders(.place(id: 7, quantity: 2))) == "orders.place")
        #expect(name(.orders(.cancel(3))) == "orders.cancel")
        #expect(name(.restock(5)) == "restock")
        #expect(name(.reset) == "reset")
        #expect(DispatchMeasurement(action: 42, waited: .zero, duration: .zero, queueDepth: 0).actionCaseName == "Int")
        let long = DispatchMeasurement(action: 0, waited: .seconds(3), duration: .nanoseconds(1_500), queueDepth: 0)
        #expect(long.waitedNanoseconds == 3_000_000_000)
        #expect(long.durationNanoseconds == 1_500)
        let huge = DispatchMeasurement(action: 0, waited: .seconds(Int64.max), duration: .zero, queueDepth: 0)
        #expect(huge.waitedNanoseconds == .max)
    }

    /// Each action, queued ones too, is measured once, in processing order, with the fake time its work took and
    /// the actions queued behind it when it began.
    @Test func eachProcessedActionIsMeasuredOnceWithItsDurationAndQueueDepth() {
        let clock = LoggingTests.FakeClock()
        let measured = Locked<[DispatchMeasurement<TestAction>]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { action, api in
                    if action == .increment {
                        api.dispatch(.add(1))
                        api.dispatch(.add(2))
                    }
                    return true
                },
                LoggingTests.costs(250, on: clock),
            ],
            instrumentation: StoreInstrumentation(clock: { clock.now }) { measured.append($0) }
        )
        store.dispatch(.increment)
        store.dispatch(.noop)
        #expect(store.state.count == 4)
        let all = measured.current
        #expect(all.map(\.action) == [.increment, .add(1), .add(2), .noop])
        #expect(all.map(\.actionCaseName) == ["increment", "add", "add", "noop"])
        #expect(all.map(\.duration) == Array(repeating: .nanoseconds(250), count: 4))
        #expect(all.map(\.durationNanoseconds) == [250, 250, 250, 250])
        #expect(all.map(\.waitedNanoseconds) == [0, 0, 0, 0])
        #expect(all.map(\.queueDepth) == [0, 1, 0, 0])
        #expect(all.map(\.waited) == Array(repeating: .zero, count: 4))
    }

    /// Dispatches lined up behind a blocked one: each says how long it waited, and how many still wait behind it.
    @Test func aDispatchThatWaitedReportsItsWaitAndTheLineBehindIt() async throws {
        let measured = Locked<[DispatchMeasurement<TestAction>]>([])
        let blocked = BlockedStore(instrumentation: StoreInstrumentation { measured.append($0) })
        blocked.blockOnAnotherThread()
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("T1")
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("T2")
        blocked.unblock()
        #expect(await measured.wait { $0.count == 3 })
        let all = measured.current
        #expect(all.map(\.action) == [.record("block"), .record("T1"), .record("T2")])
        #expect(all[0].waited == .zero)
        #expect(all[0].queueDepth == 0)
        #expect(all[1].waited > .zero)
        #expect(all[1].waitedNanoseconds > 0)
        #expect(all[1].queueDepth == 1)
        #expect(all[2].waited > .zero)
        #expect(all[2].queueDepth == 0)
        #expect(blocked.store.statistics.totalWait == all[1].waited + all[2].waited)
    }

    /// 8 threads, 2,000 dispatches each: one measurement per action, exact per-case counts and durations, and waits
    /// that add up to the store's own statistics to the nanosecond.
    @Test func measurementsAreExactUnderManyThreads() async {
        let clock = LoggingTests.FakeClock()
        struct Totals {
            var counts: [String: Int] = [:]
            var duration = Duration.zero
            var waited = Duration.zero
            var waits = 0
            var deepest = 0
        }
        let totals = Locked(Totals())
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [LoggingTests.costs(3, on: clock)],
            instrumentation: StoreInstrumentation(clock: { clock.now }) { measurement in
                let name = measurement.actionCaseName
                totals.withValue {
                    $0.counts[name, default: 0] += 1
                    $0.duration += measurement.duration
                    $0.waited += measurement.waited
                    if measurement.waited > .zero { $0.waits += 1 }
                    $0.deepest = max($0.deepest, measurement.queueDepth)
                }
            }
        )
        await runOnThreads(8) { thread in
            for index in 0..<2_000 {
                store.dispatch(index.isMultiple(of: 2) ? .increment : .add(thread))
            }
        }
        let result = totals.current
        #expect(result.counts == ["increment": 8_000, "add": 8_000])
        #expect(result.duration == .nanoseconds(3 * 16_000))
        #expect(store.state.count == 8_000 + 1_000 * (0..<8).reduce(0, +))
        let statistics = store.statistics
        #expect(result.waits == statistics.waits)
        #expect(result.waited == statistics.totalWait)
        #expect(result.deepest <= statistics.deepestQueue)
    }

    /// Without instrumentation the store keeps its plain path: no chain at all without middleware (a dispatch is
    /// one lock, one reducer call, one unlock), and the chain of its middleware alone with them.
    @Test func withoutInstrumentationNothingIsAdded() {
        let plain = Store<TestState, TestAction>(initialState: TestState(), reducer: testReducer)
        #expect(plain.chain == nil)
        let measured = Locked(0)
        let instrumented = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            instrumentation: StoreInstrumentation { _ in measured.withValue { $0 += 1 } }
        )
        #expect(instrumented.chain != nil)
        plain.dispatch(.increment)
        #expect(measured.current == 0)
        instrumented.dispatch(.increment)
        instrumented.dispatch(.increment)
        #expect(measured.current == 2)
        #expect(instrumented.state.count == 2)
    }

    /// A store recovered from its journal measures the actions it processes from then on (for each durability,
    /// with the journal in a middleware or in the reducer), and not the actions it replayed.
    @Test(arguments: [JournalDurability.everyAction, .none, .groupCommit(interval: .zero)])
    func aRecoveredStoreMeasuresItsNewActionsOnly(durability: JournalDurability) async throws {
        try await withTemporaryDirectory { directory in
            try writeLedger([1, 2, 3], to: directory)
            let journal = try Journal(directory: directory)
            defer { journal.close() }
            let measured = Locked<[DispatchMeasurement<LedgerAction>]>([])
            let store = try Store<LedgerState, LedgerAction>(
                recoveringFrom: journal,
                durability: durability,
                initialState: LedgerState(),
                reducer: ledgerReducer,
                instrumentation: StoreInstrumentation { measured.append($0) }
            )
            #expect(measured.current.isEmpty)
            store.dispatch(.add(4))
            store.dispatch(.add(5))
            #expect(measured.current.map(\.action) == [.add(4), .add(5)])
            #expect(store.state == ledger(after: 1...5))
        }
    }
}
