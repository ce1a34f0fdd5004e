import Testing

@testable import Sluice

/// Every interleaving of up to three dispatchers on the pure `PipelineStateMachine`, checked against the dispatch
/// contract.
///
/// A dispatcher is a thread that dispatches or a task that sends, with a short program of actions. The model performs
/// the machine's answers the way `StoreCore` does, one critical section per step: an admission, a woken thread coming
/// back, a task entering the line, the owner processing an action, taking the next queued one, releasing; plus the
/// events that come from outside: shutdown, the store going away, a waiting send cancelled. The explorer visits every
/// reachable state once (depth first, states hashed) and checks, on every path:
///
/// - no action is lost or duplicated: each ends processed once, refused, dropped or cancelled, and every accepted one
///   is processed (unless the store went away, which drops its queue);
/// - each dispatcher's actions, and each follow-up after the action that dispatched it, are processed in order;
/// - no wake-up is lost: every state where someone still waits has a step that can run, and each finished run leaves
///   the machine idle;
/// - nothing is admitted after shutdown began or the store went away, and every refusal is counted exactly once;
/// - an action of a superseded side-effect run is never processed after the action that superseded it.
@Suite struct PipelineInterleavingTests {
    @Test func threeThreadsWithAFollowUpAndShutdown() throws {
        let states = try explore(
            Scenario(
                programs: [
                    [.dispatch(1)],
                    [.dispatch(2), .dispatch(3)],
                    [.dispatch(4)],
                ],
                followUps: [1: 11, 4: 14],
                allowShutdown: true
            )
        )
        #expect(states > 1_000)
    }

    @Test func threadsAndACancellableSendWithShutdown() throws {
        let states = try explore(
            Scenario(
                programs: [
                    [.dispatch(1), .dispatch(2)],
                    [.send(3, cancellable: true), .send(4, cancellable: false)],
                    [.dispatch(5)],
                ],
                followUps: [3: 13],
                allowShutdown: true
            )
        )
        #expect(states > 1_000)
    }

    @Test func sendsAndThreadsWhileTheStoreGoesAway() throws {
        let states = try explore(
            Scenario(
                programs: [
                    [.dispatch(1)],
                    [.send(2, cancellable: true)],
                    [.dispatch(3), .send(4, cancellable: false)],
                ],
                followUps: [1: 11, 2: 12],
                allowShutdown: true,
                allowGone: true
            )
        )
        #expect(states > 1_000)
    }

    @Test func aSupersededRunsResultsNeverFollowTheirSuccessor() throws {
        // Action 1 is the newer request: processing it supersedes run 7, whose results 2 (dispatched from a
        // thread) and 3 (sent from a task) race it for the pipeline.
        let states = try explore(
            Scenario(
                programs: [
                    [.dispatch(1)],
                    [.dispatch(2, run: 7)],
                    [.send(3, cancellable: true, run: 7)],
                ],
                followUps: [2: 12],
                supersedes: [1: 7],
                allowShutdown: true
            )
        )
        #expect(states > 1_000)
    }

    @Test func theCheckFindsALostAction() {
        // The explorer must be able to fail: a model that forgets to process what the owner queued loses an action,
        // and the check says so.
        #expect(throws: ContractViolation.self) {
            try explore(
                Scenario(programs: [[.dispatch(1)], [.dispatch(2)]], followUps: [1: 11]),
                forgetQueue: true
            )
        }
    }
}

// MARK: - The model

private enum Operation: Hashable {
    case dispatch(Int, run: Int? = nil)
    case send(Int, cancellable: Bool, run: Int? = nil)

    var action: Int {
        switch self {
        case .dispatch(let action, _), .send(let action, _, _): action
        }
    }

    var run: Int? {
        switch self {
        case .dispatch(_, let run), .send(_, _, let run): run
        }
    }
}

private struct Scenario {
    var programs: [[Operation]]
    /// The action that processing an action dispatches from inside its work (rule 2: queued).
    var followUps: [Int: Int] = [:]
    /// Processing the key supersedes (cancels) the side-effect run given as value.
    var supersedes: [Int: Int] = [:]
    var allowShutdown = false
    var allowGone = false

    /// The side-effect run that dispatches `action`, if any.
    func run(of action: Int) -> Int? {
        for program in programs {
            for operation in program where operation.action == action {
                return operation.run
            }
        }
        return nil
    }
}

private struct ContractViolation: Error, CustomStringConvertible {
    let description: String
}

private enum Outcome: Hashable {
    case accepted, processed, refused, dropped, cancelled
}

