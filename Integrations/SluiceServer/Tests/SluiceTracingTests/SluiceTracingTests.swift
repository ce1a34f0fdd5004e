import Foundation
import InMemoryTracing
import Sluice
import SluiceJournal
import SluiceTracing
import Synchronization
import Testing
import Tracing

enum OrderAction: Codable, Sendable {
    case place(id: Int)
    case fail
    case noted
}

let orderReducer = Reducer<Int, OrderAction>(mutating: { state, _ in state += 1 })

struct SideEffectFailure: Error {}

/// Waits until `condition` holds, polling, for at most 5 seconds.
func eventually(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(2))
    }
}

@Suite struct SluiceTracingTests {
    @Test func aSpanPerActionIsAChildOfTheCallersContext() throws {
        let tracer = InMemoryTracer()
        let store = Store<Int, OrderAction>(
            initialState: 0,
            reducer: orderReducer,
            middleware: [Middlewares.tracing(store: "orders", tracer: tracer)]
        )
        _ = tracer.withSpan("request") { _ in
            store.dispatch(.place(id: 7))
        }
        store.dispatch(.noted)
        let spans = tracer.finishedSpans
        let request = try #require(spans.first { $0.operationName == "request" })
        let place = try #require(spans.first { $0.operationName == "orders place" })
        #expect(place.parentSpanID == request.spanID)
        #expect(place.traceID == request.traceID)
        #expect(place.attributes[SluiceSpanAttribute.store]?.toSpanAttribute() == "orders")
        #expect(place.attributes[SluiceSpanAttribute.action]?.toSpanAttribute() == "place")
        #expect(place.attributes[SluiceSpanAttribute.sequence] == nil)
        // Without a caller's span, the action's span starts a trace.
        let noted = try #require(spans.first { $0.operationName == "orders noted" })
        #expect(noted.parentSpanID == nil)
    }

    @Test func aJournaledActionCarriesItsSequenceNumber() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tracer = InMemoryTracer()
        let journal = try Journal(directory: directory)
        let store = try Store<Int, OrderAction>(
            recoveringFrom: journal,
            durability: .none,
            initialState: 0,
            reducer: orderReducer,
            middleware: [
                Middlewares.tracing(store: "orders", journal: journal, tracer: tracer, caseName: { _ in "any" })
            ]
        )
        store.dispatch(.place(id: 1))
        store.dispatch(.place(id: 2))
        let sequences = tracer.finishedSpans.map { $0.attributes[SluiceSpanAttribute.sequence]?.toSpanAttribute() }
        #expect(sequences == [.int64(1), .int64(2)])
        #expect(tracer.finishedSpans.allSatisfy { $0.operationName == "orders any" })
        journal.close()
    }

    @Test func sideEffectsAndEffectsAreChildSpansWithTheirErrors() async throws {
        let tracer = InMemoryTracer()
        let effectDone = Atomic<Int>(0)
        let store = Store<Int, OrderAction>(
            initialState: 0,
            reducer: orderReducer,
            middleware: [
                Middlewares.tracing(store: "orders", tracer: tracer),
                Middleware(
                    SideEffect.traced("charge", tracer: tracer) { action, api in
                        if case .fail = action {
                            effectDone.add(1, ordering: .relaxed)
                            throw SideEffectFailure()
                        }
                        api.startTraced("ship", tracer: tracer) { _ in effectDone.add(1, ordering: .relaxed) }
                    }
                ),
            ]
        )
        store.dispatch(.place(id: 1))
        store.dispatch(.fail)
        await eventually { effectDone.load(ordering: .relaxed) == 2 && tracer.finishedSpans.count == 5 }
        let spans = tracer.finishedSpans
        let place = try #require(spans.first { $0.operationName == "orders place" })
        let fail = try #require(spans.first { $0.operationName == "orders fail" })
        let charges = spans.filter { $0.operationName == "charge" }
        #expect(charges.count == 2)
        let placeCharge = try #require(charges.first { $0.parentSpanID == place.spanID })
        let failCharge = try #require(charges.first { $0.parentSpanID == fail.spanID })
        #expect(placeCharge.errors.isEmpty)
        #expect(failCharge.errors.count == 1)
        #expect(failCharge.status?.code == .error)
        // The effect that the side effect started is a child of the side effect's span.
        let ship = try #require(spans.first { $0.operationName == "ship" })
        #expect(ship.parentSpanID == placeCharge.spanID)
    }

    @Test func aTracerNotBootstrappedInstallsNothing() async {
        // `InstrumentationSystem` is not bootstrapped in these tests: `tracer: nil` finds the NoOpTracer.
        let seenContexts = Atomic<Int>(0)
        let store = Store<Int, OrderAction>(
            initialState: 0,
            reducer: orderReducer,
            middleware: [
                Middlewares.tracing(store: "orders"),
                Middleware { _ in
                    { next in
                        { action in
                            if ServiceContext.current != nil { seenContexts.add(1, ordering: .relaxed) }
                            next(action)
                        }
                    }
                },
            ]
        )
        for id in 0..<10 { store.dispatch(.place(id: id)) }
        #expect(store.state == 10)
        #expect(seenContexts.load(ordering: .relaxed) == 0)
        // A traced effect with the NoOpTracer runs its work untouched.
        let value = try? await store.startTraced("noop") { _ in 42 }.value
        #expect(value == 42)
    }
}
