/// How a store reads what older versions of its reducer wrote: migrations of old snapshots to the current state,
/// and adapters that read old records as current actions.
///
/// A journal outlives the code that wrote it. Each deploy that changes `State` or `Action` raises the store's
/// `reducerVersion` and declares here how to read the previous version's data:
///
/// ```swift
/// let migrations = JournalMigrations<CounterV3, CounterActionV3>()
///     // Version 1's state had no `max`: read it as version 1's type and make version 2's.
///     .state(from: 1, as: CounterV1.self) { old in CounterV2(count: old.count, total: old.total, max: 0) }
///     // Version 1 called `added` `add`.
///     .actions(from: 1, as: CounterActionV1.self, to: CounterActionV2.self) { old in
///         switch old {
///         case .add(let amount): [.added(amount)]
///         case .reset: [.reset]
///         case .ping: [.ping]
///         }
///     }
///     // Version 3 split `reset` in two and dropped `ping`.
///     .actions(from: 2, as: CounterActionV2.self, to: CounterActionV3.self) { old in
///         switch old {
///         case .added(let amount): [.added(amount)]
///         case .reset: [.resetCount, .resetTotal]
///         case .ping: []
///         }
///     }
/// ```
///
/// A step declared `from: k` reads what version `k` wrote (and what versions before `k` wrote, back to the
/// previous declared step: a version that changed nothing needs no step) and produces the value of the next
/// declared step's type, or the current `State` or `Action` after the last step. So the steps chain:
/// a snapshot of version 1 is decoded as `CounterV1`, migrated to `CounterV2`, and would be migrated again by a
/// step `from: 2`. Recovery checks the chain's types before reading anything.
///
/// A snapshot of an older version with no step at or after its version is skipped, as a snapshot of another
/// version always was; a record with no step is decoded as the current `Action`, as every record of the current
/// version is (that path is unchanged: declared adapters cost nothing for records they do not apply to). Which
/// version wrote a record is kept by the storage (``JournalStorage/writerVersions()``).
public struct JournalMigrations<State, Action>: Sendable {
    /// The declared state migrations, by the version they read, ascending.
    var stateSteps: [Step]
    /// The declared action adapters, by the version they read, ascending.
    var actionSteps: [Step]

    /// One declared step: reads what `version` wrote as `input`, produces `output` (for an action adapter, an
    /// array of them).
    struct Step: Sendable {
        let version: Int
        let input: ObjectIdentifier
        let inputName: String
        let output: ObjectIdentifier
        let outputName: String
        /// Decodes a payload as `input`.
        let decode:
            @Sendable (_ bytes: UnsafeRawBufferPointer, _ decoder: inout EvolutionDecoder) throws(JournalError) -> Any
        /// Turns an `input` into an `output` (a state step) or into an array of outputs (an action adapter).
        let apply: @Sendable (Any) throws -> [Any]
        /// For an action adapter, decoding and adapting in one typed call, a `DirectAdapter<output>`: a record
        /// that only this step reads skips the boxing of `apply` when its output is the current `Action`.
        var direct: (any Sendable)?
    }

    /// Decodes a record as an adapter's old type and adapts it, without boxing.
    typealias DirectAdapter<New> =
        @Sendable (_ bytes: UnsafeRawBufferPointer, _ decoder: inout EvolutionDecoder) throws(JournalError) -> [New]

    /// No migrations: snapshots of other versions are skipped and records decode as the current `Action`.
    public init() {
        stateSteps = []
        actionSteps = []
    }

    /// Whether no step is declared.
    public var isEmpty: Bool {
        stateSteps.isEmpty && actionSteps.isEmpty
    }

    /// Adds a state migration: a snapshot made by `version` (or by an earlier version that no other step reads) is
    /// decoded as `old` and turned into the state of the next version.
    ///
    /// - Parameters:
    ///   - version: The reducer version whose snapshots this step reads.
    ///   - old: The state type that version wrote (or a `Decodable` keyed view of it, with only the fields needed).
    ///   - new: The state type of the next version (inferred from `migrate` when it can be).
    ///   - migrate: Makes the next version's state from the old one; an error thrown here skips the snapshot and is
    ///     named in recovery's report.
    /// - Returns: These migrations with the step added (replacing a state step already declared for `version`).
    public func state<Old: Decodable & SendableMetatype, New>(
        from version: Int,
        as old: Old.Type,
        to new: New.Type = New.self,
        _ migrate: @escaping @Sendable (Old) throws -> New
    ) -> Self {
        var copy = self
        copy.stateSteps = Self.adding(
            Step(
                version: version,
                input: ObjectIdentifier(Old.self),
                inputName: String(reflecting: Old.self),
                output: ObjectIdentifier(New.self),
                outputName: String(reflecting: New.self),
                decode: { bytes, decoder throws(JournalError) in try decoder.decode(Old.self, from: bytes) },
                apply: { value in [try migrate(value as! Old)] }
            ),
            to: stateSteps
        )
        return copy
    }