private enum Step: Hashable {
    /// About to perform the program's operation at this index.
    case ready(Int)
    /// Owns the pipeline for operation `op`: runs `current` if set, else drains; resumes the task `serving` once the
    /// action it serves and the queue behind it are processed.
    case owning(op: Int, current: Int?, serving: Int?)
    /// A thread in line, blocked on its wake-up.
    case blocked(op: Int)
    /// A thread whose wake-up was signalled, about to run.
    case woken(op: Int)
    /// A task told to wait, about to enter the line (`waitInLine`'s critical section).
    case enteringLine(op: Int, ticket: UInt64)
    /// A task suspended in line.
    case inLine(op: Int, ticket: UInt64)
    case finished
}

private typealias Machine = PipelineStateMachine<Int, Int, Int>

private struct ModelState: Hashable {
    var machine = Machine()
    var steps: [Step]
    var cancelled: Set<Int> = []
    var outcomes: [Int: Outcome] = [:]
    var log: [Int] = []
    var supersededRuns: Set<Int> = []
    var shutDown = false
    var gone = false
    var refusals = 0

    static func == (lhs: ModelState, rhs: ModelState) -> Bool {
        lhs.key == rhs.key
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(key)
    }

    /// Everything that decides what happens next (the machine's statistics of waits, which depend on the clock, left
    /// out).
    private var key: Key {
        Key(
            owner: machine.owner.raw,
            queue: machine.queue.elements,
            waiters: machine.waiters[machine.waitersHead...].map { waiter in
                switch waiter {
                case .thread(let thread, let wakeUp, _): [0, Int(thread.raw), wakeUp]
                case .task(let ticket, let action, let continuation, _): [1, Int(ticket), action, continuation]
                }
            },
            woken: machine.woken.map(\.raw),
            phase: "\(machine.phase)",
            refused: machine.statistics.refusedDispatches,
            steps: steps,
            cancelled: cancelled,
            outcomes: outcomes,
            log: log,
            superseded: supersededRuns,
            shutDown: shutDown,
            gone: gone
        )
    }

    private struct Key: Hashable {
        let owner: UInt
        let queue: [Int]
        let waiters: [[Int]]
        let woken: [UInt]
        let phase: String
        let refused: Int
        let steps: [Step]
        let cancelled: Set<Int>
        let outcomes: [Int: Outcome]
        let log: [Int]
        let superseded: Set<Int>
        let shutDown: Bool
        let gone: Bool
    }
}

/// Explores every interleaving of `scenario`; returns the number of distinct states visited, or throws the first
/// violation of the contract. `forgetQueue` breaks the model on purpose (the owner releases without draining).
@discardableResult
private func explore(_ scenario: Scenario, forgetQueue: Bool = false) throws -> Int {
    let model = Model(scenario: scenario, forgetQueue: forgetQueue)
    var visited: Set<ModelState> = []
    var stack = [ModelState(steps: Array(repeating: .ready(0), count: scenario.programs.count))]
    while let state = stack.popLast() {
        guard visited.insert(state).inserted else { continue }
        let next = try model.successors(of: state)
        if next.isEmpty {
            try model.checkFinal(state)
        }
        stack.append(contentsOf: next)
    }
    return visited.count
}

private struct Model {
    let scenario: Scenario
    let forgetQueue: Bool

    func thread(_ index: Int) -> ThreadID {
        ThreadID(raw: UInt(index + 1) * 16)
    }

    func operation(_ index: Int, _ op: Int) -> Operation? {
        let program = scenario.programs[index]
        return op < program.count ? program[op] : nil
    }

    func violation(_ text: String, _ state: ModelState) -> ContractViolation {
        ContractViolation(description: "\(text); log \(state.log), steps \(state.steps), outcomes \(state.outcomes)")
    }

    // MARK: Successors

    func successors(of state: ModelState) throws -> [ModelState] {
        var result: [ModelState] = []
        for index in state.steps.indices {
            result += try step(index, in: state)
        }
        if scenario.allowShutdown && !state.shutDown {
            var next = state
            next.shutDown = true
            next.machine.beginRefusing()
            result.append(next)
        }
        if scenario.allowGone && !state.gone {
            var next = state
            next.gone = true
            next.machine.storeWentAway()
            result.append(next)
        }
        // A waiting send's task cancelled: the handler removes it from the line if it is still there.
        for index in state.steps.indices {
            switch state.steps[index] {
            case .enteringLine(let op, let ticket), .inLine(let op, let ticket):
                guard case .send(let action, true, _) = operation(index, op), !state.cancelled.contains(index) else {
                    continue
                }
                var next = state
                next.cancelled.insert(index)
                if next.machine.cancelTask(ticket: ticket) != nil {
                    try settle(action, .cancelled, in: &next)
                    next.steps[index] = .ready(op + 1)
                }
                result.append(next)
            default:
                continue
            }
        }
        return result
    }

