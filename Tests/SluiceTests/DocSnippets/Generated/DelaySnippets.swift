// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/Delay.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/Delay.md, in order (compiled; run only where a test calls `snippets()`).
enum DelaySnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/Delay.md:11
        let confirm = Middlewares.delay(.seconds(2)) { (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
            if case .orderPlaced(let id) = action { api.dispatch(.confirm(id)) }
        }
        _ = confirm
    }
}
