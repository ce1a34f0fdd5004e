import Foundation
import Sluice
import SluiceTesting
import Testing

/// A service that tests replace: it answers with a name.
protocol Greeter: Sendable {
    var name: String { get }
}

struct NamedGreeter: Greeter {
    let name: String
}

private enum GreeterKey: StoreDependencyKey {
    static let liveValue: any Greeter = NamedGreeter(name: "live")
    static let testValue: any Greeter = NamedGreeter(name: "test")
}

/// A key without a test value.
private enum LiveOnlyKey: StoreDependencyKey {
    static let liveValue = "live only"
}

/// A key whose test value has state: it must start afresh per test container.
private enum CounterKey: StoreDependencyKey {
    static var liveValue: Locked<Int> { Locked(1000) }
    static var testValue: Locked<Int> { Locked(0) }
}

/// A key whose live value cannot be built.
private enum BrokenKey: StoreDependencyKey {
    static var liveValue: Int { get throws { throw BrokenConfiguration() } }
}

extension StoreDependencies {
    var greeter: any Greeter {
        get { self[GreeterKey.self] }
        set { self[GreeterKey.self] = newValue }
    }
    var liveOnly: String {
        get { self[LiveOnlyKey.self] }
        set { self[LiveOnlyKey.self] = newValue }
    }
    fileprivate var counter: Locked<Int> {
        self[CounterKey.self]
    }
    var broken: Int {
        self[BrokenKey.self]
    }
}

/// A helper deep inside an effect: it has no API, only the task-local dependencies.
private func greeterName() -> String {
    StoreDependencies.current.greeter.name
}

@Suite struct DependenciesTests {
    private func makeStore(
        _ dependencies: StoreDependencies,
        middleware: [Middleware<TestState, TestAction>] = []
    ) -> Store<TestState, TestAction> {
        Store(initialState: TestState(), reducer: testReducer, middleware: middleware, dependencies: dependencies)
    }

    @Test func aKeyThatWasNotSetReadsItsLiveValue() {
        let dependencies = StoreDependencies()
        #expect(dependencies.context == .live)
        #expect(dependencies.greeter.name == "live")
        #expect(dependencies.liveOnly == "live only")
    }

    @Test func aSetKeyReadsItsValueAndCopiesAreIndependent() {
        var first = StoreDependencies { $0.greeter = NamedGreeter(name: "first") }
        let copy = first
        first.greeter = NamedGreeter(name: "changed")
        first.liveOnly = "set"
        #expect(first.greeter.name == "changed")
        #expect(first.liveOnly == "set")
        #expect(copy.greeter.name == "first")
        #expect(copy.liveOnly == "live only")
    }

    @Test func middlewareReadsTheStoresDependencies() {
        let seen = Locked<[String]>([])
        let middleware = tap { _, api in
            seen.append(api.dependencies.greeter.name)
            return true
        }
        let one = makeStore(StoreDependencies { $0.greeter = NamedGreeter(name: "one") }, middleware: [middleware])
        let two = makeStore(StoreDependencies { $0.greeter = NamedGreeter(name: "two") }, middleware: [middleware])
        one.dispatch(.increment)
        two.dispatch(.increment)
        #expect(seen.current == ["one", "two"])
        #expect(one.dependencies.greeter.name == "one")
    }

    @Test func aScopedStoreSeesItsStoresDependencies() {
        let store = makeStore(StoreDependencies { $0.greeter = NamedGreeter(name: "parent") })
        let scoped = store.scope(\.count)
        #expect(scoped.dependencies.greeter.name == "parent")
        #expect(store.scope(\.log).scope(\.count).dependencies.greeter.name == "parent")
    }