    /// The next critical section of dispatcher `index`, if it can run; two successors when the machine's answer
    /// depends on the clock (a waiting thread starved or not).
    func step(_ index: Int, in state: ModelState) throws -> [ModelState] {
        var next = state
        switch state.steps[index] {
        case .finished, .blocked, .inLine:
            return []
        case .ready(let op):
            guard let operation = operation(index, op) else {
                next.steps[index] = .finished
                return [next]
            }
            let superseded = operation.run.map(state.supersededRuns.contains) ?? false
            let admission = next.machine.admit(
                operation.action,
                from: thread(index),
                ownsAnotherPipeline: false,
                superseded: superseded
            )
            try note(admission, of: operation.action, in: &next)
            switch admission {
            case .run:
                next.machine.take(by: thread(index))
                next.steps[index] = .owning(op: op, current: operation.action, serving: nil)
            case .queued:
                throw violation("a dispatcher that owns nothing had its action \(operation.action) queued", next)
            case .wait:
                if case .send = operation {
                    next.steps[index] = .enteringLine(op: op, ticket: next.machine.makeTicket())
                } else {
                    next.machine.waitAsThread(thread(index), wakeUp: index, since: 0)
                    next.steps[index] = .blocked(op: op)
                }
            case .refused, .dropped:
                next.steps[index] = .ready(op + 1)
            }
            return [next]
        case .woken(let op):
            // `waitForPipeline`: handed the pipeline, or back to take a free one, or back in line at its head.
            let me = thread(index)
            if next.machine.owner != me {
                guard next.machine.wokenThreadIsBack(me) else {
                    next.steps[index] = .blocked(op: op)
                    return [next]
                }
                if next.machine.isOwned {
                    next.machine.waitAgainAtHead(me, wakeUp: index, since: 0)
                    next.steps[index] = .blocked(op: op)
                    return [next]
                }
                next.machine.take(by: me)
            }
            let operation = operation(index, op)!
            let superseded = operation.run.map(state.supersededRuns.contains) ?? false
            let admission = next.machine.admitOwner(superseded: superseded)
            try note(admission, of: operation.action, in: &next)
            next.steps[index] = .owning(op: op, current: admission == .run ? operation.action : nil, serving: nil)
            return [next]
        case .enteringLine(let op, let ticket):
            // `waitInLine`'s critical section: cancelled already, or the pipeline went free (look again), or in line.
            let action = operation(index, op)!.action
            if state.cancelled.contains(index) {
                try settle(action, .cancelled, in: &next)
                next.steps[index] = .ready(op + 1)
            } else if !next.machine.isOwned {
                next.steps[index] = .ready(op)
            } else {
                next.machine.waitAsTask(ticket: ticket, action: action, continuation: index, now: 0)
                next.steps[index] = .inLine(op: op, ticket: ticket)
            }
            return [next]
        case .owning(let op, let current?, let serving):
            try process(current, by: index, in: &next)
            next.steps[index] = .owning(op: op, current: nil, serving: serving)
            return [next]
        case .owning(let op, nil, let serving):
            return try drain(index, op: op, serving: serving, in: next)
        }
    }

    /// One turn of the owner's drain loop (`drainLocked`): the next queued action, the resumption of a served task,
    /// or the release.
    func drain(_ index: Int, op: Int, serving: Int?, in state: ModelState) throws -> [ModelState] {
        var next = state
        let queued = next.machine.queue.elements
        if !forgetQueue, !queued.isEmpty {
            if let action = next.machine.nextQueuedAction() {
                next.steps[index] = .owning(op: op, current: action, serving: serving)
            } else {
                // The store went away: the queue is dropped.
                for action in queued {
                    try settle(action, .dropped, in: &next)
                }
            }
            return [next]
        }
        if let task = serving {
            resumeServed(task, in: &next)
            next.steps[index] = .owning(op: op, current: nil, serving: nil)
            return [next]
        }
        guard next.machine.waiterCount > 0 else {
            next.machine.releaseIdle()
            next.steps[index] = .ready(op + 1)
            return [next]
        }
        // Not starved (the clock reads 0, when they got in line) and starved (the clock reads a second later).
        var results: [ModelState] = []
        for now: UInt64 in [0, 1_000_000_000] {
            var branch = next
            switch branch.machine.release(now: now) {
            case .idle:
                branch.steps[index] = .ready(op + 1)
            case .wake(let waiter), .handOver(let waiter):
                guard case .blocked(let waiting) = branch.steps[waiter] else {
                    throw violation("woke dispatcher \(waiter), which was not blocked", branch)
                }
                branch.steps[waiter] = .woken(op: waiting)
                branch.steps[index] = .ready(op + 1)
            case .serve(let action, let task, _):
                let run = scenario.run(of: action)
                let superseded = run.map(branch.supersededRuns.contains) ?? false
                let admission = branch.machine.admitOwner(superseded: superseded)
                try note(admission, of: action, in: &branch)
                if admission == .run {
                    branch.steps[index] = .owning(op: op, current: action, serving: task)
                } else {
                    resumeServed(task, in: &branch)
                }
            }
            results.append(branch)
        }
        return results
    }

