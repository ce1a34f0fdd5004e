import Testing

@testable import Sluice

/// `PipelineStateMachine` on its own: every transition, with plain values standing for the thread wake-ups and the
/// task continuations (no threads, no tasks).
@Suite struct PipelineStateMachineTests {
    /// Wake-ups and continuations are strings: the test reads who was woken or resumed.
    private typealias Machine = PipelineStateMachine<Int, String, String>

    private let owner = ThreadID(raw: 1)
    private let other = ThreadID(raw: 2)
    private let third = ThreadID(raw: 3)

    @Test func aNewPipelineIsIdleAndTakingItMakesTheThreadItsOwner() {
        var machine = Machine()
        #expect(!machine.isOwned)
        machine.take(by: owner)
        #expect(machine.isOwned)
        #expect(machine.owner == owner)
    }

    @Test func theOwnersOwnDispatchIsQueuedAndOthersWait() {
        var machine = Machine()
        machine.take(by: owner)
        #expect(machine.admit(1, from: owner, ownsAnotherPipeline: false, superseded: false) == .queued)
        #expect(machine.admit(2, from: other, ownsAnotherPipeline: false, superseded: false) == .wait)
        // The hand-over between stores: a thread inside another store's work queues instead of waiting.
        #expect(machine.admit(3, from: other, ownsAnotherPipeline: true, superseded: false) == .queued)
        #expect(machine.nextQueuedAction() == 1)
        #expect(machine.nextQueuedAction() == 3)
        #expect(machine.nextQueuedAction() == nil)
        #expect(machine.statistics.queuedActions == 2)
    }

    @Test func aDispatchOnAFreePipelineRunsAndTheCallerTakesIt() {
        var machine = Machine()
        #expect(machine.admit(1, from: other, ownsAnotherPipeline: false, superseded: false) == .run)
        // The machine does not take the pipeline: a caller that reduces within the critical section never owns it.
        #expect(!machine.isOwned)
        #expect(machine.queue.isEmpty)
        machine.take(by: other)
        #expect(machine.owner == other)
    }

    @Test func aSupersededRunIsDroppedOnAFreePipelineButQueuedOnAnOwnedOne() {
        var machine = Machine()
        #expect(machine.admit(1, from: other, ownsAnotherPipeline: false, superseded: true) == .dropped)
        #expect(!machine.isOwned)
        machine.take(by: owner)
        // Queued: accepted, so processed whatever happens to its run afterwards.
        #expect(machine.admit(2, from: owner, ownsAnotherPipeline: false, superseded: true) == .queued)
        // Waiting: checked again once it has the pipeline.
        #expect(machine.admit(3, from: other, ownsAnotherPipeline: false, superseded: true) == .wait)
        #expect(machine.admitOwner(superseded: true) == .dropped)
        #expect(machine.admitOwner(superseded: false) == .run)
        #expect(machine.statistics.refusedDispatches == 0)
    }

    @Test func shutdownRefusesAndCountsEveryAdmissionButKeepsWhatIsQueued() {
        var machine = Machine()
        machine.take(by: owner)
        #expect(machine.admit(1, from: owner, ownsAnotherPipeline: false, superseded: false) == .queued)
        machine.beginRefusing()
        #expect(machine.admit(2, from: owner, ownsAnotherPipeline: false, superseded: false) == .refused)
        #expect(machine.admit(3, from: other, ownsAnotherPipeline: false, superseded: false) == .refused)
        #expect(machine.admitOwner(superseded: false) == .refused)
        #expect(machine.statistics.refusedDispatches == 3)
        #expect(machine.nextQueuedAction() == 1)
        machine.releaseIdle()
        #expect(machine.admit(4, from: other, ownsAnotherPipeline: false, superseded: false) == .refused)
        #expect(!machine.isOwned)
        #expect(machine.statistics.refusedDispatches == 4)
    }

