public import Sluice

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A read-only replay of a recorded journal: the state after any recorded action, the action at each step and the
/// change it made, and the first action after which an invariant fails.
///
/// A journal is an exact history of a store: every action its reducer saw, in order, and reducers are pure. A
/// replay reads that history with the same reducer, on another machine if need be, to find where a state went
/// wrong:
///
/// ```swift
/// let replay = try JournalReplay<Counter, CounterAction>(
///     directory: dataDirectory,
///     initialState: Counter(),
///     reducer: counterReducer
/// )
/// let step = try replay.step(at: replay.lastSequence)
/// print(step.sequence, step.action, step.changes.map(\.description))
/// ```
///
/// Opening reads the journal once: the snapshots (checked; each is decoded when a query first needs it) and every
/// record after the oldest state it can start from (decoded, kept in memory). It calls only the reading requirements of ``JournalStorage``
/// (``JournalStorage/snapshotSequences()``, ``JournalStorage/readSnapshot(covering:)`` and
/// ``JournalStorage/readRecords(after:_:)``): never ``JournalStorage/acquire()``, which would take the writer's
/// lock, nor ``JournalStorage/lastSequence()``, which cuts off a torn last record. So a journal that a live store
/// is writing can be replayed: the replay holds the records that were complete when it read them, a consistent
/// prefix of the log, and the writer is neither locked out nor changed.
///
/// Damage does not stop the replay at opening: the records before a damaged one are replayed, and ``damage``
/// names the file and offset where reading stopped, as recovery would. A snapshot that fails its checksum or does
/// not decode is listed in ``skippedSnapshots``; one made by another reducer version in
/// ``otherVersionSnapshots``.
///
/// States are rebuilt from the nearest usable snapshot at or before the wanted sequence, through the reducer alone
/// (no middleware, no effects: replaying effects would repeat them). Not thread-safe: use a replay from one thread
/// at a time.
public final class JournalReplay<State: Codable, Action: Codable> {
    /// Where the journal is read from.
    public let storage: any JournalStorage
    /// The reducer version of this replay: snapshots made by another version are not used.
    public let reducerVersion: Int
    /// The reducer that made the recorded states.
    public let reducer: Reducer<State, Action>
    /// The earliest sequence number whose state the replay can rebuild: 0 (the initial state) when the journal
    /// still holds its first record, otherwise the oldest usable snapshot (records before it were compacted away).
    public let firstSequence: UInt64
    /// The sequence number of the last action that was read: the end of the journal, or the last record before
    /// the ``damage``.
    public let lastSequence: UInt64
    /// Where reading stopped before the end of the log, if it did: a damaged record (file and offset), a record
    /// that does not decode (its sequence number), missing records. `nil` when the whole log was read.
    public let damage: JournalError?
    /// The snapshots that failed their checksum or could not be read, and those that did not decode when the
    /// replay first needed them.
    public private(set) var skippedSnapshots: [UInt64]
    /// The snapshots made by another reducer version than ``reducerVersion``, newest first.
    public let otherVersionSnapshots: [JournalSnapshotVersion]
    /// The sequence numbers of the states the replay starts from, oldest first: ``firstSequence`` and each usable
    /// snapshot after it.
    public var checkpointSequences: [UInt64] { checkpoints.map(\.sequence) }
    /// How many actions this replay has reduced so far, for measuring what a query cost.
    public private(set) var reductions = 0

    /// The recorded actions `firstSequence + 1 ... lastSequence`, in order.
    private let actions: [Action]
    /// The states that need no reduction, oldest first: the one at ``firstSequence`` and each usable snapshot
    /// (decoded when first needed, then kept).
    private var checkpoints: [Checkpoint]
    private let coder: JournalCoder
    private var scratch: Data

    private struct Checkpoint {
        let sequence: UInt64
        var state: State?
        var payload: [UInt8]
    }

