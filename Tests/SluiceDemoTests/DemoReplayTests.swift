import Foundation
import Sluice
import SluiceDemoKit
import SluiceJournal
import SluiceReplay
import SluiceTesting
import Testing

/// The replay of a journal that the built `sluice-demo --data-dir` wrote, through the API and through the
/// `replay` command's entry point with the demo's types; and of a demo journal damaged on purpose.
@Suite(.serialized) struct DemoReplayTests {
    private static let orders = 600

    private func openReplay(_ directory: String) throws -> JournalReplay<ServiceState, ServiceAction> {
        try JournalReplay(
            directory: directory,
            initialState: ServiceState(stock: demoCatalogue),
            reducer: serviceReducer
        )
    }

    /// Runs the command on `directory` and returns its status, standard output and standard error.
    private func command(
        _ arguments: [String],
        invariants: [ReplayInvariant<ServiceState>] = demoInvariants.map { ReplayInvariant($0.name, holds: $0.holds) }
    ) -> (status: Int32, output: [String], errors: [String]) {
        let output = Collected<String>()
        let errors = Collected<String>()
        let status = SluiceReplay.run(
            arguments: arguments,
            initialState: ServiceState(stock: demoCatalogue),
            reducer: serviceReducer,
            invariants: invariants,
            output: { output.append(contentsOf: [$0]) },
            errorOutput: { errors.append(contentsOf: [$0]) }
        )
        return (status, output.values, errors.values)
    }

    @Test func aRealDemoJournalReplaysToTheStateRecoveryRebuilds() async throws {
        let demo = try DemoProcess.executable()
        try await withDataDirectory { directory in
            let run = try DemoProcess(
                demo,
                arguments: [
                    "--data-dir", directory, "--orders", "\(Self.orders)", "--producers", "2", "--quote-every", "50",
                    "--quiet",
                ]
            )
            #expect(try await run.waitForExit() == 0, "\(run.output) \(run.errorOutput)")
            let replay = try openReplay(directory)
            #expect(replay.damage == nil)
            let (recovered, recovery) = try recoverDemoJournal(directory)
            #expect(replay.lastSequence == recovery.lastSequence)
            #expect(try replay.state(at: replay.lastSequence) == recovered)
            // The records alone, without the snapshots, give the same state.
            #expect(try replay.state(at: replay.lastSequence, usingSnapshots: false) == recovered)
            #expect(UInt64(recovered.metrics.actions) == replay.lastSequence)

            // The demo's invariants hold; "fewer than N orders placed" first fails at the Nth placeOrder. The demo
            // snapshots and compacts as it runs, so the replay may start after some orders: N counts from there.
            let placedAtStart = try replay.state(at: replay.firstSequence).orders.placed
            let placedAtEnd = recovered.orders.placed
            try #require(placedAtEnd > placedAtStart, "the replay starts after the last order: nothing to bisect")
            let target = placedAtStart + max(1, (placedAtEnd - placedAtStart) / 2)
            for invariant in demoInvariants {
                guard case .holds = replay.bisect(invariant.holds).outcome else {
                    Issue.record("\(invariant.name) reported broken in a consistent demo journal")
                    continue
                }
            }
            let found = replay.bisect { $0.orders.placed < target }
            let step = try #require(found.failingStep)
            #expect(step.before.orders.placed == target - 1)
            #expect(step.after.orders.placed == target)
            guard case .placeOrder = step.action else {
                Issue.record("the order that makes \(target) is not a placeOrder: \(step.action)")
                return
            }
            #expect(step.changes.map(\.description).contains("orders.placed: \(target - 1) -> \(target)"))

            // The last 50 actions as a fixture (or as many as the journal kept after its oldest snapshot: the demo
            // compacts as it runs, and where its last snapshot falls depends on the machine's speed), replayed by a
            // test store step by step.
            let end = replay.lastSequence
            let fixtureStart = max(end - min(end, 50), replay.firstSequence)
            let fixture = try replay.fixture(after: fixtureStart, through: end, includingStates: true)
            let store = TestStore(replaying: fixture, reducer: serviceReducer)
            store.replay(fixture, eachStep: true)
            #expect(store.state == recovered)
            await store.finish()

            // The command, with the demo's types.
            let summary = command([directory])
            #expect(summary.status == 0)
            #expect(
                summary.output.contains { $0.hasPrefix("  states               \(replay.firstSequence)...\(end)") },
                "\(summary.output)"
            )
            #expect(summary.errors.isEmpty)
            let holds = command([directory, "--find", "stock never negative"])
            #expect(holds.status == 0)
            #expect(holds.output.first?.hasPrefix("\"stock never negative\" holds at the last state") == true)
            let fails = command(
                [directory, "--find", "fewer than \(target) orders"],
                invariants: [ReplayInvariant("fewer than \(target) orders") { $0.orders.placed < target }]
            )
            #expect(fails.status == 1)
            #expect(
                fails.output.first?.hasPrefix(
                    "\"fewer than \(target) orders\" first fails after action \(step.sequence) ("
                )
                    == true
            )
            #expect(fails.output.contains("    orders.placed: \(target - 1) -> \(target)"))
            let diff = command([directory, "--to", "\(step.sequence)", "--diff"])
            #expect(diff.status == 0)
            #expect(diff.output.first == "\(step.sequence) \(step.actionDescription())")
            let path = directory + "-fixture.json"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let export = command([directory, "--from", "\(end - 10)", "--export", path])
            #expect(export.output == ["wrote 10 actions (after sequence \(end - 10) through \(end)) to \(path)"])
            let exported = try JournalFixture<ServiceState, ServiceAction>(contentsOfFile: path)
            #expect(exported.finalState == recovered)
            #expect(exported.actions.count == 10)
            let unknown = command([directory, "--find", "nope"])
            #expect(unknown.status == 2)
            #expect(unknown.errors.first?.contains("no invariant named \"nope\"") == true)
        }
    }

    @Test func aDamagedDemoJournalIsReadUpToTheDamageThatRecoveryReports() async throws {
        try await withDataDirectory { directory in
            let (segment, damagedBytes) = try corruptJournal(in: directory)
            let replay = try openReplay(directory)
            let damage = try #require(replay.damage)
            guard case .corruptRecord(let file, let offset) = damage else {
                Issue.record("expected a corrupt record, got \(damage)")
                return
            }
            #expect(file == directory + "/" + segment)
            #expect(offset > 0 && offset <= damagedBytes.count / 2)
            #expect(replay.lastSequence > 0 && replay.lastSequence < 100)
            // The prefix before the damage is the demo's state after those actions.
            var expected = ServiceState(stock: demoCatalogue)
            for sequence in 1...replay.lastSequence {
                serviceReducer.reduce(into: &expected, try replay.action(at: sequence))
            }
            #expect(try replay.state(at: replay.lastSequence) == expected)
            // Recovery stops at the same record; the replay changed nothing.
            #expect(throws: damage) { try recoverDemoJournal(directory) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == damagedBytes)

            let summary = command([directory])
            #expect(summary.status == 0)
            #expect(summary.output.contains("  damage               \(damage)"))
            #expect(
                summary.errors == ["replay: note: reading stopped after sequence \(replay.lastSequence): \(damage)"]
            )
        }
    }
}
