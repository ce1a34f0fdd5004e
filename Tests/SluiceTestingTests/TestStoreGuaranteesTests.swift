import Dispatch
import Sluice
import SluiceTesting
import Testing

/// A key without a test value, read by the tests below through `StoreDependencies.current`.
private enum CourierKey: StoreDependencyKey {
    static let liveValue = "live courier"
}

extension StoreDependencies {
    fileprivate var courier: String {
        get { self[CourierKey.self] }
        set { self[CourierKey.self] = newValue }
    }
}

/// A synchronous middleware that reads the courier through `StoreDependencies.current` for each `.save`.
private func courierOnSave(_ reads: Log<String>) -> Middleware<Cart, CartAction> {
    Middleware { _ in
        { next in
            { action in
                if action == .save { reads.append(StoreDependencies.current.courier) }
                next(action)
            }
        }
    }
}

/// A middleware that holds each `.add` and passes it on one second later on `scheduler`: the dispatch contract
/// allows `next` to be called after the middleware returned.
private func addLater(on scheduler: TestScheduler) -> Middleware<Cart, CartAction> {
    Middleware { _ in
        { next in
            { action in
                guard case .add = action else { return next(action) }
                _ = scheduler.schedule(after: scheduler.now + .seconds(1)) { next(action) }
            }
        }
    }
}

/// Dispatches `.noop` after each `.save`.
private let noopAfterSave = SideEffect<Cart, CartAction> { action, api in
    if action == .save { api.dispatch(.noop) }
}

private func missing(_ key: String, while processing: String) -> String {
    "\(key) has no test value and was read \(processing); the live value was used. Set it in the test store's "
        + "dependencies (`dependencies: .test { ... }`) or declare a `testValue` for \(key)."
}

private let whileSettingUp =
    "outside the processing of an action (by an effect, or by a middleware as it was set up)"

@Suite struct TestStoreGuaranteesTests {
    // MARK: - The expected change is applied to the state before the action, in both modes