    @Test func aStoreThatIsGoneDropsEveryAdmissionAndItsQueueUncounted() {
        var machine = Machine()
        machine.take(by: owner)
        #expect(machine.admit(1, from: owner, ownsAnotherPipeline: false, superseded: false) == .queued)
        machine.beginRefusing()
        machine.storeWentAway()
        #expect(machine.admit(2, from: owner, ownsAnotherPipeline: false, superseded: false) == .dropped)
        #expect(machine.admitOwner(superseded: false) == .dropped)
        #expect(machine.nextQueuedAction() == nil)
        #expect(machine.queue.isEmpty)
        #expect(machine.statistics.refusedDispatches == 0)
        // Shutdown after the store went away does not reopen it.
        machine.beginRefusing()
        #expect(machine.phase == .gone)
    }

    @Test func releaseWithNobodyWaitingGoesIdle() {
        var machine = Machine()
        machine.take(by: owner)
        #expect(machine.release(now: 0) == .idle)
        #expect(!machine.isOwned)
    }

    @Test func releaseServesTheLineInOrderWakingThreadsAndServingTasks() {
        var machine = Machine()
        machine.take(by: owner)
        machine.waitAsThread(other, wakeUp: "wake other", since: 100)
        machine.waitAsTask(ticket: machine.makeTicket(), action: 10, continuation: "task A", now: 100)
        machine.waitAsThread(third, wakeUp: "wake third", since: 100)
        machine.waitAsTask(ticket: machine.makeTicket(), action: 20, continuation: "task B", now: 100)
        #expect(machine.waiterCount == 4)
        #expect(machine.statistics.deepestQueue == 4)

        // The oldest waiter is a thread: the pipeline goes idle and the thread is woken to take it.
        #expect(machine.release(now: 150) == .wake("wake other"))
        #expect(!machine.isOwned)
        #expect(machine.waiterCount == 3)
        // Another thread's wake-up is not this one's.
        do {
            let back = machine.wokenThreadIsBack(third)
            #expect(!back)
        }
        do {
            let back = machine.wokenThreadIsBack(other)
            #expect(back)
        }
        machine.take(by: other)
        // Its release serves task A: `other` stays the owner and processes A's action.
        #expect(machine.release(now: 160) == .serve(10, "task A", waited: 60))
        #expect(machine.owner == other)
        #expect(machine.release(now: 170) == .wake("wake third"))
        do {
            let back = machine.wokenThreadIsBack(third)
            #expect(back)
        }
        machine.take(by: third)
        #expect(machine.release(now: 400) == .serve(20, "task B", waited: 300))
        #expect(machine.release(now: 400) == .idle)
        #expect(!machine.isOwned)
        #expect(machine.waiterCount == 0)
    }

    /// A running thread takes the pipeline before the woken one comes back for it: the woken thread waits again at
    /// the head of the line, and nobody else is woken while it is on its way.
    @Test func aWokenThreadThatFindsThePipelineTakenWaitsAgainAtTheHead() {
        var machine = Machine()
        machine.take(by: owner)
        machine.waitAsThread(other, wakeUp: "wake other", since: 0)
        machine.waitAsThread(third, wakeUp: "wake third", since: 0)
        #expect(machine.release(now: 10) == .wake("wake other"))
        machine.take(by: owner)  // `owner` dispatches again before `other` runs
        do {
            let back = machine.wokenThreadIsBack(other)
            #expect(back)
        }
        #expect(machine.isOwned)
        machine.waitAgainAtHead(other, wakeUp: "wake other", since: 0)
        #expect(machine.waiterCount == 2)
        #expect(machine.release(now: 20) == .wake("wake other"))
        // `other` is on its way: a release in between wakes nobody else.
        machine.take(by: owner)
        #expect(machine.release(now: 30) == .idle)
        #expect(machine.waiterCount == 1)
        do {
            let back = machine.wokenThreadIsBack(other)
            #expect(back)
        }
        machine.take(by: other)
        #expect(machine.release(now: 40) == .wake("wake third"))
    }

