public import Sluice
internal import Testing

/// A store for tests that proves every change of the state and every action that the store's own work dispatched.
///
/// A test store drives a real ``Sluice/Store`` with your reducer and middleware (nothing of the pipeline is
/// mocked); a recording middleware, placed first, sees every action. Each step of a test says what it expects:
///
/// ```swift
/// let store = TestStore(initialState: Counter(), reducer: counterReducer, middleware: [Middleware(reload)])
/// store.send(.increment) { $0.count = 1 }          // the state after = the state before + these changes
/// await store.receive(.reloaded(1), timeout: .seconds(30)) { $0.saved = 1 }  // dispatched by the side effect
/// await store.finish()                             // nothing left unasserted, running or pending
/// ```
///
/// - ``send(_:assert:fileID:filePath:line:column:)`` dispatches an action; the state after it must equal the state
///   before it with exactly the changes that the closure makes (no closure: no change).
/// - ``receive(_:assert:fileID:filePath:line:column:)`` asserts the next action that middleware, side effects or
///   effects dispatched, in order, with its state change; the `timeout:` form waits for one dispatched from async
///   work. A predicate form serves actions that are not `Equatable`.
/// - ``finish(timeout:fileID:filePath:line:column:)`` waits for running tasks, then fails for each received action
///   not asserted, each effect or side-effect task still running and each unit of work still pending on the
///   ``TestScheduler``s given to the initializer. Releasing a test store that was not finished checks the same,
///   without waiting.
///
/// A mismatch fails the current test at the line of the call, with the differing fields:
/// `count: expected 2, actual 1`.
///
/// - In a Swift Testing test, through `Issue.record`, when the test store is used from the test's task (where
///   `Test.current` is set).
/// - In an XCTest test case, through `XCTFail` with the file and line of the call, on Linux and Apple platforms;
///   the case fails like one of its own assertions. Where XCTest is not available (`canImport(XCTest)` is false)
///   the test store still builds and reports through Swift Testing only.
/// - Outside both (say, from a detached task of a Swift Testing test), the failure is still given to
///   `Issue.record`, and written to standard error so that it is never lost. A skipped assertion of
///   ``Exhaustivity/off(showSkipped:)`` is a Swift Testing warning; XCTest, which has no warnings, does not get it.
///
/// With ``exhaustivity`` set to ``Exhaustivity/off``, a test asserts only what it names (see ``Exhaustivity``). Pass
/// it as the initializer's last argument, or set the property between steps:
///
/// ```swift
/// let store = TestStore(initialState: Cart(), reducer: cartReducer, schedulers: [scheduler], exhaustivity: .off)
/// store.send(.add("tea")) { $0.count += 1 }   // the other changes of the action are not compared
/// store.exhaustivity = .on                    // from here on, every change is asserted
/// ```
///
/// The test store sees an action as it enters the chain and the state again when the chain returns. A middleware
/// that calls `next` later changes the state after that: the test store reports such a change, one that no action
/// it saw made, at the next action the store processes or at the next step (a failure when exhaustive), and cannot
/// see a `next` that has not run when the test ends (schedule it on a ``TestScheduler`` given to the test store).
///
/// The store's services are a test container by default (see ``init(initialState:reducer:middleware:dependencies:schedulers:exhaustivity:fileID:filePath:line:column:)``):
/// a dependency without a test value that the test did not set fails the test when it is read, naming the key and
/// the action whose processing read it, instead of silently calling the live service. That holds for a read through
/// `api.dependencies` and through `StoreDependencies.current`, in synchronous middleware too (the test store binds
/// its store's dependencies around the chain), and for the scheduler that a time modifier given no `on:` would need:
///
/// ```swift
/// let store = TestStore(
///     initialState: Shop(),
///     reducer: shopReducer,
///     middleware: [Middleware(checkout)],
///     dependencies: .test { $0.paymentGateway = DecliningGateway() }
/// )
/// ```
///
/// A test store is meant for one test: use it from that test's task, not from several tasks at once.
public final class TestStore<State: Equatable & Sendable, Action: Sendable> {
    /// The real store under test; use it to run effects (`store.store.run { ... }`) or read what the test store does
    /// not assert.
    public let store: Store<State, Action>
    /// How strictly the test store asserts: ``Exhaustivity/on`` unless the initializer's `exhaustivity:` (its last
    /// argument) said otherwise; may be changed between steps (`store.exhaustivity = .off`).
    public var exhaustivity: Exhaustivity
    private let log: ActionLog<State, Action>
    private let missingTestValues = MissingTestValueLog()
    private let schedulers: [TestScheduler]
    private let site: CallSite
    private var isFinished = false

