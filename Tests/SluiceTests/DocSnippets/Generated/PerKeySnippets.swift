// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/PerKey.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/PerKey.md, in order (compiled; run only where a test calls `snippets()`).
enum PerKeySnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/PerKey.md:25
        struct Auction: Sendable, Equatable {
            var price: Int
            var isOpen = true
        }

        struct AuctionState: Sendable, Equatable {
            var auctions: [Int: Auction] = [:]
        }

        enum AuctionAction: Sendable, Equatable {
            case open(auction: Int, price: Int)
            case bid(auction: Int, bidder: Int, amount: Int)
            case close(auction: Int)
            case auditAll

            /// The auction an action is about; `nil` for the actions about no auction.
            var auctionID: Int? {
                switch self {
                case .open(let id, _), .bid(let id, _, _), .close(let id): id
                case .auditAll: nil
                }
            }

            var bidderID: Int? {
                if case .bid(_, let bidder, _) = self { bidder } else { nil }
            }
        }

        let auctionReducer = Reducer<AuctionState, AuctionAction>(mutating: { state, action in
            switch action {
            case .open(let id, let price):
                state.auctions[id] = Auction(price: price)
            case .bid(let id, _, let amount):
                if let auction = state.auctions[id], auction.isOpen, amount > auction.price {
                    state.auctions[id]?.price = amount
                }
            case .close(let id):
                state.auctions[id]?.isOpen = false
            case .auditAll:
                break
            }
        })
        _ = auctionReducer

        // Sources/Sluice/Sluice.docc/Operators/PerKey.md:72
        let priceChanged = SideEffect<AuctionState, AuctionAction> { action, api in
            guard let id = action.auctionID, let auction = api.state.auctions[id] else { return }
            hub.broadcast("auction \(id): \(auction.price)")
        }
        let quiet = SideEffect<AuctionState, AuctionAction> { action, api in
            if let id = action.auctionID { hub.broadcast("auction \(id) is quiet") }
        }
        let creditLookup = SideEffect<AuctionState, AuctionAction> { action, api in
            guard let bidder = action.bidderID else { return }
            let limit = try await credit.limit(of: bidder)
            if api.isCancelled { return }  // a newer bid of this bidder superseded the lookup
            hub.broadcast("bidder \(bidder) may bid up to \(limit)")
        }

        let service = Store<AuctionState, AuctionAction>(
            initialState: AuctionState(),
            reducer: auctionReducer,
            middleware: [
                Middleware(Middlewares.throttle(.seconds(1), trailing: true, by: \.auctionID, priceChanged)),
                Middleware(Middlewares.debounce(.seconds(30), by: \.auctionID, quiet)),
                Middleware(Middlewares.takeLatest(by: \.bidderID, creditLookup)),
            ]
        )
        _ = priceChanged
        _ = quiet
        _ = creditLookup
        _ = service

        // Sources/Sluice/Sluice.docc/Operators/PerKey.md:150
        func eachAuctionBroadcastsAtMostOnceASecond() {
            let scheduler = TestScheduler()
            let sent = Recorder<String>()
            let broadcast = SideEffect<AuctionState, AuctionAction> { action, api in
                if case .bid(let id, _, let amount) = action { sent.append("\(id):\(amount)") }
            }
            let store = Store<AuctionState, AuctionAction>(
                initialState: AuctionState(),
                reducer: auctionReducer,
                middleware: [
                    Middleware(Middlewares.throttle(.seconds(1), runs: .inDispatch, on: scheduler, by: \.auctionID, broadcast))
                ]
            )
            for auction in 1...100 {
                store.dispatch(.bid(auction: auction, bidder: 7, amount: 10))
                store.dispatch(.bid(auction: auction, bidder: 8, amount: 11))  // inside its auction's window: dropped
            }
            #expect(sent.values.count == 100)
            #expect(sent.values.first == "1:10")
            scheduler.advance(by: .seconds(1))  // every window ended
            store.dispatch(.bid(auction: 1, bidder: 9, amount: 12))
            #expect(sent.values.last == "1:12")
        }
        eachAuctionBroadcastsAtMostOnceASecond()
    }
}
