internal import Sluice
internal import Testing

#if canImport(XCTest)
// Linked only where the toolchain has XCTest; elsewhere failures go to Swift Testing and standard error.
internal import XCTest
#endif

/// Where a test store's assertion was written, for the failure it reports.
///
/// `filePath` is a `StaticString` because that is what XCTest's `XCTFail` takes; Swift Testing gets it as a string.
struct CallSite: Sendable {
    let fileID: String
    let filePath: StaticString
    let line: Int
    let column: Int

    var sourceLocation: SourceLocation {
        SourceLocation(fileID: fileID, filePath: "\(filePath)", line: line, column: column)
    }
}

/// Reports a test store's failure (or, with `.warning`, a skipped assertion) at `site`, to the test framework that
/// runs the calling test.
///
/// - In a Swift Testing test (`Test.current` is set on the test's task): `Issue.record`.
/// - Otherwise, where XCTest is available, a failure is also given to `XCTFail`, which fails the XCTest test case
///   that is running (XCTest knows it process-wide, from any thread) and does nothing when none is. XCTest has no
///   warnings: a skipped assertion is not given to it.
/// - Without a current Swift Testing test, `Issue.record` is called too (in a Swift Testing run it still fails the
///   run: an issue from a detached task of a test), and the message goes to standard error so that it is never lost.
func reportIssue(_ message: String, at site: CallSite, severity: Issue.Severity = .error) {
    if let recorder = TestStoreIssueRecorder.current {
        recorder(TestStoreIssueRecorder.Issue(message: message, isWarning: severity == .warning, line: site.line))
        return
    }
    Issue.record(Comment(rawValue: message), severity: severity, sourceLocation: site.sourceLocation)
    if Test.current != nil { return }
    #if canImport(XCTest)
    if severity == .error {
        XCTFail(message, file: site.filePath, line: UInt(site.line))
    }
    #endif
    let label = severity == .error ? "failure" : "warning"
    Middlewares.writeToStandardError("\(site.fileID):\(site.line): TestStore \(label): \(message)")
}

/// A hook for the tests of the test store itself: while `current` is set (a task-local value), issues go to it
/// instead of to Swift Testing and XCTest, so that a test can check each message, warnings included.
package enum TestStoreIssueRecorder {
    /// One issue that a test store reported.
    package struct Issue: Sendable, Equatable {
        package let message: String
        package let isWarning: Bool
        /// The line of the call that the issue is reported at.
        package let line: Int

        package init(message: String, isWarning: Bool, line: Int) {
            self.message = message
            self.isWarning = isWarning
            self.line = line
        }
    }

    @TaskLocal package static var current: (@Sendable (Issue) -> Void)?
}
