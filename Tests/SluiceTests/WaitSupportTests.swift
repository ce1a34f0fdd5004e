import Foundation
import Sluice
import Testing

/// The tests' waits: they end when their condition holds, and fail (return `false`) when it never does, so that a
/// test that waits on them fails when the behaviour it checks broke.
@Suite struct WaitSupportTests {
    @Test func aWaitEndsWhenAChangeMakesItsConditionHold() async {
        let box = Locked(0)
        let waiting = Task { await box.wait { $0 == 3 } }
        let changer = Thread {
            for _ in 0..<3 { box.withValue { $0 += 1 } }
        }
        changer.start()
        #expect(await waiting.value)
        #expect(box.current == 3)
    }

    @Test func aWaitThatAlreadyHoldsReturnsAtOnce() async {
        let box = Locked([1])
        #expect(await box.wait(timeout: .zero) { $0 == [1] })
        #expect(box.waitBlocking(timeout: .zero) { $0 == [1] })
    }

    /// The timeout really elapses here: a short one, since nothing changes the value.
    @Test func aWaitWhoseConditionNeverHoldsReturnsFalseAtItsTimeout() async {
        let box = Locked(0)
        #expect(await box.wait(timeout: .milliseconds(20)) { $0 == 1 } == false)
        #expect(box.waitBlocking(timeout: .milliseconds(20)) { $0 == 1 } == false)
        box.withValue { $0 = 1 }  // a change after the timeout resumes nothing (the waiters are gone)
    }

    @Test func aStateWaitEndsWithTheActionThatMakesItHold() async {
        let store = Store(initialState: TestState(), reducer: testReducer)
        let waiting = Task { await store.state { $0.count == 2 } }
        Thread {
            store.dispatch(.increment)
            store.dispatch(.increment)
        }.start()
        #expect(await waiting.value)
        #expect(await store.state(timeout: .milliseconds(20)) { $0.count == 3 } == false)
    }
}
