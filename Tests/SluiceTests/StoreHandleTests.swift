import Sluice
import Testing

/// `Store`, `ScopedStore` and `MiddlewareAPI` are views of one internal handle: whichever view is used, the state is
/// the same, an action goes through the whole chain once, and every kind of subscription skips repeats the same way.
@Suite(.timeLimit(suiteTimeLimit)) struct StoreHandleTests {
    @Test func everyViewReadsTheSameStateAndDispatchesThroughTheWholeChainOnce() async throws {
        let seen = Locked<[TestAction]>([])
        let saved = Locked<MiddlewareAPI<TestState, TestAction>?>(nil)
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                savingAPI(into: saved),
                tap { action, _ in
                    seen.append(action)
                    return true
                },
            ]
        )
        let api = try #require(saved.current)
        let log = store.scope(\.log)
        // `[String].count` is a computed property: the scope of a scope reads it by projection.
        let logCount = log.scope(\.count)

        store.dispatch(.record("store"))
        #expect(api.dispatch(.record("api")))
        log.dispatch(.record("scope"))
        logCount.dispatch(.record("scope of scope"))
        let task = await logCount.send(.increment)

        #expect(task.isAccepted)
        #expect(
            seen.current == [.record("store"), .record("api"), .record("scope"), .record("scope of scope"), .increment]
        )
        #expect(store.state == TestState(count: 1, log: ["store", "api", "scope", "scope of scope"]))
        #expect(api.state == store.state)
        #expect(log.state == store.state.log)
        #expect(logCount.state == 4)
        #expect(store.read { $0.log.count } == 4)
        #expect(api.read { $0.log.count } == 4)
        #expect(log.read { $0.count } == 4)
        #expect(logCount.read { $0 } == 4)
        #expect(store.dispatch(.record("read"), reading: { $0.log.last }) == "read")
        #expect(api.dispatch(.record("api read"), reading: { $0.log.last }) == "api read")
    }

    @Test func everyKindOfSubscriptionSkipsRepeatsAndEndsWithTheStore() {
        let events = Locked<[String]>([])
        let takeEvents = {
            events.withValue { events in
                defer { events = [] }
                return events
            }
        }
        var store: Store<TestState, TestAction>? = Store(initialState: TestState(), reducer: testReducer)
        let log = store!.scope(\.log)
        let logCount = log.scope(\.count)
        let subscriptions = [
            store!.subscribe { state in events.append("every \(state.count)") },
            store!.subscribe(to: \.count) { count in events.append("count \(count)") },
            store!.subscribe(to: \.log, by: \.count) { log in events.append("keyed \(log.count)") },
            log.subscribe { log in events.append("scope \(log.count)") },
            log.subscribe(by: \.count) { log in events.append("scope keyed \(log.count)") },
            log.subscribe(to: \.count) { count in events.append("scope to \(count)") },
            logCount.subscribe { count in events.append("scope of scope \(count)") },
        ]

        store!.dispatch(.increment)
        #expect(takeEvents() == ["every 1", "count 1"])
        store!.dispatch(.noop)
        #expect(takeEvents() == ["every 1"])
        store!.dispatch(.record("a"))
        #expect(
            takeEvents() == ["every 1", "keyed 1", "scope 1", "scope keyed 1", "scope to 1", "scope of scope 1"]
        )

        let api = store!.run { $0 }
        store = nil
        #expect(!api.dispatch(.increment))
        log.dispatch(.record("gone"))
        logCount.dispatch(.record("gone"))
        #expect(events.current.isEmpty)
        #expect(log.state == ["a"])
        #expect(logCount.state == 1)
        withExtendedLifetime(subscriptions) {}
    }
}
