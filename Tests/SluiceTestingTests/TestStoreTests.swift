import Dispatch
import Sluice
import SluiceTesting
import Testing

struct Cart: Equatable, Sendable {
    var count = 0
    var saved = 0
    var note: String?
    var items: [String] = []
    var stock: [String: Int] = [:]
}

enum CartAction: Equatable, Sendable {
    case add(String)
    case save
    case saved(Int)
    case note(String?)
    case restock(String, Int)
    case noop
}

let cartReducer = Reducer<Cart, CartAction>(mutating: { cart, action in
    switch action {
    case .add(let item):
        cart.count += 1
        cart.items.append(item)
    case .save: break
    case .saved(let count): cart.saved = count
    case .note(let note): cart.note = note
    case .restock(let item, let count): cart.stock[item] = count
    case .noop: break
    }
})

/// A synchronous side effect: `.save` dispatches `.saved(count)` right away (queued, rule 2).
let saveNow = SideEffect<Cart, CartAction> { action, api in
    if action == .save { api.dispatch(.saved(api.state.count)) }
}

/// An asynchronous side effect: `.save` dispatches `.saved(count)` from its task.
let saveLater = SideEffect<Cart, CartAction> { (action: CartAction, api: MiddlewareAPI<Cart, CartAction>) async in
    guard action == .save else { return }
    await Task.yield()
    api.dispatch(.saved(api.state.count))
}

/// Runs `body` with the test store's issues recorded instead of reported, and returns them.
func issues(_ body: () async -> Void) async -> [TestStoreIssueRecorder.Issue] {
    let recorded = Log<TestStoreIssueRecorder.Issue>()
    let record: @Sendable (TestStoreIssueRecorder.Issue) -> Void = { recorded.append($0) }
    await TestStoreIssueRecorder.$current.withValue(record) {
        await body()
    }
    return recorded.elements
}

@Suite struct TestStoreTests {
    // MARK: - Passing tests

