/// The command line of `sluice-demo`.
public struct DemoOptions: Sendable, Equatable {
    /// How many orders the producers place in all.
    public var orders = 100_000
    /// How many producer threads dispatch at once.
    public var producers = 4
    /// Every `quoteEvery`-th order also asks for a price quote (a `takeLatest` lookup).
    public var quoteEvery = 500
    /// Keep the snapshot folder after the run instead of removing it.
    public var keepSnapshot = false
    /// Print only the summary.
    public var quiet = false
    /// Print the usage and exit.
    public var help = false
    /// Journal every action to this directory, and resume from the journal it holds (`--data-dir`).
    public var dataDirectory: String?
    /// Print `ack ORDER SEQUENCE` for each placed order once the journal holds it durably (`--acknowledge`, for
    /// the crash tests).
    public var acknowledge = false
    /// How long the run waits, once the producers are done, for the quote lookup in flight to deliver its result
    /// (not a command-line option). The lookup is a task of the cooperative pool: in a process whose pool is
    /// saturated (a test process running other suites on a loaded machine) it can wait long for a thread.
    public var settleTimeout: Duration = .seconds(60)

    public init(
        orders: Int = 100_000,
        producers: Int = 4,
        quoteEvery: Int = 500,
        keepSnapshot: Bool = false,
        quiet: Bool = false,
        help: Bool = false,
        dataDirectory: String? = nil,
        acknowledge: Bool = false
    ) {
        self.orders = orders
        self.producers = producers
        self.quoteEvery = quoteEvery
        self.keepSnapshot = keepSnapshot
        self.quiet = quiet
        self.help = help
        self.dataDirectory = dataDirectory
        self.acknowledge = acknowledge
    }

    public static let usage = """
        USAGE: sluice-demo [--orders N] [--producers P] [--quote-every Q] [--keep-snapshot | --data-dir DIR]
                           [--acknowledge] [--quiet] [--help]

        Runs an order-processing service on a Sluice store: producer threads place orders; module reducers
        (orders, inventory, metrics, quotes) combined by key path, each order kept by id and changed with forEach;
        logging middleware; a throttled metrics reporter; a debounced snapshot writer; a takeLatest quote lookup.
        Prints a log excerpt and a summary, and exits 0 only if the final state is consistent.

        OPTIONS:
          --orders N      orders 1...N to place in all, N in 1...10000000 (default 100000)
          --producers P   producer threads, 1...64 (default 4)
          --quote-every Q every Q-th order also asks for a quote, 1...10000000 (default 500)
          --keep-snapshot keep the JSON snapshot's folder (a new temporary folder, removed at exit by default)
          --data-dir DIR  journal every action to DIR (created if missing); if DIR holds a journal, resume from it
          --acknowledge   with --data-dir: print "ack ORDER SEQUENCE" on standard output once the journal holds
                          that order durably (SEQUENCE is a journal sequence number at or after the order's)
          --quiet         print only the summary
          --help          print this help

        DATA DIRECTORY (--data-dir):
          Every action that reaches the reducer is recorded in an action journal in DIR, and the debounced snapshot
          writer saves journal snapshots there (instead of a JSON file). A run on a DIR that holds a journal first
          rebuilds the state from the newest snapshot and the actions after it, through the reducer only (no effect
          runs twice); then it resumes what the effects left unfinished (pending orders are decided again, the
          quote in flight is requested again) and places the orders of 1...N that the journal does not hold yet.
          The summary says how many actions were recovered, and from which snapshot sequence.

          Durability: group commit (.groupCommit(interval: .milliseconds(2))). The producers never wait for the
          disk: the journal's writer gathers up to 2 ms of actions into a batch, appends it and fsyncs it once, and
          an order is acknowledged (--acknowledge) only once journal.durable(through:) covers it. So a kill -9, or
          a power loss, loses only actions that were not acknowledged yet. Not .everyAction: one fsync per action,
          about 1 ms on this project's machine, would make a default run of some 200,000 actions last minutes.
          Not .none: the middleware never syncs, so until something syncs, actions survive a killed process but
          not a power loss.

        EXIT STATUS: 0 all checks passed; 1 a check failed; 2 bad options; 3 DIR cannot be used (not writable,
        locked by another running sluice-demo, a damaged journal, or more orders in it than --orders).
        """

    /// An error in the command line; its description says what is wrong.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Parses the arguments (without the program name).
    public static func parse(_ arguments: [String]) throws(ParseError) -> DemoOptions {
        var options = DemoOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--orders":
                options.orders = try integer(after: argument, from: &remaining, in: 1...10_000_000)
            case "--producers":
                options.producers = try integer(after: argument, from: &remaining, in: 1...64)
            case "--quote-every":
                options.quoteEvery = try integer(after: argument, from: &remaining, in: 1...10_000_000)
            case "--keep-snapshot":
                options.keepSnapshot = true
            case "--data-dir":
                guard let directory = remaining.popFirst(), !directory.isEmpty, !directory.hasPrefix("--") else {
                    throw ParseError(description: "--data-dir needs a directory")
                }
                options.dataDirectory = directory
            case "--acknowledge":
                options.acknowledge = true
            case "--quiet":
                options.quiet = true
            case "--help", "-h":
                options.help = true
            default:
                throw ParseError(description: "unknown option '\(argument)'")
            }
        }
        if options.acknowledge && options.dataDirectory == nil {
            throw ParseError(description: "--acknowledge needs --data-dir (it acknowledges what the journal holds)")
        }
        if options.keepSnapshot && options.dataDirectory != nil {
            throw ParseError(description: "--keep-snapshot and --data-dir exclude each other (DIR keeps the snapshots)")
        }
        return options
    }

    private static func integer(
        after option: String,
        from remaining: inout ArraySlice<String>,
        in range: ClosedRange<Int>
    ) throws(ParseError) -> Int {
        guard let text = remaining.popFirst() else {
            throw ParseError(description: "\(option) needs a value")
        }
        guard let value = Int(text), range.contains(value) else {
            throw ParseError(
                description:
                    "\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'"
            )
        }
        return value
    }
}
