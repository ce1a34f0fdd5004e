public import Sluice
public import SluiceJournal

extension TestStore where State: Codable, Action: Codable {
    /// Creates a test store that starts from a fixture's initial state, with `reducer` alone.
    ///
    /// No middleware: a journal records every action that reached the reducer, those that effects dispatched
    /// included, so running the effects again would dispatch them twice.
    ///
    /// - Parameters:
    ///   - fixture: A range of a recorded journal (``SluiceJournal/JournalReplay/fixture(after:through:includingStates:)``).
    ///   - reducer: The reducer under test.
    public convenience init(
        replaying fixture: JournalFixture<State, Action>,
        reducer: Reducer<State, Action>,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) {
        self.init(
            initialState: fixture.initialState,
            reducer: reducer,
            fileID: fileID,
            filePath: filePath,
            line: line,
            column: column
        )
    }

    /// Sends a fixture's actions in order and asserts that they end in the recorded final state, and, with
    /// `eachStep`, that each of them leaves the recorded state.
    ///
    /// This turns a recorded incident into a regression test: the reducer under test must reach the states that
    /// the production reducer reached (or, after a fix, the test says where it no longer does). A failure names
    /// the action's sequence number in the journal and lists the fields that differ; checking stops at the first
    /// step that differs. The store must be at the fixture's initial state (``init(replaying:reducer:fileID:filePath:line:column:)``).
    ///
    /// ```swift
    /// let fixture = try JournalFixture<Counter, CounterAction>(contentsOfFile: path)
    /// let store = TestStore(replaying: fixture, reducer: counterReducer)
    /// store.replay(fixture)
    /// ```
    ///
    /// - Parameters:
    ///   - fixture: The recorded actions and states.
    ///   - eachStep: Whether to assert the state after each action; the fixture must hold them
    ///     (``SluiceJournal/JournalFixture/states``).
    public func replay(
        _ fixture: JournalFixture<State, Action>,
        eachStep: Bool = false,
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        guard state == fixture.initialState else {
            reportDifference(
                "replay: the store is not at the fixture's initial state (sequence \(fixture.firstSequence)):",
                expected: fixture.initialState,
                at: site
            )
            return
        }
        let steps: [State]?
        if eachStep {
            guard let states = fixture.states, states.count == fixture.actions.count else {
                reportIssue(
                    "replay(eachStep: true): the fixture holds no state for each action; export it with its states.",
                    at: site
                )
                return
            }
            steps = states
        } else {
            steps = nil
        }
        // Each action is checked here against the recording, not against changes written in the test.
        let strictness = exhaustivity
        exhaustivity = .off
        defer { exhaustivity = strictness }
        for (index, action) in fixture.actions.enumerated() {
            send(action, fileID: fileID, filePath: filePath, line: line, column: column)
            if let steps, state != steps[index] {
                let sequence = fixture.firstSequence + UInt64(index) + 1
                reportDifference(
                    "replay: the state after action \(sequence) (\(Self.describe(action))) is not the "
                        + "recorded one:",
                    expected: steps[index],
                    at: site
                )
                return
            }
        }
        if state != fixture.finalState {
            reportDifference(
                "replay: the \(fixture.actions.count) actions after sequence \(fixture.firstSequence) do not end in "
                    + "the recorded state (sequence \(fixture.lastSequence)):",
                expected: fixture.finalState,
                at: site
            )
        }
    }

    private func reportDifference(_ header: String, expected: State, at site: CallSite) {
        let lines = StateDifference(expected: expected, actual: state).lines
        reportIssue(header + "\n" + lines.map { "  " + $0 }.joined(separator: "\n"), at: site)
    }
}