    /// Creates a test store around a real store.
    ///
    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - reducer: The reducer under test.
    ///   - middleware: The middleware under test, in the order a ``Sluice/Store`` takes it.
    ///   - dependencies: The store's services: a test container (``Sluice/StoreDependencies/test(onMissingTestValue:_:)``)
    ///     by default, in which every key reads its test value. A key without a test value that the test did not set
    ///     fails the test when it is read, naming the key and the action whose processing read it; the read then
    ///     returns the live value so that the test runs to its end. A live container is used as it is: pass
    ///     `StoreDependencies()` only for a test that means to call live services.
    ///   - schedulers: The test schedulers that the middleware uses; ``finish(timeout:fileID:filePath:line:column:)``
    ///     fails for work still pending on them.
    ///   - exhaustivity: How strictly to assert; ``Exhaustivity/on`` by default.
    public init(
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = [],
        dependencies: StoreDependencies = .test(),
        schedulers: [TestScheduler] = [],
        exhaustivity: Exhaustivity = .on,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) {
        let log = ActionLog<State, Action>(initialState: initialState)
        self.log = log
        let missingTestValues = missingTestValues
        let reporting = dependencies.reportingMissingTestValues { missing in
            // A read through `api.dependencies` in a synchronous middleware carries no action: it is the one that
            // the chain is processing on this thread.
            let action: Any?
            if let cause = missing.action {
                action = cause
            } else {
                action = log.actionProcessedOnThisThread
            }
            missingTestValues.record(key: missing.key, action: action.map(Self.describe))
        }
        self.store = Store(
            initialState: initialState,
            reducer: reducer,
            middleware: [log.middleware] + middleware,
            dependencies: reporting
        )
        self.schedulers = schedulers
        self.exhaustivity = exhaustivity
        self.site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
    }

    deinit {
        reportMissingTestValues(at: site)
        reportUnseenChanges(at: site)
        if !isFinished {
            checkExhaustion(at: site, when: "When the test store was released")
        }
    }

    /// The current state of the store.
    public var state: State {
        store.state
    }

    /// Dispatches an action and asserts how it changed the state.
    ///
    /// The state after the action must equal the state before it with exactly the changes that `updateExpected`
    /// makes; without a closure, the action must not change the state. With ``Exhaustivity/on``, actions received
    /// and not yet asserted fail the test here (assert them first with ``receive(_:assert:fileID:filePath:line:column:)``).
    ///
    /// ```swift
    /// store.send(.add(3)) { $0.total = 3 }
    /// ```
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - updateExpected: Makes the expected changes to the state from before the action.
    public func send(
        _ action: Action,
        assert updateExpected: ((inout State) -> Void)? = nil,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        reportUnseenChanges(at: site)
        let unasserted = log.removeAll()
        if !unasserted.isEmpty {
            let list = unasserted.map { "  " + Self.describe($0.action) }.joined(separator: "\n")
            let message =
                "send(\(Self.describe(action))): \(Self.count(unasserted.count, "received action")) "
                + "must be asserted before sending an action:\n\(list)"
            reportSkipped(message, at: site)
        }
        log.beginSend()
        store.dispatch(action)
        reportMissingTestValues(at: site)
        guard let entry = log.endSend() else {
            reportIssue("send(\(Self.describe(action))): the store did not process the action.", at: site)
            return
        }
        assertChange(of: entry, by: "send(\(Self.describe(action)))", updateExpected, at: site)
    }