    /// Opens the journal in a local directory for reading, without taking its lock.
    ///
    /// - Parameters:
    ///   - directory: The journal's directory; it is not created if missing.
    ///   - reducerVersion: The version of `reducer`; snapshots of other versions are not used.
    ///   - initialState: The state before the first recorded action.
    ///   - reducer: The reducer that made the recorded states.
    /// - Throws: An error of the storage when the journal cannot be listed, or when no state can be rebuilt: the
    ///   records before every usable snapshot are gone (then a snapshot of another reducer version is named).
    public convenience init(
        directory: String,
        reducerVersion: Int = 0,
        initialState: State,
        reducer: Reducer<State, Action>
    ) throws(JournalError) {
        try self.init(
            storage: FileJournalStorage(directory: directory),
            reducerVersion: reducerVersion,
            initialState: initialState,
            reducer: reducer
        )
    }

    /// Opens a journal on any storage backend for reading, without acquiring it.
    ///
    /// - Parameters:
    ///   - storage: Where the journal is kept; only its reading requirements are called.
    ///   - reducerVersion: The version of `reducer`; snapshots of other versions are not used.
    ///   - initialState: The state before the first recorded action.
    ///   - reducer: The reducer that made the recorded states.
    /// - Throws: An error of the storage when the journal cannot be listed, or when no state can be rebuilt: the
    ///   records before every usable snapshot are gone (then a snapshot of another reducer version is named).
    public init(
        storage: any JournalStorage,
        reducerVersion: Int = 0,
        initialState: State,
        reducer: Reducer<State, Action>
    ) throws(JournalError) {
        self.storage = storage
        self.reducerVersion = reducerVersion
        self.reducer = reducer
        let coder = JournalCoder()
        var scratch = Data()
        // Checked now, decoded when first needed: decoding a large state costs more than reading its records.
        var usable: [Checkpoint] = []
        var skipped: [UInt64] = []
        var others: [JournalSnapshotVersion] = []
        for sequence in try storage.snapshotSequences() {
            switch readSnapshotPayload(covering: sequence, from: storage, reducerVersion: reducerVersion) {
            case .loaded(let payload): usable.append(Checkpoint(sequence: sequence, state: nil, payload: payload))
            case .otherVersion(let version): others.append(JournalSnapshotVersion(sequence: sequence, version: version))
            case .unusable: skipped.append(sequence)
            }
        }
        usable.reverse()
        var read = Self.readActions(after: 0, from: storage, coder: coder, scratch: &scratch)
        var start = Checkpoint(sequence: 0, state: initialState, payload: [])
        // The records from sequence 1 reach this far; a usable snapshot past them is where recovery starts too.
        let reach = UInt64(read.actions.count)
        var isCompacted = false
        if read.actions.isEmpty, case .missingRecords = read.error { isCompacted = true }
        if isCompacted || usable.contains(where: { $0.sequence > reach }) {
            // Compacted (the log starts after a snapshot), seeded with a snapshot and no records, or cut short before
            // a snapshot: start from the oldest usable snapshot past the records that decodes.
            while let index = usable.firstIndex(where: { $0.sequence > reach }), start.sequence == 0 {
                let oldest = usable.remove(at: index)
                if case .success(let state) = decodeSnapshot(
                    State.self,
                    oldest.payload,
                    sequence: oldest.sequence,
                    coder: coder,
                    scratch: &scratch
                ) {
                    start = Checkpoint(sequence: oldest.sequence, state: state, payload: [])
                } else {
                    skipped.append(oldest.sequence)
                }
            }
        }
        if start.sequence > 0 {
            read = Self.readActions(after: start.sequence, from: storage, coder: coder, scratch: &scratch)
        } else if isCompacted {
            if let other = others.last {
                throw .undecodable(
                    sequence: other.sequence,
                    description: "the snapshot was made by reducer version \(other.version), this replay "
                        + "reads version \(reducerVersion), and the records before it are gone"
                )
            }
            throw read.error ?? .missingRecords(expected: 1, file: "the journal")
        }
        let last = start.sequence + UInt64(read.actions.count)
        firstSequence = start.sequence
        lastSequence = last
        actions = read.actions
        damage = read.error
        skippedSnapshots = skipped
        otherVersionSnapshots = others
        checkpoints = [start] + usable.filter { $0.sequence > start.sequence && $0.sequence <= last }
        self.coder = coder
        self.scratch = scratch
    }

