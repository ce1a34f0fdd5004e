// The project's tests use Swift Testing; this file is XCTest on purpose: it proves that a test store used inside an
// XCTest test case fails that test case through XCTest (where `Issue.record` alone reaches nobody).
#if canImport(XCTest)
import Sluice
import SluiceTesting
import XCTest

/// A failure that XCTest recorded for this test case.
private struct RecordedFailure {
    let description: String
    let filePath: String
    let line: Int
}

/// A test store inside XCTest test cases. Each test captures the failures that XCTest records for the case while a
/// test store runs (by overriding XCTest's recording, since `XCTExpectFailure` does not exist on Linux), checks them,
/// and passes only if the test store's failure reached XCTest with its message, file and line.
final class TestStoreXCTestReportingTests: XCTestCase {
    /// While set, failures are kept here instead of failing the test case.
    private var captured: [RecordedFailure]?

    #if canImport(ObjectiveC)
    override func record(_ issue: XCTIssue) {
        guard captured != nil else { return super.record(issue) }
        let location = issue.sourceCodeContext.location
        captured?.append(
            RecordedFailure(
                description: issue.compactDescription,
                filePath: location?.fileURL.path ?? "",
                line: location?.lineNumber ?? 0
            )
        )
    }
    #else
    override func recordFailure(
        withDescription description: String,
        inFile filePath: String,
        atLine lineNumber: Int,
        expected: Bool
    ) {
        guard captured != nil else {
            return super.recordFailure(
                withDescription: description,
                inFile: filePath,
                atLine: lineNumber,
                expected: expected
            )
        }
        captured?.append(RecordedFailure(description: description, filePath: filePath, line: lineNumber))
    }
    #endif

    /// Runs `body` with XCTest's failures for this case captured instead of recorded, and returns them.
    private func capturingFailures(_ body: () -> Void) -> [RecordedFailure] {
        captured = []
        body()
        defer { captured = nil }
        return captured ?? []
    }

    func testStateMismatchFailsTheXCTestCaseAtTheLineOfTheCall() {
        var line = 0
        let failures = capturingFailures {
            let store = TestStore(initialState: Cart(), reducer: cartReducer)
            store.send(.add("pear")) {
                $0.count = 2
                $0.items = ["pear"]
            }
            line = #line - 4
        }
        XCTAssertEqual(failures.count, 1)
        let failure = failures.first
        XCTAssertEqual(failure?.line, line)
        XCTAssertEqual(failure?.filePath, "\(#filePath)")
        XCTAssertTrue(failure?.description.contains("count: expected 2, actual 1") == true, "\(failures)")
    }

    func testUnassertedActionFailsTheXCTestCaseWhenTheStoreIsReleased() {
        var line = 0
        let failures = capturingFailures {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveNow)])
            line = #line - 1
            store.send(.save)
        }
        XCTAssertEqual(failures.map(\.line), [line])
        XCTAssertTrue(failures.first?.description.contains("saved(0)") == true, "\(failures)")
    }

    func testMatchingStepsRecordNoFailure() {
        let failures = capturingFailures {
            let store = TestStore(initialState: Cart(), reducer: cartReducer, middleware: [Middleware(saveNow)])
            store.send(.add("pear")) {
                $0.count = 1
                $0.items = ["pear"]
            }
            store.send(.save)
            store.receive(.saved(1)) { $0.saved = 1 }
        }
        XCTAssertEqual(failures.count, 0, "\(failures)")
    }
}
#endif
