// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/DeadlinesAndTimers.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/DeadlinesAndTimers.md, in order (compiled; run only where a test calls `snippets()`).
enum DeadlinesAndTimersSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/DeadlinesAndTimers.md:35
        struct Auction: Sendable, Equatable {
            var price: Int
            var endsAt: Date
            var isOpen = true
        }

        struct AuctionState: Sendable, Equatable {
            var auctions: [Int: Auction] = [:]
        }

        enum AuctionAction: Sendable, Equatable {
            case open(auction: Int, price: Int, endsAt: Date)
            case extend(auction: Int, endsAt: Date)
            case withdraw(auction: Int)
            case close(auction: Int)
        }

        let auctionReducer = Reducer<AuctionState, AuctionAction>(mutating: { state, action in
            switch action {
            case .open(let id, let price, let endsAt):
                state.auctions[id] = Auction(price: price, endsAt: endsAt)
            case .extend(let id, let endsAt):
                state.auctions[id]?.endsAt = endsAt
            case .withdraw(let id):
                state.auctions[id] = nil
            case .close(let id):
                state.auctions[id]?.isOpen = false
            }
        })

        /// The id of an auction's deadline timer.
        struct AuctionDeadline: Hashable, Sendable {
            let auction: Int
        }
        _ = auctionReducer

        // Sources/Sluice/Sluice.docc/DeadlinesAndTimers.md:76
        enum Deadlines {
            /// Closes `auction` once `endsAt` has come, replacing the deadline it had.
            static func set(of auction: Int, at endsAt: Date, _ api: MiddlewareAPI<AuctionState, AuctionAction>) {
                let remaining = endsAt.timeIntervalSince(api.dependencies.date.now)
                api.schedule(id: AuctionDeadline(auction: auction), cancelInFlight: true, after: .seconds(remaining)) { api in
                    api.dispatch(.close(auction: auction))
                }
            }
        }

        let deadlines = SideEffect<AuctionState, AuctionAction> { action, api in
            switch action {
            case .open(let id, _, let endsAt), .extend(let id, let endsAt):
                Deadlines.set(of: id, at: endsAt, api)
            case .withdraw(let id):
                api.cancel(id: AuctionDeadline(auction: id))
            case .close:
                break
            }
        }
        _ = deadlines

        // Sources/Sluice/Sluice.docc/DeadlinesAndTimers.md:102
        func anAuctionClosesAtItsDeadline() {
            let scheduler = TestScheduler()
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            let store = Store<AuctionState, AuctionAction>(
                initialState: AuctionState(),
                reducer: auctionReducer,
                middleware: [Middleware(deadlines)],
                dependencies: .test {
                    $0.scheduler = scheduler
                    $0.date = .constant(start)
                }
            )
            store.dispatch(.open(auction: 1, price: 100, endsAt: start + 60))
            store.dispatch(.open(auction: 2, price: 100, endsAt: start + 90))
            store.dispatch(.open(auction: 3, price: 100, endsAt: start + 30))
            store.dispatch(.extend(auction: 1, endsAt: start + 120))  // moves auction 1's deadline
            store.dispatch(.withdraw(auction: 3))                       // cancels auction 3's deadline

            scheduler.advance(by: .seconds(90))
            #expect(store.state.auctions[1]?.isOpen == true)
            #expect(store.state.auctions[2]?.isOpen == false)
            scheduler.advance(by: .seconds(30))
            #expect(store.state.auctions[1]?.isOpen == false)
            #expect(scheduler.pendingWorkCount == 0)
        }
        anAuctionClosesAtItsDeadline()

        // Sources/Sluice/Sluice.docc/DeadlinesAndTimers.md:138
        /// Sets the deadline of every open auction of the recovered state; run once at start, before serving.
        func restoreDeadlines(in store: Store<AuctionState, AuctionAction>) {
            store.run { api in
                for (id, auction) in api.state.auctions where auction.isOpen {
                    Deadlines.set(of: id, at: auction.endsAt, api)
                }
            }
        }

        // Sources/Sluice/Sluice.docc/DeadlinesAndTimers.md:153
        func deadlinesAreRecomputedFromTheRecoveredState() {
            let scheduler = TestScheduler()
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            var recovered = AuctionState()
            recovered.auctions[1] = Auction(price: 120, endsAt: now - 300)  // ended while the service was down
            recovered.auctions[2] = Auction(price: 80, endsAt: now + 45)
            recovered.auctions[3] = Auction(price: 95, endsAt: now - 10, isOpen: false)  // closed before the restart
            let store = Store<AuctionState, AuctionAction>(
                initialState: recovered,
                reducer: auctionReducer,
                middleware: [Middleware(deadlines)],
                dependencies: .test {
                    $0.scheduler = scheduler
                    $0.date = .constant(now)
                }
            )
            restoreDeadlines(in: store)

            scheduler.advance(by: .zero)  // the scheduler's first turn: the deadline that passed
            #expect(store.state.auctions[1]?.isOpen == false)
            #expect(store.state.auctions[2]?.isOpen == true)
            scheduler.advance(by: .seconds(45))
            #expect(store.state.auctions[2]?.isOpen == false)
            #expect(scheduler.pendingWorkCount == 0)
        }
        deadlinesAreRecomputedFromTheRecoveredState()
    }
}
