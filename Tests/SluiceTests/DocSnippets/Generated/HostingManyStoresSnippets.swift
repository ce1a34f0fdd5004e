// swift-format-ignore-file
// Generated from Sources/SluiceHost/SluiceHost.docc/HostingManyStores.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceHost
import SluiceJournal
import SluiceTesting
import Testing

/// The Swift blocks of Sources/SluiceHost/SluiceHost.docc/HostingManyStores.md, in order (compiled; run only where a test calls `snippets()`).
enum HostingManyStoresSnippets {
    static func snippets() async throws {
        // Sources/SluiceHost/SluiceHost.docc/HostingManyStores.md:12
        let host = StoreHost<String, Cart, CartAction>(
            directory: dataDirectory,           // a journal per id: dataDirectory/<id>
            durability: .none,                  // each action written; synced when a request asks (sendDurably)
            activeLimit: 10_000,                // at most this many stores in memory
            idleTimeout: .seconds(120),         // passivate a store after two minutes without a request
            initialState: { customer in Cart(customer: customer) },
            reducer: cartReducer
        )
        _ = host

        // Sources/SluiceHost/SluiceHost.docc/HostingManyStores.md:30
        try await host.send(.add(item: "book", quantity: 1), to: "alice")
        let total = try await host.send(.add(item: "pen", quantity: 2), to: "alice", reading: { $0.quantity })
        try await host.sendDurably(.checkOut, to: "alice")  // the acknowledgement of a request handler
        let items = try await host.read("alice") { $0.items.count }
        _ = total
        _ = items

        // Sources/SluiceHost/SluiceHost.docc/HostingManyStores.md:91
        func aQuietCartIsPassivated() async throws {
            let scheduler = TestScheduler()
            let host = StoreHost<String, Cart, CartAction>(
                directory: dataDirectory,
                durability: .none,
                idleTimeout: .seconds(120),
                scheduler: scheduler,
                initialState: { customer in Cart(customer: customer) },
                reducer: cartReducer
            )
            try await host.send(.add(item: "book", quantity: 1), to: "bob")
            scheduler.advance(by: .seconds(150))  // past the idle time: bob's store is being passivated
            #expect(!host.isActive("bob"))
            #expect(try await host.read("bob") { $0.quantity } == 1)  // waits for the passivation, activates again
            #expect(host.statistics.idlePassivations == 1)
            await host.shutdown()
        }
        try await aQuietCartIsPassivated()

        // Sources/SluiceHost/SluiceHost.docc/HostingManyStores.md:129
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await host.run() }
            try await host.send(.checkOut, to: "alice")
            group.cancelAll()  // run() shuts the host down: every store is passivated
        }

        // Sources/SluiceHost/SluiceHost.docc/HostingManyStores.md:149
        do {
            struct OnlyMine: StoreOwnership {
                struct NotMine: Error { let id: String }
                let mine: Set<String>

                func acquire(_ id: String) throws {
                    if !mine.contains(id) { throw NotMine(id: id) }
                }

                func release(_ id: String) {}
            }

            let placed = StoreHost<String, Cart, CartAction>(
                directory: dataDirectory,
                durability: .none,
                initialState: { customer in Cart(customer: customer) },
                reducer: cartReducer,
                ownership: OnlyMine(mine: ["alice", "bob"])
            )
            do {
                try await placed.send(.checkOut, to: "carol")
            } catch StoreHostError.notOwned(let id, _) {
                forwardToOwner(id)  // carol's store lives in another process
            }
            await placed.shutdown()
            _ = placed
        }
    }
}
