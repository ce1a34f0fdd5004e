// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/TakeLatest.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/TakeLatest.md, in order (compiled; run only where a test calls `snippets()`).
enum TakeLatestSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/TakeLatest.md:19
        let quotes = Middlewares.takeLatest { (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) async in
            guard case .quoteRequested(let symbol) = action else { return }
            let quote = await quoteService.fetch(symbol)
            api.dispatch(.quoteReceived(symbol, quote))   // dropped if a newer request came in meanwhile
        }
        _ = quotes
    }
}
