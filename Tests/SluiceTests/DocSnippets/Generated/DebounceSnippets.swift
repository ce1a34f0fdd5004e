// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/Debounce.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/Debounce.md, in order (compiled; run only where a test calls `snippets()`).
enum DebounceSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/Debounce.md:12
        let saveSnapshot = Middlewares.debounce(.milliseconds(500)) {
            (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
            try? snapshotWriter.write(api.state)
        }
        _ = saveSnapshot

        // Sources/Sluice/Sluice.docc/Operators/Debounce.md:42
        let saveUnderLoad = Middlewares.debounce(.milliseconds(100), maxWait: .seconds(1)) {
            (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
            try? snapshotWriter.write(api.state)
        }
        _ = saveUnderLoad
    }
}
