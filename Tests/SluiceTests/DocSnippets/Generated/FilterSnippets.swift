// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Operators/Filter.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Operators/Filter.md, in order (compiled; run only where a test calls `snippets()`).
enum FilterSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Operators/Filter.md:14
        let audit = Middlewares.filter({ (action: AppAction) in action.isAdminAction }, auditMiddleware)
        let save = Middlewares.filter({ (action: AppAction) in action.changesOrders }, saveEffect)
        _ = audit
        _ = save

        // Sources/Sluice/Sluice.docc/Operators/Filter.md:25
        let throttledOrders = Middlewares.throttle(.seconds(1), Middlewares.filter(isOrder, report))
        let sameThing = Middlewares.filter(isOrder, Middlewares.throttle(.seconds(1), report))  // behaves the same
        _ = throttledOrders
        _ = sameThing
    }
}
