// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/Combine.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/Combine.md, in order (compiled; run only where a test calls `snippets()`).
enum CombineSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/Combine.md:16
        let effects = Middlewares.combine(logToFile, Middlewares.filter(isOrder, notifyWarehouse))
        let store = Store<AppState, AppAction>(
            initialState: AppState(), reducer: appReducer, middleware: [Middleware(effects)]
        )
        _ = effects
        _ = store
    }
}