    /// Asserts that the next action that the store's own work dispatched is `expected`, and how it changed the
    /// state.
    ///
    /// With ``Exhaustivity/on`` the next received action must be `expected`. With ``Exhaustivity/off`` the received
    /// actions before the first one equal to `expected` are skipped.
    ///
    /// - Parameters:
    ///   - expected: The action.
    ///   - updateExpected: Makes the expected changes to the state from before the action.
    public func receive(
        _ expected: Action,
        assert updateExpected: ((inout State) -> Void)? = nil,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) where Action: Equatable {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        receiveNow({ $0 == expected }, Self.describe(expected), updateExpected, at: site, waited: nil)
    }

    /// Asserts that the next action that the store's own work dispatched matches `isMatching`, and how it changed
    /// the state; for actions that are not `Equatable`.
    ///
    /// ```swift
    /// store.receive({ if case .loaded = $0 { true } else { false } }) { $0.isLoading = false }
    /// ```
    public func receive(
        _ isMatching: (Action) -> Bool,
        assert updateExpected: ((inout State) -> Void)? = nil,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        receiveNow(isMatching, "an action matching the predicate", updateExpected, at: site, waited: nil)
    }

    /// Waits up to `timeout` for an action dispatched from async work (a side effect's or an effect's task), then
    /// asserts it as ``receive(_:assert:fileID:filePath:line:column:)`` does.
    ///
    /// ```swift
    /// await store.receive(.loaded(42), timeout: .seconds(30)) { $0.price = 42 }
    /// ```
    public func receive(
        _ expected: Action,
        timeout: Duration,
        assert updateExpected: ((inout State) -> Void)? = nil,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async where Action: Equatable {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        await receiveWaiting({ $0 == expected }, Self.describe(expected), timeout, updateExpected, at: site)
    }

    /// Waits up to `timeout` for an action that matches `isMatching`, dispatched from async work, then asserts it
    /// as ``receive(_:assert:fileID:filePath:line:column:)-(Action,_,_,_,_,_)`` does.
    public func receive(
        _ isMatching: (Action) -> Bool,
        timeout: Duration,
        assert updateExpected: ((inout State) -> Void)? = nil,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        await receiveWaiting(isMatching, "an action matching the predicate", timeout, updateExpected, at: site)
    }

    /// Drops the received actions not yet asserted, without a failure (``Exhaustivity/off(showSkipped:)`` with
    /// `true` lists them as a warning).
    public func skipReceivedActions(
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) {
        let skipped = log.removeAll()
        if case .off(showSkipped: true) = exhaustivity, !skipped.isEmpty {
            let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
            let list = skipped.map { "  " + Self.describe($0.action) }.joined(separator: "\n")
            reportIssue(
                "Skipped \(Self.count(skipped.count, "received action")):\n\(list)",
                at: site,
                severity: .warning
            )
        }
    }

    /// Ends the test: waits up to `timeout` for the effects and side-effect tasks of the store to finish, then fails
    /// for each received action not asserted, each task still running and each unit of work still pending on a
    /// test scheduler.
    ///
    /// The wait ends as soon as the tasks have ended, so the timeout only bounds a task that never ends. Its default
    /// is generous because a task that already dispatched what the test received may still wait for a thread of
    /// the cooperative pool to finish: on a busy CI machine, or under the thread sanitizer, a second was seen not
    /// to be enough.
    ///
    /// With ``Exhaustivity/off`` nothing fails (``Exhaustivity/off(showSkipped:)`` with `true` lists what was
    /// left as warnings).
    public func finish(
        timeout: Duration = .seconds(10),
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        _ = await store.waitForRunningTasks(until: .now.advanced(by: timeout))
        isFinished = true
        reportMissingTestValues(at: site)
        reportUnseenChanges(at: site)
        checkExhaustion(at: site, when: "At finish()")
    }

    // MARK: - Implementation

    private var runningTaskCounts: (effects: Int, sideEffects: Int) {
        (store.runningEffectCount, store.runningSideEffectTaskCount)
    }

    private func receiveWaiting(
        _ isMatching: (Action) -> Bool,
        _ description: String,
        _ timeout: Duration,
        _ updateExpected: ((inout State) -> Void)?,
        at site: CallSite
    ) async {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let (pending, count) = log.pendingAndCount
            let decided: Bool
            switch exhaustivity {
            case .on: decided = !pending.isEmpty
            case .off: decided = pending.contains { isMatching($0.action) }
            }
            if decided { break }
            // Woken by the next recorded action, not polled.
            guard await log.waitForEntry(after: count, until: deadline) else { break }
        }
        receiveNow(isMatching, description, updateExpected, at: site, waited: timeout)
    }