    /// Reads and decodes the records after `base` until the end of the log or the first error.
    private static func readActions(
        after base: UInt64,
        from storage: any JournalStorage,
        coder: JournalCoder,
        scratch: inout Data
    ) -> (actions: [Action], error: JournalError?) {
        var actions: [Action] = []
        var expected = base + 1
        do throws(JournalError) {
            try storage.readRecords(after: base) { sequence, payload throws(JournalError) in
                guard sequence == expected else {
                    throw .missingRecords(expected: expected, file: "the journal (it continues at \(sequence))")
                }
                actions.append(try coder.decode(Action.self, from: payload, scratch: &scratch, sequence: sequence))
                expected += 1
            }
            return (actions, nil)
        } catch {
            return (actions, error)
        }
    }

    /// The recorded action with this sequence number.
    ///
    /// - Throws: ``JournalError/missingRecords(expected:file:)`` when the replay does not hold it.
    public func action(at sequence: UInt64) throws(JournalError) -> Action {
        guard sequence > firstSequence, sequence <= lastSequence else { throw unavailable(sequence) }
        return actions[Int(sequence - firstSequence - 1)]
    }

    /// The state after the action with this sequence number (at ``firstSequence``, the state the replay starts
    /// from), rebuilt from the nearest usable snapshot at or before it.
    ///
    /// - Parameters:
    ///   - sequence: The sequence number, in ``firstSequence``...``lastSequence``.
    ///   - usingSnapshots: With `false`, every action from ``firstSequence`` is reduced, ignoring the later
    ///     snapshots: to check them against the records, or to measure a full replay.
    /// - Throws: ``JournalError/missingRecords(expected:file:)`` when it is outside
    ///   ``firstSequence``...``lastSequence``.
    public func state(at sequence: UInt64, usingSnapshots: Bool = true) throws(JournalError) -> State {
        guard sequence >= firstSequence, sequence <= lastSequence else { throw unavailable(sequence) }
        var index = usingSnapshots ? checkpointIndex(atOrBefore: sequence) : 0
        while true {
            if let checkpointState = decodedState(index) {
                var state = checkpointState
                advance(&state, from: checkpoints[index].sequence, through: sequence)
                return state
            }
            index -= 1
        }
    }

    /// The action with this sequence number, the states before and after it, and the change it made.
    ///
    /// - Parameters:
    ///   - sequence: The action's sequence number, in `firstSequence + 1 ... lastSequence`.
    ///   - maxChanges: The most changes listed; the rest are counted in ``JournalReplayStep/omittedChanges``.
    public func step(at sequence: UInt64, maxChanges: Int = 20) throws(JournalError) -> JournalReplayStep<State, Action>
    {
        let action = try action(at: sequence)
        return makeStep(sequence, action, before: try state(at: sequence - 1), maxChanges: maxChanges)
    }

    /// Calls `body` with each step from the one after `start` through `end`, in order, until it returns `false`.
    ///
    /// The states are rebuilt once, from the nearest snapshot before `start`, then carried from step to step.
    ///
    /// - Throws: ``JournalError/missingRecords(expected:file:)`` when the range is outside the replay.
    public func forEachStep(
        after start: UInt64,
        through end: UInt64,
        maxChanges: Int = 20,
        _ body: (JournalReplayStep<State, Action>) -> Bool
    ) throws(JournalError) {
        guard end <= lastSequence else { throw unavailable(end) }
        var state = try state(at: start)
        var sequence = start
        while sequence < end {
            sequence += 1
            let step = makeStep(sequence, actions[index(of: sequence)], before: state, maxChanges: maxChanges)
            state = step.after
            if !body(step) { return }
        }
    }