    /// Adds an action adapter: a record written by `version` (or by an earlier version that no other adapter
    /// reads) is decoded as `old` and read as the actions it returns, of the next version's action type.
    ///
    /// Return one action for a renamed case or a payload with a new field (give it its default), several for a
    /// case split in two, none for a case that no longer exists.
    ///
    /// - Parameters:
    ///   - version: The reducer version whose records this adapter reads.
    ///   - old: The action type that version wrote.
    ///   - new: The action type of the next version: the next adapter's `old`, or the current `Action`.
    ///   - adapt: The actions of the next version that the old one stands for, in order.
    /// - Returns: These migrations with the adapter added (replacing one already declared for `version`).
    public func actions<Old: Decodable & SendableMetatype, New>(
        from version: Int,
        as old: Old.Type,
        to new: New.Type,
        _ adapt: @escaping @Sendable (Old) -> [New]
    ) -> Self {
        var copy = self
        copy.actionSteps = Self.adding(
            Step(
                version: version,
                input: ObjectIdentifier(Old.self),
                inputName: String(reflecting: Old.self),
                output: ObjectIdentifier(New.self),
                outputName: String(reflecting: New.self),
                decode: { bytes, decoder throws(JournalError) in try decoder.decode(Old.self, from: bytes) },
                apply: { value in adapt(value as! Old) },
                direct: { bytes, decoder throws(JournalError) in
                    adapt(try decoder.decode(Old.self, from: bytes))
                } as DirectAdapter<New>
            ),
            to: actionSteps
        )
        return copy
    }

    private static func adding(_ step: Step, to steps: [Step]) -> [Step] {
        var steps = steps.filter { $0.version != step.version }
        steps.append(step)
        steps.sort { $0.version < $1.version }
        return steps
    }

    /// The steps that read what `version` wrote, for a reader of `current`: those declared from `version` up to,
    /// not including, `current`; empty when none applies (the data is read as the current type, or skipped).
    static func chain(_ steps: [Step], readingVersion version: Int, current: Int) -> ArraySlice<Step> {
        guard version < current, let first = steps.firstIndex(where: { $0.version >= version }) else { return [] }
        let end = steps.firstIndex(where: { $0.version >= current }) ?? steps.endIndex
        return first < end ? steps[first..<end] : []
    }

    /// Checks that each step produces what the next one reads and the last one produces `State` (or `Action`):
    /// the description of the first mismatch, or `nil`.
    func chainMismatch(current: Int) -> String? {
        func check(_ steps: [Step], final: Any.Type, kind: String) -> String? {
            let steps = steps.filter { $0.version < current }
            for (step, next) in zip(steps, steps.dropFirst()) where step.output != next.input {
                return "the \(kind) step from version \(step.version) produces \(step.outputName), but the step from "
                    + "version \(next.version) reads \(next.inputName)"
            }
            if let last = steps.last, last.output != ObjectIdentifier(final) {
                return "the last \(kind) step (from version \(last.version)) produces \(last.outputName), but this "
                    + "build's \(kind) is \(String(reflecting: final))"
            }
            return nil
        }
        return check(stateSteps, final: State.self, kind: "state")
            ?? check(actionSteps, final: Action.self, kind: "action")
    }

    /// Throws ``JournalError/notRecoverable(_:)`` naming the first mismatch of ``chainMismatch(current:)``, before
    /// anything is read.
    func checkChain(current: Int) throws(JournalError) {
        guard let mismatch = chainMismatch(current: current) else { return }
        throw .notRecoverable(
            JournalRecoveryFailure(
                cause: .migrationsDoNotChain(mismatch),
                reducerVersion: current,
                skipped: [],
                remedy: "declare each step with the type the previous step produces, the last one producing "
                    + "this build's type"
            )
        )
    }
}