    private func receiveNow(
        _ isMatching: (Action) -> Bool,
        _ description: String,
        _ updateExpected: ((inout State) -> Void)?,
        at site: CallSite,
        waited timeout: Duration?
    ) {
        reportMissingTestValues(at: site)
        reportUnseenChanges(at: site)
        let within = timeout.map { " within \($0)" } ?? ""
        switch exhaustivity {
        case .on:
            guard let entry = log.removeFirst() else {
                reportIssue("Expected to receive \(description)\(within), but received no action.", at: site)
                return
            }
            guard isMatching(entry.action) else {
                reportIssue(
                    "Received \(Self.describe(entry.action)), but expected to receive \(description).",
                    at: site
                )
                return
            }
            assertChange(of: entry, by: "receive(\(Self.describe(entry.action)))", updateExpected, at: site)
        case .off(let showSkipped):
            guard let (skipped, entry) = log.removeThroughFirst(where: isMatching) else {
                let received = log.pending.map { "  " + Self.describe($0.action) }
                let list =
                    received.isEmpty ? " No action was received." : " Received:\n" + received.joined(separator: "\n")
                reportIssue("Expected to receive \(description)\(within), but it was not received.\(list)", at: site)
                return
            }
            if showSkipped, !skipped.isEmpty {
                let list = skipped.map { "  " + Self.describe($0.action) }.joined(separator: "\n")
                reportIssue(
                    "Skipped \(Self.count(skipped.count, "received action")) before \(Self.describe(entry.action)):\n\(list)",
                    at: site,
                    severity: .warning
                )
            }
            assertChange(of: entry, by: "receive(\(Self.describe(entry.action)))", updateExpected, at: site)
        }
    }

    /// Compares the state after an action with the expected one, the state before it with the expected changes.
    ///
    /// Exhaustively, the whole states are compared. Otherwise only the parts that the closure names are: those it
    /// changes when applied to the state before the action (a relative change such as `+= 1` or `append`) or to
    /// the state after it (an assignment of a value that the action did or did not produce). Applying the closure to
    /// the state before the action, never after, is what keeps a relative change from being counted twice.
    private func assertChange(
        of entry: ActionLog<State, Action>.Entry,
        by step: String,
        _ updateExpected: ((inout State) -> Void)?,
        at site: CallSite
    ) {
        var expected = entry.before
        updateExpected?(&expected)
        guard expected != entry.after else { return }
        let lines: [String]
        switch exhaustivity {
        case .on:
            lines = StateDifference(expected: expected, actual: entry.after).lines
        case .off:
            guard let updateExpected else { return }
            var afterUpdated = entry.after
            updateExpected(&afterUpdated)
            let named = Set(
                StateDifference.paths(expected: expected, actual: entry.before)
                    + StateDifference.paths(expected: afterUpdated, actual: entry.after)
            )
            lines =
                StateDifference(expected: expected, actual: entry.after) {
                    StateDifference.path($0, concernsAnyOf: named)
                }.lines
            guard !lines.isEmpty else { return }
        }
        let header =
            updateExpected == nil
            ? "\(step) changed the state, but no change was expected:"
            : "The state after \(step) does not match the expected changes:"
        reportIssue(header + "\n" + lines.map { "  " + $0 }.joined(separator: "\n"), at: site)
    }

