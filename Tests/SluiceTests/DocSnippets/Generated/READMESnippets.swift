// swift-format-ignore-file
// Generated from README.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of README.md, in order (compiled; run only where a test calls `snippets()`).
enum READMESnippets {
    static func snippets() async throws {
        // README.md:35
        struct AppState: Sendable {
            var count = 0
            var history: [Int] = []
        }

        enum AppAction: Sendable {
            case increment
            case add(Int)
        }

        let counter = Reducer<AppState, AppAction>(mutating: { state, action in
            switch action {
            case .increment: state.count += 1
            case .add(let amount): state.count += amount
            }
            state.history.append(state.count)
        })

        let logger = Middleware<AppState, AppAction> { api in
            { next in
                { action in
                    next(action)
                    print("\(action) -> count \(api.state.count)")
                }
            }
        }

        let store = Store<AppState, AppAction>(initialState: AppState(), reducer: counter, middleware: [logger])
        let subscription = store.subscribe(to: \.count) { count in print("count is now", count) }

        store.dispatch(.increment)
        store.dispatch(.add(41))
        assert(store.state.count == 42)
        subscription.cancel()
        _ = counter
        _ = logger
        _ = store
        _ = subscription

        // README.md:105
        store.run { api in
            if api.state.count == 0 { api.dispatch(.add(10)) }        // synchronous, on this thread
        }

        let total = try await store.run { api in                        // asynchronous, returns its value
            api.dispatch(.add(try await fetchCount()))
            return api.state.count
        }

        store.start(id: "poll", cancelInFlight: true) { api in          // returns its Task at once
            while !Task.isCancelled { api.dispatch(.add(try await fetchCount())) }
        }
        store.cancel(id: "poll")
        _ = total

        // README.md:198
        do {
            let report = Middlewares.throttle(.seconds(1)) { (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
                print("count is", api.state.count)  // at most once a second, however many actions arrive
            }
            let store = Store<AppState, AppAction>(initialState: AppState(), reducer: counter, middleware: [Middleware(report)])
            _ = report
            _ = store
        }

        // README.md:229
        do {
            let store = Store<AppState, AppAction>(
                initialState: AppState(),
                reducer: counter,
                middleware: [Middlewares.logging(diff: true, maxLineLength: 160, sampling: .every(10))]
            )
            _ = store
        }

        // README.md:271
        func addAddsTheAmount() {
            let next = counter(AppState(), .add(41))
            #expect(next.count == 41)
            #expect(next.history == [41])
        }
        addAddsTheAmount()

        // README.md:283
        func everyActionIsLogged() {
            let lines = Recorder<String>()  // a small lock-guarded array of your test support code
            let store = Store<AppState, AppAction>(
                initialState: AppState(),
                reducer: counter,
                middleware: [Middlewares.logging(sink: { lines.append($0) })]
            )
            store.dispatch(.increment)
            #expect(lines.values.count == 1)
            #expect(lines.values[0].hasPrefix("increment in "))
        }
        everyActionIsLogged()

        // README.md:302
        func reportIsDebounced() {
            let scheduler = TestScheduler()
            let reports = Recorder<Int>()
            let report = Middlewares.debounce(.milliseconds(300), on: scheduler) {
                (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
                reports.append(api.state.count)
            }
            let store = Store<AppState, AppAction>(
                initialState: AppState(),
                reducer: counter,
                middleware: [Middleware(report)]
            )
            store.dispatch(.increment)
            store.dispatch(.add(41))
            scheduler.advance(by: .milliseconds(299))
            #expect(reports.values == [])
            scheduler.advance(by: .milliseconds(1))
            #expect(reports.values == [42])
        }
        reportIsDebounced()
    }
}
