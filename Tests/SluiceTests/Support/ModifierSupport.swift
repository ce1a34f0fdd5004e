import Dispatch
import Foundation
import Sluice
import SluiceTesting

/// A store with one side-effect middleware on a `TestScheduler`, which plays actions at virtual times and records
/// when the effect ran, and with which action.
final class EffectHarness: Sendable {
    struct Run: Equatable, CustomStringConvertible {
        let value: Int
        let at: UInt64

        var description: String { "\(value)@\(at)" }
    }

    let scheduler = TestScheduler()
    let runs = Locked<[Run]>([])
    let store: Store<TestState, TestAction>
    let start: DispatchTime

    /// - Parameter modify: Wraps the recording effect in the modifiers under test, on the harness's scheduler.
    init(_ modify: (TestScheduler, SideEffect<TestState, TestAction>) -> SideEffect<TestState, TestAction>) {
        let scheduler = scheduler
        let runs = runs
        let start = scheduler.now
        self.start = start
        let record = SideEffect<TestState, TestAction> { action, _ in
            if case .add(let value) = action {
                let elapsed = scheduler.now.uptimeNanoseconds - start.uptimeNanoseconds
                runs.append(Run(value: value, at: elapsed / 1_000_000))
            }
        }
        store = Store(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [Middleware(modify(scheduler, record))]
        )
    }

    /// Dispatches `.add(t)` at each virtual time `t` (ms); work due at an instant runs before the action of that
    /// instant. Then lets `flush` more milliseconds pass.
    func play(_ times: [Int], flush: Int = 10_000) {
        for time in times {
            scheduler.advance(to: start + .milliseconds(time))
            store.dispatch(.add(time))
        }
        scheduler.advance(by: .milliseconds(flush))
    }

    var recorded: [Run] { runs.current }
}

/// `EffectHarness.Run` literals: `[0, 100]` at the times given by `at`.
func runs(_ pairs: [(Int, UInt64)]) -> [EffectHarness.Run] {
    pairs.map { EffectHarness.Run(value: $0.0, at: $0.1) }
}

extension Store {
    /// Waits until no task of an effect or `async` side effect of the store runs (the store's ledger resumes the wait
    /// when the last one ends, no polling); `false` if some still ran after `timeout`, a hang guard.
    func tasksEnded(timeout: Duration = hangGuard) async -> Bool {
        await waitForRunningTasks(until: .now + timeout)
    }
}

/// Polls `condition` until it holds or `timeout` (a hang guard) passes; only for conditions that no event
/// announces (a thread joining the pipeline's line, a run's end that follows its last task's), which hold a moment
/// after the awaited event. Wait on the thing itself elsewhere: ``Locked/wait(timeout:until:)``,
/// ``Store/state(timeout:reaches:)``, ``Store/tasksEnded(timeout:)``.
///
/// It suspends between polls instead of blocking, so the tasks it waits for can run on the cooperative pool.
func waitUntil(timeout: Duration = hangGuard, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