    /// Reports what was left at the end of a test: as failures when exhaustive, as warnings with
    /// `.off(showSkipped: true)`, not at all with `.off`.
    private func checkExhaustion(at site: CallSite, when moment: String) {
        let severity: Issue.Severity
        switch exhaustivity {
        case .on: severity = .error
        case .off(showSkipped: true): severity = .warning
        case .off(showSkipped: false):
            return
        }
        for entry in log.removeAll() {
            reportIssue(
                "\(moment): the store received \(Self.describe(entry.action)), which was not asserted "
                    + "(assert it with receive(_:)).",
                at: site,
                severity: severity
            )
        }
        let (effects, sideEffects) = runningTaskCounts
        for index in 0..<effects {
            reportIssue(
                "\(moment): an effect is still running (\(index + 1) of \(effects)); "
                    + "await it or cancel it before the test ends.",
                at: site,
                severity: severity
            )
        }
        for index in 0..<sideEffects {
            reportIssue(
                "\(moment): a side-effect task is still running (\(index + 1) of \(sideEffects)); "
                    + "let it finish or cancel it before the test ends.",
                at: site,
                severity: severity
            )
        }
        for (number, scheduler) in schedulers.enumerated() {
            let pending = scheduler.pendingWorkCount
            for index in 0..<pending {
                reportIssue(
                    "\(moment): work is still pending on test scheduler \(number + 1) (\(index + 1) of "
                        + "\(pending)); advance the scheduler or cancel the work.",
                    at: site,
                    severity: severity
                )
            }
        }
    }

    /// Fails the test for each read of a dependency without a test value since the last step, whatever the
    /// exhaustivity: the read called a live service.
    private func reportMissingTestValues(at site: CallSite) {
        for message in missingTestValues.removeAll() {
            reportIssue(message, at: site)
        }
    }

    /// Reports each change of the state that no action seen by the test store made, as an unasserted change is
    /// reported: a failure when exhaustive. Such a change comes from a middleware that calls `next` after it
    /// returned (from a timer or a task): the action's entry was recorded when the middleware returned, before
    /// the reducer ran.
    private func reportUnseenChanges(at site: CallSite) {
        for (from, to) in log.unseenChanges(current: { store.state }) {
            let lines = StateDifference(expected: from, actual: to).lines
            reportSkipped(
                "The state changed outside the actions that the test store saw (a middleware called `next` after it "
                    + "returned?):\n" + lines.map { "  " + $0 }.joined(separator: "\n"),
                at: site
            )
        }
    }

    private func reportSkipped(_ message: String, at site: CallSite) {
        switch exhaustivity {
        case .on: reportIssue(message, at: site)
        case .off(showSkipped: true): reportIssue(message, at: site, severity: .warning)
        case .off(showSkipped: false): break
        }
    }

    /// An action for a failure message: optionals unwrapped, strings quoted, cut at 200 characters.
    static func describe(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return describe(wrapped)
        }
        let text = value is String ? String(reflecting: value) : String(describing: value)
        return text.count > 200 ? String(text.prefix(199)) + "…" : text
    }

    static func count(_ count: Int, _ noun: String) -> String {
        count == 1 ? "1 \(noun)" : "\(count) \(noun)s"
    }
}

/// How strictly a ``TestStore`` asserts: given as the initializer's last argument,
/// `TestStore(initialState: Cart(), reducer: cartReducer, exhaustivity: .off)`, or set between steps,
/// `store.exhaustivity = .off(showSkipped: true)`.
public enum Exhaustivity: Sendable, Equatable {
    /// Every state change is asserted in full, every received action is asserted in order, and nothing may be left
    /// running or pending at the end.
    case on
    /// Only what a test names is asserted: a `send` or `receive` closure, applied to the state before the action
    /// as in exhaustive mode (so `$0.count += 1` means one more), checks the parts it changes and no others;
    /// `receive` skips the received actions before the one it names, and `finish` accepts what is left. With
    /// `showSkipped`, what was skipped is reported as warnings. A dependency read without a test value fails the
    /// test all the same.
    case off(showSkipped: Bool)

    /// Non-exhaustive, without listing what was skipped.
    public static let off = Exhaustivity.off(showSkipped: false)
}
