import Foundation
import Sluice
import SluiceDemoKit
import SluiceJournal
import SluiceReplay
import Testing

/// The replay gate on the journal that the demo's current version wrote, committed in Fixtures/demo-journal: the
/// check a service runs in CI before a deploy.
@Suite struct DemoFixtureGateTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/demo-journal").path

    @Test func theDemosFixtureJournalPassesTheGate() {
        let report = JournalReplayGate(
            initialState: ServiceState(stock: demoCatalogue),
            reducer: serviceReducer,
            invariants: demoInvariants.map { JournalReplayGate.Invariant($0.name, holds: $0.holds) }
        ).check(directory: Self.fixture)
        #expect(report.passed, "\(report)")
        #expect(report.snapshotsChecked == 1)
        #expect(report.firstSequence == 0)
        #expect(report.lastSequence == 84)
        #expect(report.recordsRead == 84)
        #expect(report.recordsAdapted == 0)
    }

    @Test func theReplayCommandGatesTheFixture() {
        var lines: [String] = []
        let status = SluiceReplay.run(
            arguments: [Self.fixture, "--gate"],
            initialState: ServiceState(stock: demoCatalogue),
            reducer: serviceReducer,
            invariants: demoInvariants.map { ReplayInvariant($0.name, holds: $0.holds) },
            output: { lines.append($0) },
            errorOutput: { lines.append($0) }
        )
        #expect(status == 0, "\(lines)")
        #expect(lines.first?.contains("gate passed") == true, "\(lines)")
    }

    /// A build whose action type no longer reads the fixture fails the gate, naming the first record.
    @Test func aBuildThatCannotReadTheFixtureFailsTheGate() {
        struct Renamed: Codable, Sendable {
            var placed: Int
        }
        let report = JournalReplayGate(
            initialState: ServiceState(stock: demoCatalogue),
            reducer: Reducer<ServiceState, Renamed> { _, _ in }
        ).check(directory: Self.fixture)
        guard case .recordNotReadable(let failure) = report.failure,
            case .recordUndecodable(let sequence, let writtenBy, _) = failure.cause
        else {
            Issue.record("expected an unreadable record, got \(report)")
            return
        }
        #expect(sequence == 1)
        #expect(writtenBy == 0)
        #expect(failure.remedy.contains("raise reducerVersion to 1"))
    }
}
