// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/TakeLeading.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/TakeLeading.md, in order (compiled; run only where a test calls `snippets()`).
enum TakeLeadingSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/TakeLeading.md:13
        let refresh = Middlewares.takeLeading { (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) async in
            guard case .quoteRequested(let symbol) = action else { return }
            let quote = await quoteService.fetch(symbol)
            api.dispatch(.quoteReceived(symbol, quote))
        }
        _ = refresh
    }
}