    /// Finds the first action after which `holds` is false, by bisection.
    ///
    /// Like `git bisect`, it assumes that once the invariant fails it stays failing until the end of the replay:
    /// it finds an action after which the invariant fails and before which it held, the first one if the
    /// invariant never recovers. The snapshots are checked first (no reduction), then the actions between the
    /// last snapshot where it holds and the next one where it fails are bisected: `holds` is called O(log n)
    /// times, and the reductions are bounded by about twice the actions between those two snapshots.
    ///
    /// - Parameters:
    ///   - maxChanges: The most changes listed in the failing step.
    ///   - holds: The invariant, checked on states.
    public func bisect(maxChanges: Int = 20, _ holds: (State) -> Bool) -> JournalBisection<State, Action> {
        let startReductions = reductions
        var evaluations = 0
        func check(_ state: State) -> Bool {
            evaluations += 1
            return holds(state)
        }
        func result(_ outcome: JournalBisection<State, Action>.Outcome) -> JournalBisection<State, Action> {
            JournalBisection(outcome: outcome, evaluations: evaluations, reductions: reductions - startReductions)
        }
        guard let first = decodedState(0), check(first) else { return result(.failsAtStart(firstSequence)) }
        // The last checkpoint where it holds, and the next one (where it fails), or the end of the replay.
        var low = 0
        var high = checkpoints.count
        while high - low > 1 {
            let middle = (low + high) / 2
            guard let state = decodedState(middle) else {
                // It did not decode and is gone: the later checkpoints moved down by one.
                high -= 1
                continue
            }
            if check(state) { low = middle } else { high = middle }
        }
        var good = (sequence: checkpoints[low].sequence, state: decodedState(low)!)
        var bad: UInt64
        // A state passed on the way to a bisection point, kept because it is the next point if that one fails.
        var saved: (sequence: UInt64, state: State)?
        if high < checkpoints.count {
            bad = checkpoints[high].sequence
        } else {
            guard good.sequence < lastSequence else { return result(.holds) }
            var last = good.state
            saved = advance(
                &last,
                from: good.sequence,
                through: lastSequence,
                keeping: middle(good.sequence, lastSequence)
            )
            if check(last) { return result(.holds) }
            bad = lastSequence
        }
        while bad - good.sequence > 1 {
            let point = middle(good.sequence, bad)
            var state: State
            if let kept = saved, kept.sequence == point {
                state = kept.state
                saved = nil
            } else {
                state = good.state
                saved = advance(&state, from: good.sequence, through: point, keeping: middle(good.sequence, point))
            }
            if check(state) {
                good = (point, state)
                saved = nil
            } else {
                bad = point
            }
        }
        let step = makeStep(bad, actions[index(of: bad)], before: good.state, maxChanges: maxChanges)
        return result(.fails(step))
    }

    /// The actions after `start` through `end` as a fixture: the state before them, the actions, and the state
    /// after them (and, with `includingStates`, after each of them), for a regression test.
    ///
    /// - Throws: ``JournalError/missingRecords(expected:file:)`` when the range is outside the replay.
    public func fixture(
        after start: UInt64,
        through end: UInt64,
        includingStates: Bool = false
    ) throws(JournalError) -> JournalFixture<State, Action> {
        guard start <= end else { throw unavailable(start) }
        guard end <= lastSequence else { throw unavailable(end) }
        let initial = try state(at: start)
        let range = start < end ? index(of: start + 1)...index(of: end) : nil
        let slice = range.map { Array(actions[$0]) } ?? []
        var state = initial
        var states: [State] = []
        let reduce = reducer.reduce
        for action in slice {
            reduce(&state, action)
            if includingStates { states.append(state) }
        }
        reductions += slice.count
        return JournalFixture(
            reducerVersion: reducerVersion,
            firstSequence: start,
            initialState: initial,
            actions: slice,
            finalState: state,
            states: includingStates ? states : nil
        )
    }

    // MARK: - Implementation

    private func index(of sequence: UInt64) -> Int {
        Int(sequence - firstSequence - 1)
    }

    private func middle(_ low: UInt64, _ high: UInt64) -> UInt64 {
        low + (high - low) / 2
    }

    /// The state of a checkpoint, decoded the first time; `nil` for a snapshot that does not decode, which is
    /// then removed from the checkpoints and listed in ``skippedSnapshots``. The first checkpoint always has one.
    private func decodedState(_ index: Int) -> State? {
        if let state = checkpoints[index].state { return state }
        let checkpoint = checkpoints[index]
        guard
            case .success(let state) = decodeSnapshot(
                State.self,
                checkpoint.payload,
                sequence: checkpoint.sequence,
                coder: coder,
                scratch: &scratch
            )
        else {
            checkpoints.remove(at: index)
            skippedSnapshots.append(checkpoint.sequence)
            return nil
        }
        checkpoints[index].state = state
        checkpoints[index].payload = []
        return state
    }

