// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/LoggingAndMetrics.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/LoggingAndMetrics.md, in order (compiled; run only where a test calls `snippets()`).
enum LoggingAndMetricsSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/LoggingAndMetrics.md:39
        let records: Middleware<OrderState, OrderAction> = Middlewares.logging(
            level: .debug,
            diffing: { state, _ in (pending: state.pending.count, shipped: state.shipped) },
            sampling: .every(100),
            isEnabled: { level in level >= minimumLevel }
        ) { record in
            let changes = record.changes?.map(\.description).joined(separator: "; ") ?? ""
            print(record.level, record.actionDescription, record.durationText, record.waitedText, changes)
        }
        _ = records

        // Sources/Sluice/Sluice.docc/LoggingAndMetrics.md:80
        enum AuctionAction: Sendable, LogDescribable {
            case bid(auction: Int, amount: Int)
            case rename(auction: Int, String)
            case close

            func describe(into description: inout LogDescription) {
                switch self {
                case .bid(let auction, let amount):
                    description.enumCase("bid")
                    description.field("auction", auction)
                    description.field("amount", amount)
                case .rename(let auction, let title):
                    description.enumCase("rename")
                    description.field("auction", auction)
                    description.field(title)
                case .close:
                    description.enumCase("close")
                }
            }
        }

        let auctions = Store<Int, AuctionAction>(
            initialState: 0,
            reducer: .identity,
            middleware: [Middlewares.logging(sampling: .every(100))]
        )
        auctions.dispatch(.bid(auction: 35, amount: 101_500))  // bid(auction: 35, amount: 101500) in 2.1µs
        _ = auctions

        // Sources/Sluice/Sluice.docc/LoggingAndMetrics.md:179
        let measured = Store<OrderState, OrderAction>(
            initialState: OrderState(),
            reducer: orders,
            instrumentation: StoreInstrumentation { measurement in
                print(measurement.actionCaseName, measurement.duration, measurement.waited, measurement.queueDepth)
            }
        )
        measured.dispatch(.place(id: 7))
        _ = measured
    }
}
