internal import Sluice
internal import Testing

/// Where a test store's assertion was written, for the failure it reports.
struct CallSite: Sendable {
    let fileID: String
    let filePath: String
    let line: Int
    let column: Int

    var sourceLocation: SourceLocation {
        SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    }
}

/// Reports a test store's failure (or, with `.warning`, a skipped assertion) to Swift Testing at `site`.
///
/// Outside a Swift Testing test (`Test.current` is `nil`) the message also goes to standard error, so that it
/// is not lost.
func reportIssue(_ message: String, at site: CallSite, severity: Issue.Severity = .error) {
    if let recorder = TestStoreIssueRecorder.current {
        recorder(TestStoreIssueRecorder.Issue(message: message, isWarning: severity == .warning, line: site.line))
        return
    }
    Issue.record(Comment(rawValue: message), severity: severity, sourceLocation: site.sourceLocation)
    if Test.current == nil {
        let label = severity == .error ? "failure" : "warning"
        Middlewares.writeToStandardError("\(site.fileID):\(site.line): TestStore \(label): \(message)")
    }
}

/// A hook for the tests of the test store itself: while `current` is set (a task-local value), issues go to it
/// instead of to Swift Testing, so that a test can check each message, warnings included.
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
