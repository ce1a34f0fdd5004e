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
        // README.md:40
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

        // README.md:114
        do {
            let last = store.read { $0.history.last }                          // borrowed, under the lock
            let total = store.dispatch(.add(5), reading: { $0.count })         // the state right after this action
            let watcher = store.subscribe(to: \.history, by: \.count) { history in print(history.count, "entries") }
            _ = last
            _ = total
            _ = watcher
        }

        // README.md:127
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

        // README.md:154
        let audit = SideEffect<AppState, AppAction> { action, api in
            print("\(action) as \(api.dependencies.makeID()) at \(api.dependencies.date.now.timeIntervalSince1970)")
        }

        let scheduler = TestScheduler()
        let audited = Store<AppState, AppAction>(
            initialState: AppState(),
            reducer: counter,
            middleware: [Middleware(audit), Middleware(Middlewares.delay(.seconds(5), audit))],
            dependencies: .test {
                $0.date = .constant(Date(timeIntervalSince1970: 0))
                $0.scheduler = scheduler                      // every throttle, debounce and delay of the store
            }
        )
        audited.dispatch(.increment)  // "increment as 00000000-0000-0000-0000-000000000000 at 0.0"
        scheduler.advance(by: .seconds(5))  // "increment as 00000000-0000-0000-0000-000000000001 at 0.0"
        _ = audit
        _ = scheduler
        _ = audited

        // README.md:319
        do {
            let journal = try Journal(directory: dataDirectory)
            let store = try Store<Counter, CounterAction>(
                recoveringFrom: journal,
                durability: .everyAction,  // or .groupCommit(interval:) with journal.run(), or .none
                initialState: Counter(),
                reducer: counterReducer
            )
            store.dispatch(.add(1))  // written and fsynced before the reducer ran
            try journal.snapshot(store)
            _ = journal
            _ = store
        }

        // README.md:372
        do {
            let report = Middlewares.throttle(.seconds(1)) { (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
                print("count is", api.state.count)  // at most once a second, however many actions arrive
            }
            let store = Store<AppState, AppAction>(initialState: AppState(), reducer: counter, middleware: [Middleware(report)])
            _ = report
            _ = store
        }

        // README.md:411
        do {
            let store = Store<AppState, AppAction>(
                initialState: AppState(),
                reducer: counter,
                middleware: [],
                onEffectError: { failure in print("effect failed:", failure.error) }
            )
            let report = await store.shutdown(timeout: .seconds(5))
            print("ran \(report.flushedRuns) owed runs, \(report.finishedTasks) tasks finished, \(report.cancelledTasks) cancelled")
            _ = store
            _ = report
        }

        // README.md:436
        do {
            let store = Store<AppState, AppAction>(
                initialState: AppState(),
                reducer: counter,
                middleware: [Middlewares.logging(diff: true, maxLineLength: 160, sampling: .every(10))]
            )
            _ = store
        }

        // README.md:466
        do {
            let minimumLevel = Middlewares.LogLevel.info
            let store = Store<AppState, AppAction>(
                initialState: AppState(),
                reducer: counter,
                middleware: [
                    Middlewares.logging(level: .debug, diff: true, isEnabled: { $0 >= minimumLevel }) { record in
                        print(record.level, record.actionDescription, record.durationText, record.changes ?? [])
                    }
                ],
                instrumentation: StoreInstrumentation { measurement in
                    print(measurement.actionCaseName, measurement.duration, measurement.waited, measurement.queueDepth)
                }
            )
            _ = minimumLevel
            _ = store
        }

        // README.md:586
        func addAddsTheAmount() {
            let next = counter(AppState(), .add(41))
            #expect(next.count == 41)
            #expect(next.history == [41])
        }
        addAddsTheAmount()

        // README.md:598
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

        // README.md:617
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

        // README.md:649
        do {
            struct Quote: Equatable, Sendable {
                var symbol = ""
                var price: Int?
                var isLoading = false
            }

            enum QuoteAction: Equatable, Sendable {
                case request(String)
                case received(Int)
            }

            let quoteReducer = Reducer<Quote, QuoteAction>(mutating: { quote, action in
                switch action {
                case .request(let symbol):
                    quote.symbol = symbol
                    quote.isLoading = true
                case .received(let price):
                    quote.price = price
                    quote.isLoading = false
                }
            })

            func aRequestedQuoteArrives() async {
                let price: @Sendable (String) async -> Int = { _ in 42 }  // the quote service, faked
                let fetch = SideEffect<Quote, QuoteAction> { (action: QuoteAction, api: MiddlewareAPI<Quote, QuoteAction>) async in
                    guard case .request(let symbol) = action else { return }
                    api.dispatch(.received(await price(symbol)))
                }
                let store = TestStore(initialState: Quote(), reducer: quoteReducer, middleware: [Middleware(fetch)])
                store.send(.request("ACME")) {
                    $0.symbol = "ACME"
                    $0.isLoading = true
                }
                await store.receive(.received(42), timeout: .seconds(30)) {
                    $0.price = 42
                    $0.isLoading = false
                }
                await store.finish()
            }
            _ = quoteReducer
            await aRequestedQuoteArrives()
        }
    }
}
