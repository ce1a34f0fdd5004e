// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/Throttle.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/Throttle.md, in order (compiled; run only where a test calls `snippets()`).
enum ThrottleSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/Throttle.md:29
        let reportMetrics = Middlewares.throttle(.seconds(1), latest: true) {
            (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
            metrics.report(api.state.metrics)
        }
        let store = Store<AppState, AppAction>(
            initialState: AppState(), reducer: appReducer, middleware: [Middleware(reportMetrics)]
        )
        _ = reportMetrics
        _ = store

        // Sources/Sluice/Sluice.docc/Operators/Throttle.md:69
        let reportInline = Middlewares.throttle(.seconds(5), runs: .inDispatch) {
            (action: AppAction, api: MiddlewareAPI<AppState, AppAction>) in
            metrics.report(api.state.metrics)
        }
        _ = reportInline
    }
}