    /// A thread that has waited longer than `starvation` is handed the pipeline directly, as before.
    @Test func aThreadThatWaitedLongerThanTheStarvationLimitIsHandedThePipeline() {
        var machine = Machine()
        machine.take(by: owner)
        machine.waitAsThread(other, wakeUp: "wake other", since: 0)
        machine.waitAsThread(third, wakeUp: "wake third", since: 500_000)
        #expect(machine.release(now: Machine.starvation) == .handOver("wake other"))
        #expect(machine.owner == other)
        #expect(machine.release(now: Machine.starvation + 1) == .wake("wake third"))
    }

    @Test func aCancelledTaskLeavesTheLineAndItsActionIsNeverServed() {
        var machine = Machine()
        machine.take(by: owner)
        let first = machine.makeTicket()
        let second = machine.makeTicket()
        machine.waitAsTask(ticket: first, action: 1, continuation: "first", now: 0)
        machine.waitAsTask(ticket: second, action: 2, continuation: "second", now: 0)
        #expect(machine.cancelTask(ticket: first) == "first")
        // Cancelled twice (or after its turn): nothing left to resume.
        #expect(machine.cancelTask(ticket: first) == nil)
        #expect(machine.release(now: 0) == .serve(2, "second", waited: 0))
        #expect(machine.cancelTask(ticket: second) == nil)
        #expect(machine.release(now: 0) == .idle)
    }

    @Test func waitsAreCountedWithTheirTotalAndLongest() {
        var machine = Machine()
        machine.take(by: owner)
        machine.threadDidWait(30)
        machine.waitAsTask(ticket: machine.makeTicket(), action: 1, continuation: "task", now: 10)
        _ = machine.release(now: 110)
        #expect(machine.statistics.waits == 2)
        #expect(machine.statistics.blockedWaits == 1)
        #expect(machine.statistics.totalWait == .nanoseconds(130))
        #expect(machine.statistics.longestWait == .nanoseconds(100))
    }

    /// A thread woken to take the free pipeline still waits until it has it: it counts in the depth.
    @Test func aWokenThreadStillCountsAsWaiting() {
        var machine = Machine()
        machine.take(by: owner)
        machine.waitAsThread(other, wakeUp: "wake other", since: 0)
        machine.waitAsThread(third, wakeUp: "wake third", since: 0)
        #expect(machine.release(now: 10) == .wake("wake other"))
        #expect(machine.waiterCount == 1)
        #expect(machine.waitingCount == 2)
        // `owner` takes the free pipeline first; a fourth thread gets in line: three wait, one of them woken.
        machine.take(by: owner)
        machine.waitAsThread(ThreadID(raw: 4), wakeUp: "wake fourth", since: 10)
        #expect(machine.waitingCount == 3)
        #expect(machine.statistics.deepestQueue == 3)
        // Back, `other` finds the pipeline taken and gets in line again, at the head: still three.
        do {
            let back = machine.wokenThreadIsBack(other)
            #expect(back)
        }
        machine.waitAgainAtHead(other, wakeUp: "wake other", since: 0)
        #expect(machine.waitingCount == 3)
        #expect(machine.statistics.deepestQueue == 3)
    }

    @Test func theDeepestQueueCountsQueuedActionsAndWaitersTogether() {
        var machine = Machine()
        machine.take(by: owner)
        machine.enqueue(1)
        machine.enqueue(2)
        machine.waitAsThread(other, wakeUp: "other", since: 0)
        #expect(machine.statistics.deepestQueue == 3)
        _ = machine.nextQueuedAction()
        _ = machine.nextQueuedAction()
        _ = machine.release(now: 0)
        #expect(machine.statistics.deepestQueue == 3)
    }
}

extension PipelineStateMachine.Release: Equatable where Action: Equatable, WakeUp: Equatable, Continuation: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.idle, .idle): true
        case (.handOver(let a), .handOver(let b)): a == b
        case (.wake(let a), .wake(let b)): a == b
        case (.serve(let a, let c, let w), .serve(let b, let d, let v)): a == b && c == d && w == v
        default: false
        }
    }
}