    @Test func sendAndReceiveAssertEachChange() async {
        let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveNow)])
        store.send(.add("apple")) {
            $0.count = 1
            $0.items = ["apple"]
        }
        store.send(.save)
        store.receive(.saved(1)) { $0.saved = 1 }
        #expect(store.state.saved == 1)
        await store.finish()
    }

    @Test func receiveWithATimeoutWaitsForAsyncWork() async {
        let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveLater)])
        store.send(.add("pear")) {
            $0.count = 1
            $0.items = ["pear"]
        }
        store.send(.save)
        await store.receive(.saved(1), timeout: hangGuard) { $0.saved = 1 }
        await store.finish(timeout: hangGuard)
    }

    @Test func receiveByPredicate() async {
        let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveLater)])
        store.send(.save)
        await store.receive({ if case .saved = $0 { true } else { false } }, timeout: hangGuard)
        await store.finish(timeout: hangGuard)
    }

    @Test func receiveFromAnEffect() async {
        let store = TestStore(initialState: Cart(), reducer: cartReducer)
        let task = store.store.start { api in api.dispatch(.note("from effect")) }
        await store.receive(.note("from effect"), timeout: hangGuard) { $0.note = "from effect" }
        _ = try? await task.value
        await store.finish(timeout: hangGuard)
    }

    @Test func aSchedulerWithNoPendingWorkPasses() async {
        let scheduler = TestScheduler()
        let debounced = Middlewares.debounce(.milliseconds(100), on: scheduler, saveNow)
        let store = TestStore(
            initialState: Cart(),
            reducer: cartReducer,
            middleware: [Middleware(debounced)],
            schedulers: [scheduler]
        )
        store.send(.save)
        scheduler.advance(by: .milliseconds(100))
        store.receive(.saved(0))
        // `.saved(0)` started a new debounce window; without this, finish() fails for its pending timer.
        scheduler.advance(by: .milliseconds(100))
        await store.finish()
    }

    // MARK: - Failures, each produced on purpose

    @Test func aWrongChangeFailsWithTheDifferingFieldsAtTheCall() async {
        await withKnownIssue {
            let store = TestStore(initialState: Cart(), reducer: cartReducer)
            store.send(.add("apple")) { $0.count = 2 }
            await store.finish()
        } matching: { issue in
            issue.sourceLocation?.line == #line - 3
                && issue.comments.map(\.rawValue) == [
                    """
                    The state after send(add("apple")) does not match the expected changes:
                      count: expected 2, actual 1
                      items.count: expected 0, actual 1
                      items[0]: expected (none), actual "apple"
                    """
                ]
        }
    }

    @Test func aChangeWithoutAClosureFails() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer)
            store.send(.note("hi"))
            store.send(.noop)
            await store.finish()
        }
        #expect(
            recorded.map(\.message) == [
                """
                send(note(Optional("hi"))) changed the state, but no change was expected:
                  note: expected nil, actual "hi"
                """
            ]
        )
    }

    @Test func nestedDifferencesNameTheirPath() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(stock: ["a": 1, "b": 2]), reducer: cartReducer)
            store.send(.restock("b", 5)) { $0.stock["c"] = 5 }
        }
        #expect(
            recorded.map(\.message) == [
                """
                The state after send(restock("b", 5)) does not match the expected changes:
                  stock["b"]: expected 2, actual 5
                  stock["c"]: expected 5, actual (none)
                """
            ]
        )
    }

    @Test func receivingAnotherActionFails() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveNow)])
            store.send(.save)
            store.receive(.saved(7))
            await store.finish()
        }
        #expect(recorded.map(\.message) == ["Received saved(0), but expected to receive saved(7)."])
    }

    @Test func receivingNothingFails() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer)
            store.send(.noop)
            store.receive(.saved(0))
            await store.receive(.saved(0), timeout: .milliseconds(20))
        }
        #expect(
            recorded.map(\.message) == [
                "Expected to receive saved(0), but received no action.",
                "Expected to receive saved(0) within 0.02 seconds, but received no action.",
            ]
        )
    }

    @Test func aReceivedChangeIsAssertedToo() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(count: 3), reducer: cartReducer, middleware: [Middleware(saveNow)])
            store.send(.save)
            store.receive(.saved(3)) { $0.saved = 4 }
        }
        #expect(
            recorded.map(\.message) == [
                """
                The state after receive(saved(3)) does not match the expected changes:
                  saved: expected 4, actual 3
                """
            ]
        )
    }

    @Test func sendingBeforeAssertingReceivedActionsFails() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveNow)])
            store.send(.save)
            store.send(.noop)
            await store.finish()
        }
        #expect(
            recorded.map(\.message) == [
                "send(noop): 1 received action must be asserted before sending an action:\n  saved(0)"
            ]
        )
    }

    @Test func finishFailsForEachUnassertedAction() async {
        let line = #line + 5
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveNow)])
            store.send(.save)
            store.send(.save)
            await store.finish()
        }
        // The first `.saved(0)` is reported by the second send, the second one by finish.
        #expect(
            recorded.map(\.message).last
                == "At finish(): the store received saved(0), which was not asserted (assert it with receive(_:))."
        )
        #expect(recorded.count == 2)
        #expect(recorded.last?.line == line)
    }

    @Test func finishFailsForARunningEffect() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer)
            store.store.start { _ in try await Task.sleep(for: .seconds(3_600)) }
            store.store.start { _ in try await Task.sleep(for: .seconds(3_600)) }
            await store.finish(timeout: .milliseconds(20))
        }
        #expect(
            recorded.map(\.message) == [
                "At finish(): an effect is still running (1 of 2); await it or cancel it before the test ends.",
                "At finish(): an effect is still running (2 of 2); await it or cancel it before the test ends.",
            ]
        )
    }

    @Test func finishFailsForARunningSideEffectTask() async {
        let forever = SideEffect<Cart, CartAction> { (_: CartAction, _: MiddlewareAPI<Cart, CartAction>) async in
            try? await Task.sleep(for: .seconds(3_600))
        }
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(forever)])
            store.send(.noop)
            await store.finish(timeout: .milliseconds(20))
        }
        #expect(
            recorded.map(\.message) == [
                "At finish(): a side-effect task is still running (1 of 1); let it finish or cancel it before the test ends."
            ]
        )
    }

    @Test func finishFailsForWorkPendingOnATestScheduler() async {
        let scheduler = TestScheduler()
        let delayed = Middlewares.delay(.milliseconds(100), on: scheduler, saveNow)
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(delayed)],
                schedulers: [scheduler]
            )
            store.send(.save)
            _ = scheduler.schedule(after: scheduler.now + .seconds(5)) {}  // a second unit, from anywhere
            await store.finish()
        }
        #expect(
            recorded.map(\.message) == [
                "At finish(): work is still pending on test scheduler 1 (1 of 2); advance the scheduler or cancel the work.",
                "At finish(): work is still pending on test scheduler 1 (2 of 2); advance the scheduler or cancel the work.",
            ]
        )
    }

    @Test func releasingAnUnfinishedStoreChecksTooAtItsCreation() async {
        let line = #line + 3
        let recorded = await issues {
            do {
                let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveNow)])
                store.send(.save)
            }
        }
        #expect(
            recorded == [
                TestStoreIssueRecorder.Issue(
                    message:
                        "When the test store was released: the store received saved(0), which was not asserted (assert it with receive(_:)).",
                    isWarning: false,
                    line: line
                )
            ]
        )
    }

    // MARK: - Non-exhaustive

    @Test func offAssertsOnlyWhatTheTestNames() async {
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(saveNow)],
                exhaustivity: .off
            )
            store.send(.add("a")) { $0.count = 1 }  // items changed too: not checked
            store.send(.save)
            store.send(.add("b"))  // the unasserted .saved(1) is skipped silently
            store.send(.save)
            store.receive(.saved(2)) { $0.saved = 2 }
            store.send(.save)
            await store.finish()  // .saved(2) left: accepted
        }
        #expect(recorded.isEmpty)
    }

    @Test func offStillChecksTheFieldsTheClosureSets() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, exhaustivity: .off)
            store.send(.add("a")) { $0.count = 5 }
            store.receive(.saved(1))
        }
        #expect(
            recorded.map(\.message) == [
                """
                The state after send(add("a")) does not match the expected changes:
                  count: expected 5, actual 1
                """,
                "Expected to receive saved(1), but it was not received. No action was received.",
            ]
        )
    }

    @Test func offWithShowSkippedReportsWarnings() async {
        let scheduler = TestScheduler()
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(saveNow), Middleware(Middlewares.delay(.seconds(1), on: scheduler, saveNow))],
                schedulers: [scheduler],
                exhaustivity: .off(showSkipped: true)
            )
            store.send(.save)
            store.send(.add("a"))
            store.send(.save)
            store.receive(.saved(1))
            await store.finish()
        }
        #expect(recorded.allSatisfy { $0.isWarning })
        #expect(
            recorded.map(\.message) == [
                "send(add(\"a\")): 1 received action must be asserted before sending an action:\n  saved(0)",
                "At finish(): work is still pending on test scheduler 1 (1 of 1); advance the scheduler or cancel the work.",
            ]
        )
    }
}

