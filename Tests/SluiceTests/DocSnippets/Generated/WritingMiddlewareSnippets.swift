// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/WritingMiddleware.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/WritingMiddleware.md, in order (compiled; run only where a test calls `snippets()`).
enum WritingMiddlewareSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:11
        let audit = Middleware<OrderState, OrderAction> { api in
            // Runs once, when a store installs the middleware: per-store state goes here.
            { next in
                // Runs once too; `next` is the rest of the chain.
                { action in
                    // Runs for every action.
                    let before = api.state.pending.count
                    next(action)
                    print(action, "pending:", before, "->", api.state.pending.count)
                }
            }
        }

        let store = Store<OrderState, OrderAction>(initialState: OrderState(), reducer: orders, middleware: [audit])
        _ = audit
        _ = store

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:43
        let dropDuplicates = Middleware<OrderState, OrderAction> { api in
            { next in
                { action in
                    if case .place(let id) = action, api.state.pending.contains(id) {
                        return  // swallowed: already pending
                    }
                    next(action)
                }
            }
        }
        _ = dropDuplicates

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:72
        final class Counter: @unchecked Sendable {
            private let lock = NSLock()  // @unchecked: `count` is only used with `lock` held.
            private var count = 0

            func increment() -> Int {
                lock.withLock {
                    count += 1
                    return count
                }
            }
        }

        let numbering = Middleware<OrderState, OrderAction> { api in
            let counter = Counter()  // one per store
            return { next in
                { action in
                    print("action #\(counter.increment()):", action)
                    next(action)
                }
            }
        }
        _ = numbering

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:100
        let reswiftStyle = Middleware<OrderState, OrderAction> { dispatch, getState in
            { next in
                { action in
                    next(action)
                    if getState().pending.count > 100 { print("backlog") }
                }
            }
        }
        _ = reswiftStyle

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:117
        let announce = SideEffect<OrderState, OrderAction> { action, api in
            if case .ship(let id) = action {
                print("shipped", id, "- still pending:", api.state.pending.count)
            }
        }
        let shop = Store<OrderState, OrderAction>(
            initialState: OrderState(),
            reducer: orders,
            middleware: [Middleware(announce)]
        )
        _ = announce
        _ = shop

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:150
        let saveSoon = Middlewares.debounce(.seconds(1)) {
            (action: OrderAction, api: MiddlewareAPI<OrderState, OrderAction>) in
            print("saving", api.state.pending.count, "pending orders")
        }
        let saving = Store<OrderState, OrderAction>(
            initialState: OrderState(),
            reducer: orders,
            middleware: [Middleware(saveSoon)]
        )
        _ = saveSoon
        _ = saving

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:196
        do {
            let store = Store<OrderState, OrderAction>(
                initialState: OrderState(),
                reducer: orders,
                middleware: [Middlewares.logging(diff: true)]
            )
            store.dispatch(.place(id: 7))
            store.dispatch(.ship(id: 7))
            store.dispatch(.ship(id: 8))
            _ = store
        }

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:279
        let shipments: Middleware<OrderState, OrderAction> = Middlewares.logging(
            sampling: .every(100),
            include: { action in if case .ship = action { true } else { false } },
            sink: { line in Middlewares.writeToStandardOutput("[orders] " + line) }
        )
        _ = shipments

        // Sources/Sluice/Sluice.docc/WritingMiddleware.md:302
        let audited = Store<OrderState, OrderAction>(
            initialState: OrderState(),
            reducer: orders,
            middleware: [
                Middlewares.logging(
                    diffing: { state, _ in (pending: state.pending.count, shipped: state.shipped) },
                    sampling: .every(100)
                )
            ]
        )
        audited.dispatch(.place(id: 7))
        // standard error: place(id: 7) in 2.1µs | pending: 0 -> 1
        _ = audited
    }
}