    @Test(arguments: [Exhaustivity.on, .off, .off(showSkipped: true)])
    func aRelativeChangeIsAppliedOnce(exhaustivity: Exhaustivity) async {
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(count: 1, items: ["a"]),
                reducer: cartReducer,
                middleware: [Middleware(saveNow)],
                exhaustivity: exhaustivity
            )
            store.send(.add("b")) {
                $0.count += 1
                $0.items.append("b")
            }
            store.send(.save)
            store.receive(.saved(2)) { $0.saved += 2 }
            await store.finish()
        }
        #expect(recorded.isEmpty)
    }

    @Test(arguments: [Exhaustivity.on, .off])
    func aWrongRelativeChangeFails(exhaustivity: Exhaustivity) async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(count: 1), reducer: cartReducer, exhaustivity: exhaustivity)
            store.send(.add("b")) {
                $0.count += 2
                $0.items.append("b")
            }
        }
        #expect(
            recorded.map(\.message) == [
                """
                The state after send(add("b")) does not match the expected changes:
                  count: expected 3, actual 2
                """
            ]
        )
    }

    /// Non-exhaustively, a field that the closure names is checked even when it sets the value the field had
    /// before the action, and a field it does not name is not.
    @Test func offChecksAFieldSetToItsValueBeforeTheActionAndNotTheOthers() async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(count: 1), reducer: cartReducer, exhaustivity: .off)
            store.send(.add("b")) { $0.count = 1 }
            store.send(.add("c")) { $0.items.append("c") }
        }
        #expect(
            recorded.map(\.message) == [
                """
                The state after send(add("b")) does not match the expected changes:
                  count: expected 1, actual 2
                """
            ]
        )
    }

    // MARK: - Every read of a dependency without a test value fails, however it was reached

    @Test(arguments: [Exhaustivity.on, .off])
    func aMissingTestValueReadThroughCurrentInASynchronousMiddlewareFails(exhaustivity: Exhaustivity) async {
        let reads = Log<String>()
        let line = #line + 8
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [courierOnSave(reads)],
                exhaustivity: exhaustivity
            )
            store.send(.save)
            await store.finish()
        }
        #expect(recorded.map(\.message) == [missing("CourierKey", while: "while processing save")])
        #expect(recorded.map(\.line) == [line])
        #expect(reads.elements == ["live courier"])
    }

    @Test func theDateReadThroughCurrentInASynchronousMiddlewareFails() async {
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [
                    Middleware { _ in
                        { next in
                            { action in
                                _ = StoreDependencies.current.date.now
                                next(action)
                            }
                        }
                    }
                ]
            )
            store.send(.noop)
            await store.finish()
        }
        #expect(recorded.map(\.message) == [missing("DateKey", while: "while processing noop")])
    }

    /// A synchronous side effect reads `current` too: the test store's value, set by the test, and no failure.
    @Test func aValueSetByTheTestIsReadThroughCurrentInASynchronousSideEffect() async {
        let reads = Log<String>()
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [
                    Middleware(SideEffect { (_: CartAction, _) in reads.append(StoreDependencies.current.courier) })
                ],
                dependencies: .test { $0.courier = "test courier" }
            )
            withStoreDependencies {
                $0.courier = "region courier"
            } operation: {
                store.send(.noop)
            }
            await store.finish()
        }
        #expect(recorded.isEmpty)
        #expect(reads.elements == ["test courier"])
    }

    @Test(arguments: [Exhaustivity.on, .off])
    func theSynchronousRunReadsTheTestStoresDependencies(exhaustivity: Exhaustivity) async {
        let recorded = await issues {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, exhaustivity: exhaustivity)
            let courier = store.store.run { _ in StoreDependencies.current.courier }
            #expect(courier == "live courier")
            await store.finish()
        }
        #expect(recorded.map(\.message) == [missing("CourierKey", while: whileSettingUp)])
    }

    // MARK: - A time modifier given no scheduler needs the test's

    /// The delay would run on a real queue, an hour later, out of the test's sight: the test store fails the test
    /// for the scheduler that it did not set, at its first step.
    @Test(arguments: [Exhaustivity.on, .off])
    func aTimeModifierWithoutASchedulerOrATestSchedulerFails(exhaustivity: Exhaustivity) async {
        let line = #line + 8
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(Middlewares.delay(.seconds(3600), noopAfterSave))],
                exhaustivity: exhaustivity
            )
            store.send(.save)
            await store.finish()
        }
        #expect(recorded.map(\.message) == [missing("SchedulerKey", while: whileSettingUp)])
        #expect(recorded.map(\.line) == [line])
    }

    @Test func aTimeModifierOnTheTestSchedulerOrOnAGivenSchedulerPasses() async {
        let scheduler = TestScheduler()
        let recorded = await issues {
            let onStoreScheduler = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [Middleware(Middlewares.delay(.seconds(1), noopAfterSave))],
                dependencies: .test { $0.scheduler = scheduler },
                schedulers: [scheduler]
            )
            onStoreScheduler.send(.save)
            scheduler.advance(by: .seconds(1))
            onStoreScheduler.receive(.noop)
            scheduler.advance(by: .seconds(1))  // the delayed run for `.noop`, which dispatches nothing
            await onStoreScheduler.finish()

            let onScheduler = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [
                    Middleware(Middlewares.delay(.seconds(1), on: scheduler, noopAfterSave))
                ],
                schedulers: [scheduler]
            )
            onScheduler.send(.save)
            scheduler.advance(by: .seconds(1))
            onScheduler.receive(.noop)
            scheduler.advance(by: .seconds(1))
            await onScheduler.finish()
        }
        #expect(recorded.isEmpty)
    }

    // MARK: - A change made by a `next` called later

    @Test func aChangeMadeByANextCalledLaterFailsAtFinish() async {
        let scheduler = TestScheduler()
        let line = #line + 9
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [addLater(on: scheduler)]
            )
            store.send(.add("a"))  // nothing changed yet
            scheduler.advance(by: .seconds(1))
            await store.finish()
        }
        #expect(
            recorded.map(\.message) == [
                """
                The state changed outside the actions that the test store saw (a middleware called `next` after it \
                returned?):
                  count: expected 0, actual 1
                  items.count: expected 0, actual 1
                  items[0]: expected (none), actual "a"
                """
            ]
        )
        #expect(recorded.map(\.line) == [line])
    }

    @Test func aChangeMadeByANextCalledLaterFailsAtTheNextStep() async {
        let scheduler = TestScheduler()
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [addLater(on: scheduler)]
            )
            store.send(.add("a"))
            scheduler.advance(by: .seconds(1))
            store.send(.note("x")) { $0.note = "x" }
            await store.finish()
        }
        #expect(recorded.count == 1)
        #expect(recorded.first?.message.hasPrefix("The state changed outside the actions") == true)
        #expect(recorded.first?.isWarning == false)
    }

    /// Non-exhaustively, the unseen change is not asserted, like any change the test does not name; with
    /// `showSkipped` it is listed as a warning.
    @Test(arguments: [false, true])
    func offAcceptsAChangeMadeByANextCalledLater(showSkipped: Bool) async {
        let scheduler = TestScheduler()
        let recorded = await issues {
            let store = TestStore(
                initialState: Cart(),
                reducer: cartReducer,
                middleware: [addLater(on: scheduler)],
                exhaustivity: .off(showSkipped: showSkipped)
            )
            store.send(.add("a"))
            scheduler.advance(by: .seconds(1))
            await store.finish()
        }
        #expect(recorded.map(\.isWarning) == (showSkipped ? [true] : []))
    }
}