    private func checkpointIndex(atOrBefore sequence: UInt64) -> Int {
        var low = 0
        var high = checkpoints.count
        // The last checkpoint whose sequence is at most `sequence`; the first one always is.
        while high - low > 1 {
            let middle = (low + high) / 2
            if checkpoints[middle].sequence <= sequence { low = middle } else { high = middle }
        }
        return low
    }

    /// Reduces the actions after `start` through `end` into `state`; returns the state at `keeping`, if passed.
    @discardableResult
    private func advance(
        _ state: inout State,
        from start: UInt64,
        through end: UInt64,
        keeping: UInt64? = nil
    ) -> (sequence: UInt64, state: State)? {
        guard end > start else { return nil }
        let reduce = reducer.reduce
        var kept: (sequence: UInt64, state: State)?
        var sequence = start
        for action in actions[index(of: start + 1)...index(of: end)] {
            reduce(&state, action)
            sequence += 1
            if sequence == keeping { kept = (sequence, state) }
        }
        reductions += Int(end - start)
        return kept
    }

    private func makeStep(
        _ sequence: UInt64,
        _ action: Action,
        before: State,
        maxChanges: Int
    ) -> JournalReplayStep<State, Action> {
        var after = before
        reducer.reduce(&after, action)
        reductions += 1
        let diff = ValueDiff(before, after, bounds: .replay(maxChanges: max(1, maxChanges)))
        return JournalReplayStep(
            sequence: sequence,
            action: action,
            before: before,
            after: after,
            changes: diff.changes,
            omittedChanges: diff.omitted
        )
    }

    private func unavailable(_ sequence: UInt64) -> JournalError {
        .missingRecords(expected: sequence, file: "the replay (it holds states \(firstSequence)...\(lastSequence))")
    }
}

/// A snapshot's sequence number and the reducer version that made it.
public struct JournalSnapshotVersion: Sendable, Equatable {
    /// The sequence number the snapshot covers.
    public var sequence: UInt64
    /// The reducer version that made it.
    public var version: Int

    /// Creates a description of a snapshot's version.
    public init(sequence: UInt64, version: Int) {
        self.sequence = sequence
        self.version = version
    }
}

/// One recorded action, the states before and after it, and the change it made.
public struct JournalReplayStep<State, Action> {
    /// The action's sequence number.
    public let sequence: UInt64
    /// The recorded action.
    public let action: Action
    /// The state before the action.
    public let before: State
    /// The state after the action.
    public let after: State
    /// The fields that the action changed, as the logging middleware describes them (`path: old -> new`), at most
    /// the replay's `maxChanges`.
    public let changes: [Middlewares.LogChange]
    /// How many more changes were found than ``changes`` lists.
    public let omittedChanges: Int

    /// The action as the logging middleware describes it (`placeOrder(Order(id: 7, …))`), at most `limit`
    /// characters.
    public func actionDescription(limit: Int = 200) -> String {
        let format = LogLineFormat(maxLineLength: nil, maxChanges: 1, for: Action.self)
        return format.describe(action, limit: max(1, limit))
    }
}

extension JournalReplayStep: Sendable where State: Sendable, Action: Sendable {}

/// What ``JournalReplay/bisect(maxChanges:_:)`` found, and what it cost.
public struct JournalBisection<State, Action> {
    /// Where the invariant fails.
    public enum Outcome {
        /// The invariant holds at the end of the replay (and, under bisection's assumption, throughout).
        case holds
        /// The invariant fails already at the state the replay starts from, this sequence number: the action
        /// that broke it is not in the replay.
        case failsAtStart(UInt64)
        /// The action after which the invariant fails (and before which it held), with its change.
        case fails(JournalReplayStep<State, Action>)
    }

    /// Where the invariant fails.
    public let outcome: Outcome
    /// How many times the invariant was checked.
    public let evaluations: Int
    /// How many actions were reduced.
    public let reductions: Int

    /// The failing step, if the invariant fails after an action of the replay.
    public var failingStep: JournalReplayStep<State, Action>? {
        if case .fails(let step) = outcome { return step }
        return nil
    }
}

extension JournalBisection.Outcome: Sendable where State: Sendable, Action: Sendable {}
extension JournalBisection: Sendable where State: Sendable, Action: Sendable {}
