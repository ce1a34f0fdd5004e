// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md, in order (compiled; run only where a test calls `snippets()`).
enum TestingWithTestSchedulerSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:35
        func shippingRemovesThePendingOrder() {
            let state = OrderState(pending: [1, 2], shipped: 0)
            let next = orders(state, .ship(id: 1))
            #expect(next == OrderState(pending: [2], shipped: 1))
        }
        shippingRemovesThePendingOrder()

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:49
        func duplicatesAreDropped() {
            let store = Store<OrderState, OrderAction>(
                initialState: OrderState(),
                reducer: orders,
                middleware: [dropDuplicates]
            )
            store.dispatch(.place(id: 1))
            store.dispatch(.place(id: 1))
            #expect(store.state.pending == [1])
        }
        duplicatesAreDropped()

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:65
        final class Recorder<Value: Sendable>: @unchecked Sendable {
            private let lock = NSLock()  // @unchecked: `storage` is only used with `lock` held.
            private var storage: [Value] = []

            func append(_ value: Value) {
                lock.withLock { storage.append(value) }
            }

            var values: [Value] {
                lock.withLock { storage }
            }
        }

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:82
        func shipmentsAreLogged() {
            let lines = Recorder<String>()
            let store = Store<OrderState, OrderAction>(
                initialState: OrderState(pending: [1], shipped: 0),
                reducer: orders,
                middleware: [Middlewares.logging(diff: true, sink: { lines.append($0) })]
            )
            store.dispatch(.ship(id: 1))
            #expect(lines.values.count == 1)
            #expect(lines.values[0].hasSuffix("| pending.count: 1 -> 0; pending[0]: 1 -> (none); shipped: 0 -> 1"))
        }
        shipmentsAreLogged()

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:123
        func searchIsDebounced() {
            let scheduler = TestScheduler()
            let searches = Recorder<String>()
            let search = Middlewares.debounce(.milliseconds(300), on: scheduler) {
                (action: SearchAction, api: MiddlewareAPI<SearchState, SearchAction>) in
                if case .type(let text) = action { searches.append(text) }
            }
            let store = Store<SearchState, SearchAction>(
                initialState: SearchState(),
                reducer: searchReducer,
                middleware: [Middleware(search)]
            )

            store.dispatch(.type("s"))
            scheduler.advance(by: .milliseconds(100))
            store.dispatch(.type("sl"))            // restarts the quiet period
            scheduler.advance(by: .milliseconds(299))
            #expect(searches.values == [])         // 299 ms of quiet: not yet
            scheduler.advance(by: .milliseconds(1))
            #expect(searches.values == ["sl"])     // once, with the last action
            #expect(scheduler.pendingWorkCount == 0)
        }
        searchIsDebounced()

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:159
        func throttleLatestRunsTheNewestActionOfEachWindow() {
            let scheduler = TestScheduler()
            let start = scheduler.now
            let runs = Recorder<(at: Int, action: Int)>()
            let elapsed: @Sendable () -> Int = {
                Int((scheduler.now.uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000)
            }
            let report = Middlewares.throttle(.milliseconds(100), latest: true, on: scheduler) {
                (action: Int, api: MiddlewareAPI<Int, Int>) in
                runs.append((at: elapsed(), action: action))
            }
            let store = Store<Int, Int>(
                initialState: 0,
                reducer: Reducer(mutating: { count, _ in count += 1 }),
                middleware: [Middleware(report)]
            )
            for time in stride(from: 0, through: 340, by: 10) {
                scheduler.advance(to: start + .milliseconds(time))
                store.dispatch(time)
            }
            scheduler.run()
            #expect(runs.values.map(\.at) == [0, 100, 200, 300, 400])
            #expect(runs.values.map(\.action) == [0, 90, 190, 290, 340])
            #expect(store.state == 35)  // every action was reduced
        }
        throttleLatestRunsTheNewestActionOfEachWindow()

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:193
        func aLateSearchRunsOnceWithTheLastText() {
            let scheduler = TestScheduler()
            let searches = Recorder<String>()
            let search = Middlewares.debounce(.milliseconds(300), on: scheduler) {
                (action: SearchAction, api: MiddlewareAPI<SearchState, SearchAction>) in
                if case .type(let text) = action { searches.append(text) }
            }
            let store = Store<SearchState, SearchAction>(
                initialState: SearchState(),
                reducer: searchReducer,
                middleware: [Middleware(search)]
            )

            store.dispatch(.type("s"))
            scheduler.letTimePass(by: .milliseconds(400))   // the run of "s" is due; the queue is busy
            store.dispatch(.type("sl"))                      // supersedes it
            scheduler.advance(by: .milliseconds(300))
            #expect(searches.values == ["sl"])
        }
        aLateSearchRunsOnceWithTheLastText()

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:228
        do {
            struct Query: Equatable, Sendable {
                var text = ""
                var results: [String] = []
            }

            enum QueryAction: Equatable, Sendable {
                case type(String)
                case found([String])
            }

            let queryReducer = Reducer<Query, QueryAction>(mutating: { state, action in
                switch action {
                case .type(let text): state.text = text
                case .found(let results): state.results = results
                }
            })

            func typingSearchesOnceItIsQuiet() async {
                let scheduler = TestScheduler()
                let search = Middlewares.debounce(.milliseconds(300), on: scheduler) {
                    (action: QueryAction, api: MiddlewareAPI<Query, QueryAction>) in
                    if case .type(let text) = action { api.dispatch(.found([text + "1", text + "2"])) }
                }
                let store = TestStore(
                    initialState: Query(),
                    reducer: queryReducer,
                    middleware: [Middleware(search)],
                    schedulers: [scheduler]
                )
                store.send(.type("s")) { $0.text = "s" }
                store.send(.type("sl")) { $0.text = "sl" }
                scheduler.advance(by: .milliseconds(300))
                store.receive(.found(["sl1", "sl2"])) { $0.results = ["sl1", "sl2"] }
                // `.found` passed through the debounce too and started a quiet period of its own: without this line,
                // finish() fails for the timer still pending on the scheduler.
                scheduler.advance(by: .milliseconds(300))
                await store.finish()
            }
            _ = queryReducer
            await typingSearchesOnceItIsQuiet()
        }

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:274
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

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:335
        do {
            struct Tickets: Equatable, Sendable {
                var open: [UUID] = []
            }

            enum TicketAction: Equatable, Sendable {
                case open
                case opened(UUID)
            }

            let ticketsReducer = Reducer<Tickets, TicketAction>(mutating: { state, action in
                if case .opened(let id) = action { state.open.append(id) }
            })

            func aTicketOpensASecondLaterWithTheNextID() async {
                let scheduler = TestScheduler()
                let openLater = Middlewares.delay(.seconds(1)) {
                    (action: TicketAction, api: MiddlewareAPI<Tickets, TicketAction>) in
                    if action == .open { api.dispatch(.opened(api.dependencies.makeID())) }
                }
                let store = TestStore(
                    initialState: Tickets(),
                    reducer: ticketsReducer,
                    middleware: [Middleware(openLater)],
                    dependencies: .test { $0.scheduler = scheduler },  // the delay runs on the test's scheduler
                    schedulers: [scheduler]
                )
                store.send(.open)
                scheduler.advance(by: .seconds(1))
                let first = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!  // makeID's test value counts from 0
                store.receive(.opened(first)) { $0.open = [first] }
                scheduler.advance(by: .seconds(1))  // `.opened` was delayed too
                await store.finish()
            }
            _ = ticketsReducer
            await aTicketOpensASecondLaterWithTheNextID()
        }

        // Sources/Sluice/Sluice.docc/TestingWithTestScheduler.md:382
        do {
            struct Basket: Equatable, Sendable {
                var count = 0
                var items: [String] = []
                var lastAdded: String?
            }

            enum BasketAction: Equatable, Sendable {
                case add(String)
            }

            let basketReducer = Reducer<Basket, BasketAction>(mutating: { basket, action in
                if case .add(let item) = action {
                    basket.count += 1
                    basket.items.append(item)
                    basket.lastAdded = item
                }
            })

            func addingCountsTheItem() async {
                let store = TestStore(
                    initialState: Basket(),
                    reducer: basketReducer,
                    exhaustivity: .off  // after `middleware:`, `dependencies:` and `schedulers:` when a test passes them
                )
                store.send(.add("tea")) { $0.count += 1 }  // `items` and `lastAdded` changed too: not compared
                store.exhaustivity = .on  // from here on, every change is asserted
                store.send(.add("milk")) {
                    $0.count = 2
                    $0.items.append("milk")
                    $0.lastAdded = "milk"
                }
                await store.finish()
            }
            _ = basketReducer
            await addingCountsTheItem()
        }
    }
}
