import Dispatch
import Sluice
import SluiceTesting
import Testing

/// The binding rule of ServicesAndDependencies.md: every piece of work that a store runs as its own sees the
/// store's dependencies as `StoreDependencies.current`, whatever region the code that starts or drives it is in,
/// and whether or not the store set any.
@Suite struct DependenciesBindingTests {
    private func greeterName() -> String {
        StoreDependencies.current.greeter.name
    }

    /// A delayed run that `advance` performs inside a region reads the store's (here: live, since the store set
    /// nothing), not the region's.
    @Test func aScheduledRunOfAStoreWithoutDependenciesSeesTheStoresNotTheRegionAroundAdvance() {
        let scheduler = TestScheduler()
        let seen = Locked<[String]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.delay(.seconds(1), on: scheduler) { (_: TestAction, _) in
                        seen.append(greeterName())
                    }
                )
            ],
            dependencies: StoreDependencies()
        )
        store.dispatch(.increment)
        withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            scheduler.advance(by: .seconds(1))
        }
        #expect(seen.current == ["live"])
    }

    @Test func aScheduledRunOfAStoreWithDependenciesSeesTheStoresInsideARegion() {
        let scheduler = TestScheduler()
        let seen = Locked<[String]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.delay(.seconds(1), on: scheduler) { (_: TestAction, _) in
                        seen.append(greeterName())
                    }
                )
            ],
            dependencies: StoreDependencies { $0.greeter = NamedGreeter(name: "store") }
        )
        store.dispatch(.increment)
        withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            scheduler.advance(by: .seconds(1))
        }
        #expect(seen.current == ["store"])
    }

    /// The leading run of a throttle happens inside the dispatch, and is a run of the modifier all the same.
    @Test func aLeadingRunInsideTheDispatchSeesTheStoresNotTheRegionAroundTheDispatch() {
        let scheduler = TestScheduler()
        let seen = Locked<[String]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.throttle(.seconds(1), runs: .inDispatch, on: scheduler) { (_: TestAction, _) in
                        seen.append(greeterName())
                    }
                )
            ],
            dependencies: StoreDependencies()
        )
        withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            store.dispatch(.increment)
        }
        #expect(seen.current == ["live"])
        scheduler.advance(by: .seconds(1))
    }

    @Test func theSynchronousRunSeesTheStoresDependencies() {
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            dependencies: StoreDependencies { $0.greeter = NamedGreeter(name: "store") }
        )
        let name = withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            store.run { _ in greeterName() }
        }
        #expect(name == "store")
        #expect(store.run { _ in greeterName() } == "store")
    }

    @Test func theSynchronousRunOfAStoreWithoutDependenciesSeesLiveValuesInsideARegion() {
        let store = Store(initialState: TestState(), reducer: testReducer, dependencies: StoreDependencies())
        let name = withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            store.run { _ in greeterName() }
        }
        #expect(name == "live")
    }

    /// `api.run` inside a middleware is an effect too: it sees the store's, not the caller's region.
    @Test func theSynchronousRunOfTheAPISeesTheStoresDependencies() {
        let seen = Locked<[String]>([])
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                tap { _, api in
                    seen.append(api.run { _ in greeterName() })
                    return true
                }
            ],
            dependencies: StoreDependencies { $0.greeter = NamedGreeter(name: "store") }
        )
        withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            store.dispatch(.increment)
        }
        #expect(seen.current == ["store"])
    }

    /// A synchronous `run` that throws a typed error still throws it, with the dependencies unbound afterwards.
    @Test func theSynchronousRunRethrowsItsTypedError() {
        struct Refused: Error, Equatable {}
        let store = Store(
            initialState: TestState(),
            reducer: testReducer,
            dependencies: StoreDependencies { $0.greeter = NamedGreeter(name: "store") }
        )
        #expect(throws: Refused()) {
            try store.run { (_) throws(Refused) -> Int in throw Refused() }
        }
        #expect(greeterName() == "live")
    }

    /// In a test context without a scheduler, a modifier given no `on:` reads the store's scheduler when the store
    /// installs it (the key has no test value, so the handler hears of it); given one either way, it reads nothing.
    @Test func aModifierWithoutASchedulerReadsTheSchedulerOfATestContextThatSetsNone() {
        let heard = Locked<[String]>([])
        let record: @Sendable (MissingTestValue) -> Void = { missing in heard.append(missing.key) }
        let delayed = Middleware(
            Middlewares.delay(.seconds(1)) { (_: TestAction, _: MiddlewareAPI<TestState, TestAction>) in }
        )
        _ = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [delayed],
            dependencies: .test(onMissingTestValue: record)
        )
        #expect(heard.current == ["SchedulerKey"])

        let scheduler = TestScheduler()
        _ = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [delayed],
            dependencies: .test(onMissingTestValue: record) { $0.scheduler = scheduler }
        )
        _ = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                Middleware(
                    Middlewares.delay(.seconds(1), on: scheduler) {
                        (_: TestAction, _: MiddlewareAPI<TestState, TestAction>) in
                    }
                )
            ],
            dependencies: .test(onMissingTestValue: record)
        )
        #expect(heard.current == ["SchedulerKey"])
    }

    @Test func effectsStartedInARegionSeeTheStoresDependencies() async throws {
        let store = Store(initialState: TestState(), reducer: testReducer, dependencies: StoreDependencies())
        let (started, ran) = try await withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            let task = store.start { _ in greeterName() }
            let ran = try await store.run { _ in
                await Task.yield()
                return greeterName()
            }
            return (try await task.value, ran)
        }
        #expect(started == "live")
        #expect(ran == "live")
    }
}
