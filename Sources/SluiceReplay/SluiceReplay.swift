import Foundation
public import Sluice
public import SluiceJournal

/// The `replay` command: a journal inspector that a service builds into an executable of its own, with its reducer
/// and types.
///
/// ```swift
/// import SluiceReplay
/// SluiceReplay.main(initialState: Counter(), reducer: counterReducer, invariants: [
///     ReplayInvariant("total is never negative") { $0.total >= 0 }
/// ])
/// ```
///
/// The command reads the journal without taking its lock and never writes to it (see ``SluiceJournal/JournalReplay``);
/// it can inspect the journal of a running service. Run it with `--help` for its options: the state at a sequence
/// number as JSON (`--to N`), the actions of a range with their changes (`--diff`), the first action after which
/// an invariant fails (`--find NAME`), a range as a test fixture (`--export FILE`), and the replay gate of
/// ``SluiceJournal/JournalReplayGate`` as a CI step before a deploy (`--gate`: every snapshot and record decodes
/// with this build and the invariants hold after every record, or the exit status is 1).
public enum SluiceReplay {
    /// Runs the command with the process's arguments and exits with its status.
    ///
    /// - Parameters:
    ///   - reducerVersion: The version of `reducer`; snapshots of other versions are not used, and are named.
    ///   - migrations: How this build reads older versions (`--gate` reads the journal through them).
    ///   - initialState: The state before the first recorded action.
    ///   - reducer: The reducer that made the recorded states.
    ///   - invariants: The invariants that `--find` can look for, by name, and that `--gate` checks.
    public static func main<State: Codable, Action: Codable>(
        reducerVersion: Int = 0,
        migrations: JournalMigrations<State, Action> = JournalMigrations(),
        initialState: State,
        reducer: Reducer<State, Action>,
        invariants: [ReplayInvariant<State>] = []
    ) -> Never {
        let name = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "replay"
        let status = run(
            arguments: Array(CommandLine.arguments.dropFirst()),
            commandName: name,
            reducerVersion: reducerVersion,
            migrations: migrations,
            initialState: initialState,
            reducer: reducer,
            invariants: invariants,
            output: { print($0) },
            errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
        )
        exit(status)
    }

    /// Runs the command with `arguments` (without the command's name) and returns its exit status: 0 on success,
    /// 1 when `--find` found the invariant failing or `--gate` failed, 2 for a usage error or a journal that cannot
    /// be read.
    ///
    /// - Parameters:
    ///   - arguments: The command line after the command's name.
    ///   - commandName: The name the usage shows.
    ///   - reducerVersion: The version of `reducer`.
    ///   - migrations: How this build reads older versions (`--gate` reads the journal through them).
    ///   - initialState: The state before the first recorded action.
    ///   - reducer: The reducer that made the recorded states.
    ///   - invariants: The invariants that `--find` can look for, by name, and that `--gate` checks.
    ///   - output: Called with each line of standard output.
    ///   - errorOutput: Called with each line of standard error: errors, and notes on damage and versions.
    public static func run<State: Codable, Action: Codable>(
        arguments: [String],
        commandName: String = "replay",
        reducerVersion: Int = 0,
        migrations: JournalMigrations<State, Action> = JournalMigrations(),
        initialState: State,
        reducer: Reducer<State, Action>,
        invariants: [ReplayInvariant<State>] = [],
        output: @escaping (String) -> Void,
        errorOutput: @escaping (String) -> Void
    ) -> Int32 {
        let options: ReplayOptions
        do {
            options = try ReplayOptions.parse(arguments)
        } catch {
            errorOutput("\(commandName): \(error.description)")
            errorOutput(usage(commandName, invariants.map(\.name)))
            return 2
        }
        if options.help {
            output(usage(commandName, invariants.map(\.name)))
            return 0
        }
        if options.gate {
            let gate = JournalReplayGate(
                reducerVersion: reducerVersion,
                migrations: migrations,
                initialState: initialState,
                reducer: reducer,
                invariants: invariants.map { JournalReplayGate.Invariant($0.name, holds: $0.holds) }
            )
            let report = gate.check(directory: options.directory)
            if report.passed {
                output("\(commandName): gate \(report)")
                return 0
            }
            errorOutput("\(commandName): gate \(report)")
            return 1
        }
        let clock = ContinuousClock()
        let opening = clock.now
        let replay: JournalReplay<State, Action>
        do {
            replay = try JournalReplay(
                directory: options.directory,
                reducerVersion: reducerVersion,
                initialState: initialState,
                reducer: reducer
            )
        } catch {
            errorOutput("\(commandName): cannot read the journal in \(options.directory): \(error)")
            return 2
        }
        let openTime = opening.duration(to: clock.now)
        for line in notes(replay) {
            errorOutput("\(commandName): note: " + line)
        }
        let command = Command(replay: replay, options: options, name: commandName, output: output, error: errorOutput)
        return command.execute(invariants: invariants, openTime: openTime)
    }

