// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/Shutdown.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/Shutdown.md, in order (compiled; run only where a test calls `snippets()`).
enum ShutdownSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/Shutdown.md:12
        let report = await store.shutdown(timeout: .seconds(5))
        print("ran \(report.flushedRuns) owed runs, cancelled \(report.cancelledTasks) tasks")
        _ = report
    }
}
