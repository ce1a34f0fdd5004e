import Foundation
import Observation
import Sluice
import Testing

/// `read(_:)` on `Store`, `ScopedStore` and `MiddlewareAPI`: the state lent to a closure under the store's lock.
@Suite struct BorrowedReadTests {
    struct Catalog: Sendable, Equatable {
        var byID: [Int: String] = [:]
        var inserted = 0
        var name: String { "catalog of \(byID.count)" }
    }

    struct ReadFailure: Error, Equatable {
        let code: Int
    }

    let catalogReducer = Reducer<Catalog, Int>(mutating: { state, id in
        state.byID[id] = "item \(id)"
        state.inserted += 1
    })

    @Test func storeReadReturnsWhatTheBodyReturns() {
        let store = Store(initialState: Catalog(), reducer: catalogReducer)
        store.dispatch(7)
        #expect(store.read { $0.byID[7] } == "item 7")
        #expect(store.read { $0.byID[8] } == nil)
        #expect(store.read { $0.inserted } == 1)
    }

    @Test func readRethrowsTheBodysTypedError() {
        let store = Store(initialState: Catalog(), reducer: catalogReducer)
        #expect(throws: ReadFailure(code: 3)) {
            try store.read { (state) throws(ReadFailure) -> Int in throw ReadFailure(code: state.inserted + 3) }
        }
        let scoped = store.scope(\.byID)
        #expect(throws: ReadFailure(code: 4)) {
            try scoped.read { (byID) throws(ReadFailure) -> Int in throw ReadFailure(code: byID.count + 4) }
        }
    }

    @Test func scopedReadThroughStoredAndComputedKeyPaths() {
        let store = Store(initialState: Catalog(), reducer: catalogReducer)
        store.dispatch(1)
        store.dispatch(2)
        #expect(store.scope(\.byID).read { $0[2] } == "item 2")
        #expect(store.scope(\.inserted).read { $0 } == 2)
        #expect(store.scope(\.name).read { $0 } == "catalog of 2")  // computed: produced, then borrowed
        struct Outer: Sendable { var catalog = Catalog() }
        let outer = Store(
            initialState: Outer(),
            reducer: withKey(\Outer.catalog, use: catalogReducer)
        )
        outer.dispatch(5)
        #expect(outer.scope(\.catalog).scope(\.byID).read { $0[5] } == "item 5")
        #expect(outer.scope(\.catalog).read { $0.byID.count } == 1)
    }

    @Test func middlewareAPIReadSeesTheStateAndTheLastStateAfterTheStoreIsGone() {
        let (store, api) = makeStoreAndAPI()
        store.current?.dispatch(.add(4))
        #expect(api.read { $0.count } == 4)
        store.withValue { $0 = nil }
        #expect(api.read { $0.count } == 4)
    }

    @Test func aReadInsideAMiddlewareSeesTheReducedState() {
        let seen = Locked<[Int]>([])
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [
                afterNext { _, api in
                    seen.append(api.read { $0.count })
                }
            ]
        )
        store.dispatch(.add(2))
        store.dispatch(.add(3))
        #expect(seen.current == [2, 5])
    }

    @Test func storeReadIsTrackedByObservation() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let changes = Locked(0)
        withObservationTracking {
            _ = store.read { $0.count }
        } onChange: {
            changes.withValue { $0 += 1 }
        }
        #expect(store.isObservedSinceLastChange)
        store.dispatch(.increment)
        #expect(changes.current == 1)
    }

    @Test func scopedReadIsTrackedAsAReadOfTheStore() {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let changes = Locked(0)
        withObservationTracking {
            _ = store.scope(\.log).read { $0.count }
        } onChange: {
            changes.withValue { $0 += 1 }
        }
        store.dispatch(.increment)
        #expect(changes.current == 1)
    }

    @Test func middlewareAPIReadIsNotTracked() {
        let (box, api) = makeStoreAndAPI()
        let store = box.current!
        let changes = Locked(0)
        withObservationTracking {
            _ = api.read { $0.count }
        } onChange: {
            changes.withValue { $0 += 1 }
        }
        #expect(!store.isObservedSinceLastChange)
        store.dispatch(.increment)
        #expect(changes.current == 0)
    }

    @Test func readNeverSeesHalfAnAction() async {
        // The reducer changes two fields; a read between the two writes would see them differ.
        struct Pair: Sendable { var a = 0, b = 0 }
        let store = Store(
            initialState: Pair(),
            reducer: Reducer<Pair, Int>(mutating: { state, delta in
                state.a += delta
                state.b += delta
            })
        )
        let torn = Locked(0)
        let dispatches = 20_000
        await runOnThreads(3) { index in
            if index == 0 {
                for _ in 0..<dispatches { store.dispatch(1) }
            } else {
                var seen = 0
                while seen < dispatches {
                    let (a, b) = store.read { ($0.a, $0.b) }
                    if a != b { torn.withValue { $0 += 1 } }
                    seen = a
                }
            }
        }
        #expect(torn.current == 0)
        #expect(store.read { $0.a } == dispatches)
    }

    #if DEBUG
    @Test func dispatchingFromInsideReadStopsWithAMessageInDebugBuilds() async {
        await #expect(processExitsWith: .failure) {
            let store = Store(initialState: 0, reducer: Reducer<Int, Int>(mutating: { $0 += $1 }))
            _ = store.read { _ in store.dispatch(1) }  // `body` holds the lock: it must not call the store
        }
    }
    #endif
}