    @Test func middlewareSeesTheStoresDependenciesNotARegionAroundTheDispatch() {
        let seen = Locked<[String]>([])
        let store = makeStore(
            StoreDependencies { $0.greeter = NamedGreeter(name: "store") },
            middleware: [
                tap { _, api in
                    seen.append(api.dependencies.greeter.name)
                    return true
                }
            ]
        )
        withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            store.dispatch(.increment)
        }
        #expect(seen.current == ["store"])
    }

    @Test func aHelperInsideAnAsyncSideEffectReadsTheStoresDependencies() async {
        let seen = Locked<[String]>([])
        let done = AsyncGate()
        let effect = SideEffect<TestState, TestAction> { _, _ in
            await Task.yield()
            seen.append(greeterName())
            done.open()
        }
        let store = makeStore(
            StoreDependencies { $0.greeter = NamedGreeter(name: "store") },
            middleware: [Middleware(effect)]
        )
        // A region around the dispatch does not reach the store's work: the store binds its own dependencies.
        withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            store.dispatch(.increment)
        }
        await done.wait()
        #expect(seen.current == ["store"])
    }

    @Test func aHelperInsideAnEffectReadsTheStoresDependencies() async throws {
        let store = makeStore(StoreDependencies { $0.greeter = NamedGreeter(name: "store") })
        let name = try await store.run { _ in
            await Task.yield()
            return greeterName()
        }
        #expect(name == "store")
        let started = try await store.start { _ in greeterName() }.value
        #expect(started == "store")
        // A child task of the effect inherits them too.
        let child = try await store.run { _ in
            await withTaskGroup(of: String.self) { group in
                group.addTask { greeterName() }
                return await group.next() ?? ""
            }
        }
        #expect(child == "store")
    }

    @Test func aDetachedTaskOrAThreadReadsLiveValuesAndTheAPIStillGivesTheStores() async throws {
        let store = makeStore(StoreDependencies { $0.greeter = NamedGreeter(name: "store") })
        let (current, throughAPI) = try await store.run { api in
            await Task.detached { (greeterName(), api.dependencies.greeter.name) }.value
        }
        #expect(current == "live")
        #expect(throughAPI == "store")
        let fromThread = Locked("")
        await onThread { fromThread.withValue { $0 = greeterName() } }
        #expect(fromThread.current == "live")
    }

    @Test func aRegionOverridesForItsCodeOnlyAndNests() async {
        #expect(greeterName() == "live")
        let inner = withStoreDependencies {
            $0.greeter = NamedGreeter(name: "outer")
        } operation: {
            let outer = greeterName()
            let inner = withStoreDependencies {
                $0.liveOnly = "inner"
            } operation: {
                (greeterName(), StoreDependencies.current.liveOnly)
            }
            return (outer, inner.0, inner.1)
        }
        #expect(inner == ("outer", "outer", "inner"))
        let afterAwait = await withStoreDependencies {
            $0.greeter = NamedGreeter(name: "async")
        } operation: {
            await Task.yield()
            return greeterName()
        }
        #expect(afterAwait == "async")
        #expect(greeterName() == "live")
    }

    @Test func aStoreCreatedInARegionTakesTheRegionsDependencies() {
        let store = withStoreDependencies {
            $0.greeter = NamedGreeter(name: "region")
        } operation: {
            Store<TestState, TestAction>(initialState: TestState(), reducer: testReducer)
        }
        #expect(store.dependencies.greeter.name == "region")
        let plain = Store<TestState, TestAction>(initialState: TestState(), reducer: testReducer)
        #expect(plain.dependencies.greeter.name == "live")
    }

    /// 8 threads dispatch actions whose async side effects each override the greeter with their own name, await,
    /// and read it back; later effects of the same store (and of other actions) still see the store's value.
    @Test func overridesInsideAnEffectDoNotLeakToOtherEffectsOrLaterActions() async {
        let threads = 8
        let perThread = 50
        let mismatches = Locked(0)
        let storeReads = Locked(0)
        let finished = Locked(0)
        let done = AsyncGate()
        let total = threads * perThread * 2
        let effect = SideEffect<TestState, TestAction> { action, _ in
            defer {
                if finished.withValue({
                    $0 += 1
                    return $0
                }) == total {
                    done.open()
                }
            }
            guard case .record(let name) = action else {
                // A later action's effect: no override of another effect is visible.
                if greeterName() == "store" { storeReads.withValue { $0 += 1 } }
                return
            }
            await withStoreDependencies {
                $0.greeter = NamedGreeter(name: name)
            } operation: {
                await Task.yield()
                if greeterName() != name { mismatches.withValue { $0 += 1 } }
            }
            if greeterName() != "store" { mismatches.withValue { $0 += 1 } }
        }
        let store = makeStore(
            StoreDependencies { $0.greeter = NamedGreeter(name: "store") },
            middleware: [Middleware(effect)]
        )
        await runOnThreads(threads) { thread in
            for index in 0..<perThread {
                store.dispatch(.record("t\(thread)-\(index)"))
                store.dispatch(.increment)
            }
        }
        await done.wait()
        #expect(mismatches.current == 0)
        #expect(storeReads.current == threads * perThread)
        #expect(store.state.count == threads * perThread)
    }

    @Test func aTestContainerReadsTestValuesBuiltOncePerContainer() {
        let first = StoreDependencies.test()
        #expect(first.context == .test)
        #expect(first.greeter.name == "test")
        first.counter.withValue { $0 += 1 }
        first.counter.withValue { $0 += 1 }
        #expect(first.counter.current == 2)
        let copy = first
        #expect(copy.counter.current == 2)  // copies share the test values built so far
        #expect(StoreDependencies.test().counter.current == 0)  // a new test starts afresh
        #expect(StoreDependencies().counter.current == 1000)
        let set = StoreDependencies.test { $0.greeter = NamedGreeter(name: "set") }
        #expect(set.greeter.name == "set")
    }

    @Test func aMissingTestValueIsReportedWithTheKeyAndReadLive() {
        let reports = Locked<[String]>([])
        let dependencies = StoreDependencies.test(onMissingTestValue: { reports.append($0.message) })
        #expect(dependencies.liveOnly == "live only")
        #expect(
            reports.current == [
                "StoreDependencies: LiveOnlyKey has no test value and was read in a test context. Declare a "
                    + "`testValue` for LiveOnlyKey, or set this dependency in the test's dependencies."
            ]
        )
        // Set by the test: no report.
        var set = dependencies
        set.liveOnly = "fake"
        #expect(set.liveOnly == "fake")
        #expect(reports.current.count == 1)
    }

    @Test func aMissingTestValueReadInAnAsyncSideEffectNamesTheAction() async {
        let reports = Locked<[MissingTestValue]>([])
        let done = AsyncGate()
        let effect = SideEffect<TestState, TestAction> { _, _ in
            await Task.yield()  // an async side effect
            _ = StoreDependencies.current.liveOnly
            done.open()
        }
        let store = makeStore(
            StoreDependencies.test(onMissingTestValue: { reports.append($0) }),
            middleware: [Middleware(effect)]
        )
        store.dispatch(.add(7))
        await done.wait()
        #expect(reports.current.map(\.key) == ["LiveOnlyKey"])
        #expect(reports.current.first?.action as? TestAction == .add(7))
        #expect(reports.current.first?.message.contains("while processing SluiceTests.TestAction.add(7)") == true)
    }

    /// A read through `api.dependencies` carries no action; inside an async side effect the task-local binding of the
    /// store's dependencies names it.
    @Test func aMissingTestValueReadThroughTheAPIInAnAsyncSideEffectNamesTheAction() async {
        let reports = Locked<[MissingTestValue]>([])
        let done = AsyncGate()
        let effect = SideEffect<TestState, TestAction> { _, api in
            await Task.yield()
            _ = api.dependencies.liveOnly
            done.open()
        }
        let store = makeStore(
            StoreDependencies.test(onMissingTestValue: { reports.append($0) }),
            middleware: [Middleware(effect)]
        )
        store.dispatch(.add(3))
        await done.wait()
        #expect(reports.current.map(\.key) == ["LiveOnlyKey"])
        #expect(reports.current.first?.action as? TestAction == .add(3))
        // Outside the store's work, the same read names no action.
        _ = store.dependencies.liveOnly
        #expect(reports.current.count == 2)
        #expect(reports.current.last?.action == nil)
    }

    /// The hook a test store uses: its handler fails the test with `Issue.record`.
    @Test func aTestStoreHandlerFailsTheTest() {
        withKnownIssue {
            let dependencies = StoreDependencies.test(onMissingTestValue: { Issue.record("\($0)") })
            _ = dependencies.liveOnly
        } matching: { issue in
            issue.description.contains("LiveOnlyKey has no test value")
        }
    }
}