    static func usage(_ name: String, _ invariants: [String]) -> String {
        let known = invariants.isEmpty ? "(none)" : invariants.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            USAGE: \(name) DIR [--from A] [--to N] [--diff] [--find NAME] [--export FILE [--states]]
                          [--max-changes K] [--measure] [--gate] [--help]

            Replays the action journal in DIR with this service's reducer, without taking the journal's lock and
            without writing to it (a running service may be writing it). Without an option, prints what the
            journal holds: the range of states, the snapshots, and where reading stopped if it is damaged.

            OPTIONS:
              --to N          print the state after action N as JSON (default: the last action)
              --from A        the state a range starts after (--diff, --export; default: the first state)
              --diff          print the action at N and what it changed; with --from, each action after A
                              through N
              --find NAME     find the first action after which the invariant NAME fails (bisection; it assumes
                              that once the invariant fails it stays failing); exit status 1 if it fails
              --export FILE   write the actions after A through N, and the states around them, to FILE as a
                              JSON test fixture (TestStore.replay in SluiceTesting)
              --states        with --export, also keep the state after each action
              --max-changes K list at most K changes per action (default 20)
              --measure       print how long reading and a full replay took
              --gate          check that this build reads every snapshot and record of the journal (through its
                              migrations) and that every invariant holds after each record; exit status 1 if
                              not (a CI step before a deploy, on a journal the deployed version wrote)
              --help          print this help

            INVARIANTS: \(known)
            """
    }

    static func notes<State, Action>(_ replay: JournalReplay<State, Action>) -> [String] {
        var lines: [String] = []
        if let damage = replay.damage {
            lines.append("reading stopped after sequence \(replay.lastSequence): \(damage)")
        }
        for other in replay.otherVersionSnapshots {
            lines.append(
                "the snapshot at sequence \(other.sequence) was made by reducer version \(other.version), this "
                    + "replay reads version \(replay.reducerVersion): not used"
            )
        }
        if !replay.skippedSnapshots.isEmpty {
            lines.append(
                "snapshots skipped (damaged or undecodable): \(replay.skippedSnapshots.map(String.init).joined(separator: ", "))"
            )
        }
        return lines
    }
}

/// A named check on the state that `--find` of ``SluiceReplay`` looks for the first failure of.
public struct ReplayInvariant<State> {
    /// The name given to `--find`.
    public let name: String
    /// Whether the invariant holds for a state.
    public let holds: (State) -> Bool

    /// Creates an invariant.
    public init(_ name: String, holds: @escaping (State) -> Bool) {
        self.name = name
        self.holds = holds
    }
}

/// A usage error of the command line.
struct ReplayUsageError: Error, CustomStringConvertible {
    var description: String
}

/// The command line of the replay command, parsed by hand (the library keeps no dependency).
struct ReplayOptions: Equatable {
    var directory = ""
    var from: UInt64?
    var to: UInt64?
    var diff = false
    var find: String?
    var export: String?
    var states = false
    var maxChanges = 20
    var measure = false
    var gate = false
    var help = false

    static func parse(_ arguments: [String]) throws(ReplayUsageError) -> ReplayOptions {
        var options = ReplayOptions()
        var directory: String?
        var index = 0
        func value(_ option: String) throws(ReplayUsageError) -> String {
            index += 1
            guard index < arguments.count else { throw ReplayUsageError(description: "\(option) needs a value") }
            return arguments[index]
        }
        func number(_ option: String) throws(ReplayUsageError) -> UInt64 {
            let text = try value(option)
            guard let number = UInt64(text) else {
                throw ReplayUsageError(description: "\(option) needs a sequence number, got '\(text)'")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--to": options.to = try number(argument)
            case "--from": options.from = try number(argument)
            case "--diff": options.diff = true
            case "--find": options.find = try value(argument)
            case "--export": options.export = try value(argument)
            case "--states": options.states = true
            case "--measure": options.measure = true
            case "--gate": options.gate = true
            case "--help", "-h": options.help = true
            case "--max-changes":
                let count = try number(argument)
                guard count >= 1, count <= 10_000 else {
                    throw ReplayUsageError(description: "--max-changes must be in 1...10000, got \(count)")
                }
                options.maxChanges = Int(count)
            default:
                guard !argument.hasPrefix("-"), directory == nil else {
                    throw ReplayUsageError(description: "unexpected argument '\(argument)'")
                }
                directory = argument
            }
            index += 1
        }
        if options.help { return options }
        guard let directory else { throw ReplayUsageError(description: "the journal's directory is missing") }
        options.directory = directory
        if options.states && options.export == nil {
            throw ReplayUsageError(description: "--states goes with --export")
        }
        if let from = options.from, let to = options.to, from > to {
            throw ReplayUsageError(description: "--from \(from) is after --to \(to)")
        }
        return options
    }
}

/// One run of the command on an open replay.
private struct Command<State: Codable, Action: Codable> {
    let replay: JournalReplay<State, Action>
    let options: ReplayOptions
    let name: String
    let output: (String) -> Void
    let error: (String) -> Void

    init(
        replay: JournalReplay<State, Action>,
        options: ReplayOptions,
        name: String,
        output: @escaping (String) -> Void,
        error: @escaping (String) -> Void
    ) {
        self.replay = replay
        self.options = options
        self.name = name
        self.output = output
        self.error = error
    }

    func execute(invariants: [ReplayInvariant<State>], openTime: Duration) -> Int32 {
        do {
            var status: Int32 = 0
            var acted = false
            if options.measure {
                try measure(openTime: openTime)
                acted = true
            }
            if let name = options.find {
                guard let invariant = invariants.first(where: { $0.name == name }) else {
                    let known = invariants.map { "\"\($0.name)\"" }.joined(separator: ", ")
                    error("\(self.name): no invariant named \"\(name)\"; known: \(known.isEmpty ? "(none)" : known)")
                    return 2
                }
                status = find(invariant)
                acted = true
            }
            if let path = options.export {
                try export(to: path)
                acted = true
            }
            if options.diff {
                try diff()
                acted = true
            }
            if !acted {
                if let to = options.to {
                    try printState(at: to)
                } else {
                    summary()
                }
            }
            return status
        } catch let failure as JournalError {
            error("\(name): \(failure)")
            return 2
        } catch {
            self.error("\(name): \(error)")
            return 2
        }
    }

    private var end: UInt64 { options.to ?? replay.lastSequence }

    private func summary() {
        output("journal \(replay.storage.locationDescription)")
        output(
            "  states               \(replay.firstSequence)...\(replay.lastSequence)"
                + (replay.firstSequence > 0 ? " (the records before \(replay.firstSequence) were compacted)" : "")
        )
        output("  actions              \(replay.lastSequence - replay.firstSequence)")
        let snapshots = replay.checkpointSequences.filter { $0 > 0 }
        output(
            "  snapshots used       "
                + (snapshots.isEmpty ? "none" : snapshots.map(String.init).joined(separator: ", "))
        )
        output("  damage               " + (replay.damage.map { "\($0)" } ?? "none"))
    }

    private func printState(at sequence: UInt64) throws {
        let state = try replay.state(at: sequence)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        output(String(decoding: try encoder.encode(state), as: UTF8.self))
    }

    private func diff() throws(JournalError) {
        let start = options.from ?? (end > replay.firstSequence ? end - 1 : end)
        try replay.forEachStep(after: start, through: end, maxChanges: options.maxChanges) { step in
            printStep(step)
            return true
        }
    }

    private func printStep(_ step: JournalReplayStep<State, Action>) {
        output("\(step.sequence) \(step.actionDescription())")
        if step.changes.isEmpty {
            output("    (no change)")
        }
        for change in step.changes {
            output("    " + change.description)
        }
        if step.omittedChanges > 0 {
            output("    … and \(step.omittedChanges) more")
        }
    }

    private func find(_ invariant: ReplayInvariant<State>) -> Int32 {
        let clock = ContinuousClock()
        let start = clock.now
        let found = replay.bisect(maxChanges: options.maxChanges, invariant.holds)
        let elapsed = start.duration(to: clock.now)
        let cost =
            "(\(found.evaluations) checks, \(found.reductions) reductions, \(Self.format(elapsed)); states "
            + "\(replay.firstSequence)...\(replay.lastSequence))"
        switch found.outcome {
        case .holds:
            output("\"\(invariant.name)\" holds at the last state \(cost)")
            return 0
        case .failsAtStart(let sequence):
            output("\"\(invariant.name)\" fails already at the first state the journal holds, \(sequence) \(cost)")
            return 1
        case .fails(let step):
            output("\"\(invariant.name)\" first fails after action \(step.sequence) \(cost):")
            printStep(step)
            return 1
        }
    }

    private func export(to path: String) throws {
        let start = options.from ?? replay.firstSequence
        let fixture = try replay.fixture(after: start, through: end, includingStates: options.states)
        try fixture.write(toFile: path)
        output(
            "wrote \(fixture.actions.count) actions (after sequence \(start) through \(end))"
                + "\(options.states ? " with each state" : "") to \(path)"
        )
    }

    private func measure(openTime: Duration) throws(JournalError) {
        let actions = replay.lastSequence - replay.firstSequence
        let clock = ContinuousClock()
        let start = clock.now
        _ = try replay.state(at: replay.lastSequence, usingSnapshots: false)
        let reduceTime = start.duration(to: clock.now)
        let total = openTime + reduceTime
        output(
            "read and decoded \(actions) actions in \(Self.format(openTime)); reduced them from state "
                + "\(replay.firstSequence) in \(Self.format(reduceTime)); full replay \(Self.format(total)), "
                + "\(Self.rate(actions, total)) actions/s"
        )
    }

    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds < 1 ? String(format: "%.1f ms", seconds * 1000) : String(format: "%.2f s", seconds)
    }

    static func rate(_ count: UInt64, _ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        guard seconds > 0 else { return "-" }
        return String(Int((Double(count) / seconds).rounded()))
    }
}

extension JournalStorage {
    /// The directory of a local journal, or the storage's type.
    fileprivate var locationDescription: String {
        (self as? FileJournalStorage)?.directory ?? String(describing: type(of: self))
    }
}