@Suite struct TestStoreSkippingTests {
    /// `.save` dispatches `.note("saving")`, then `.saved(count)`.
    let noteThenSave = SideEffect<Cart, CartAction> { action, api in
        guard action == .save else { return }
        api.dispatch(.note("saving"))
        api.dispatch(.saved(api.state.count))
    }

    @Test func offReceiveSkipsToTheNamedActionAndShowsWhatItSkipped() async {
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(noteThenSave)],
                exhaustivity: .off(showSkipped: true)
            )
            store.send(.save)
            store.receive(.saved(0)) { $0.note = "saving" }  // the skipped action's change is in the state
            await store.finish()
        }
        #expect(recorded.map(\.message) == ["Skipped 1 received action before saved(0):\n  note(Optional(\"saving\"))"])
        #expect(recorded.allSatisfy { $0.isWarning })
    }

    @Test func onReceiveFailsOnTheSkippedAction() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(noteThenSave)])
            store.send(.save)
            store.receive(.saved(0))  // fails: the next action is .note
            store.receive(.saved(0))  // passes: each action's change is checked from the state just before it
        }
        #expect(
            recorded.map(\.message) == [
                "Received note(Optional(\"saving\")), but expected to receive saved(0)."
            ]
        )
    }

    @Test func offAsyncReceiveWaitsForTheNamedAction() async {
        let noteThenSaveLater = SideEffect<Cart, CartAction> {
            (action: CartAction, api: MiddlewareAPI<Cart, CartAction>) async in
            guard action == .save else { return }
            api.dispatch(.note("saving"))
            await Task.yield()
            api.dispatch(.saved(api.state.count))
        }
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(noteThenSaveLater)],
                exhaustivity: .off
            )
            store.send(.save)
            await store.receive(.saved(0), timeout: hangGuard) { $0.saved = 0 }
            #expect(store.state.note == "saving")
            await store.finish(timeout: hangGuard)
        }
        #expect(recorded.isEmpty)
    }

    @Test func skipReceivedActionsDropsThemAndListsThemWhenAsked() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(noteThenSave)])
            store.send(.save)
            store.skipReceivedActions()
            await store.finish()  // nothing left to assert
            let showing = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(noteThenSave)],
                exhaustivity: .off(showSkipped: true)
            )
            showing.send(.save)
            showing.skipReceivedActions()
            await showing.finish()
        }
        #expect(recorded.map(\.message) == ["Skipped 2 received actions:\n  note(Optional(\"saving\"))\n  saved(0)"])
        #expect(recorded.allSatisfy { $0.isWarning })
    }

    struct Line: Equatable, Sendable {
        var sku: String
        var count: Int
    }

    enum Status: Equatable, Sendable {
        case open
        case shipped(at: Int)
    }

    struct Shipment: Equatable, Sendable {
        struct Address: Equatable, Sendable {
            var city = "Lyon"
        }

        var address = Address()
        var lines = [Line(sku: "a", count: 1), Line(sku: "b", count: 2)]
        var status = Status.open
    }

    @Test func differencesNameNestedFieldsElementsAndEnums() async {
        let ship = Reducer<Shipment, Int>(mutating: { shipment, day in
            shipment.address.city = "Paris"
            shipment.lines[1].count = 3
            shipment.status = .shipped(at: day)
        })
        let recorded = await issues {
            let store = TestStore(initialState: Shipment(), reducer: ship)
            store.send(4) { $0.status = .shipped(at: 5) }
        }
        #expect(
            recorded.map(\.message) == [
                """
                The state after send(4) does not match the expected changes:
                  address.city: expected "Lyon", actual "Paris"
                  lines[1].count: expected 2, actual 3
                  status.shipped.at: expected 5, actual 4
                """
            ]
        )
    }
}