    func resumeServed(_ task: Int, in state: inout ModelState) {
        guard case .inLine(let op, _) = state.steps[task] else { return }
        state.steps[task] = .ready(op + 1)
    }

    // MARK: Bookkeeping and checks

    /// The owner runs `action`: its reduce, the action it dispatches from inside its work, the run it supersedes.
    func process(_ action: Int, by index: Int, in state: inout ModelState) throws {
        if let run = scenario.run(of: action), state.supersededRuns.contains(run) {
            throw violation("action \(action) of superseded run \(run) processed after its successor", state)
        }
        guard state.outcomes[action] == .accepted else {
            throw violation("action \(action) processed while \(String(describing: state.outcomes[action]))", state)
        }
        state.outcomes[action] = .processed
        state.log.append(action)
        if let run = scenario.supersedes[action] {
            state.supersededRuns.insert(run)
        }
        if let followUp = scenario.followUps[action] {
            let admission = state.machine.admit(
                followUp,
                from: thread(index),
                ownsAnotherPipeline: false,
                superseded: false
            )
            guard admission != .run && admission != .wait else {
                throw violation("the owner's own dispatch of \(followUp) was told \(admission)", state)
            }
            try note(admission, of: followUp, in: &state)
        }
    }

    func note(_ admission: Machine.Admission, of action: Int, in state: inout ModelState) throws {
        switch admission {
        case .run, .queued:
            if state.shutDown || state.gone {
                throw violation("action \(action) admitted after the store closed", state)
            }
            state.outcomes[action] = .accepted
        case .wait:
            break
        case .refused:
            if !state.shutDown || state.gone {
                throw violation("action \(action) refused while shutdown had not begun", state)
            }
            state.refusals += 1
            try settle(action, .refused, in: &state)
        case .dropped:
            let superseded = scenario.run(of: action).map(state.supersededRuns.contains) ?? false
            if !state.gone && !superseded {
                throw violation("action \(action) dropped with the store open and its run current", state)
            }
            try settle(action, .dropped, in: &state)
        }
    }

    func settle(_ action: Int, _ outcome: Outcome, in state: inout ModelState) throws {
        if let previous = state.outcomes[action], previous != .accepted || outcome == .cancelled {
            throw violation("action \(action) ended \(outcome) after \(previous)", state)
        }
        if state.outcomes[action] == .accepted && outcome != .dropped {
            throw violation("accepted action \(action) ended \(outcome)", state)
        }
        state.outcomes[action] = outcome
    }

    /// A state with no step left to run: every dispatcher must have finished, the machine must be idle, and every
    /// action must have one final outcome, in order.
    func checkFinal(_ state: ModelState) throws {
        guard state.steps.allSatisfy({ $0 == .finished }) else {
            throw violation("stuck: a dispatcher waits and nothing can run (a lost wake-up)", state)
        }
        let machine = state.machine
        guard !machine.isOwned, machine.queue.isEmpty, machine.waiterCount == 0, machine.woken.isEmpty else {
            throw violation("every dispatcher finished but the machine is not idle", state)
        }
        guard machine.statistics.refusedDispatches == state.refusals else {
            throw violation("\(state.refusals) refusals counted \(machine.statistics.refusedDispatches) times", state)
        }
        var actions: [Int] = scenario.programs.flatMap { $0.map(\.action) }
        for action in actions {
            if let followUp = scenario.followUps[action], state.outcomes[action] == .processed {
                actions.append(followUp)
            }
        }
        for action in actions {
            switch state.outcomes[action] {
            case .processed, .refused, .dropped, .cancelled:
                continue
            case .accepted:
                throw violation("action \(action) was accepted and never processed", state)
            case nil:
                throw violation("action \(action) has no outcome", state)
            }
        }
        let position = Dictionary(uniqueKeysWithValues: state.log.enumerated().map { ($1, $0) })
        for program in scenario.programs {
            let processed = program.compactMap { position[$0.action] }
            if processed != processed.sorted() {
                throw violation("a dispatcher's actions were processed out of order", state)
            }
        }
        for (action, followUp) in scenario.followUps {
            if let after = position[followUp], let before = position[action], after < before {
                throw violation("follow-up \(followUp) processed before \(action)", state)
            }
        }
    }
}
