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

    public init(
        orders: Int = 100_000,
        producers: Int = 4,
        quoteEvery: Int = 500,
        keepSnapshot: Bool = false,
        quiet: Bool = false,
        help: Bool = false
    ) {
        self.orders = orders
        self.producers = producers
        self.quoteEvery = quoteEvery
        self.keepSnapshot = keepSnapshot
        self.quiet = quiet
        self.help = help
    }

    public static let usage = """
        USAGE: sluice-demo [--orders N] [--producers P] [--quote-every Q] [--keep-snapshot] [--quiet] [--help]

        Runs an order-processing service on a Sluice store: producer threads place orders; module reducers
        (orders, inventory, metrics, quotes) combined by key path; logging middleware; a throttled metrics
        reporter; a debounced JSON snapshot writer (in a new temporary folder); a takeLatest quote lookup. Prints a log excerpt and a
        summary, and exits 0 only if the final state is consistent.

        OPTIONS:
          --orders N      orders to place in all, 1...10000000 (default 100000)
          --producers P   producer threads, 1...64 (default 4)
          --quote-every Q every Q-th order also asks for a quote, 1...10000000 (default 500)
          --keep-snapshot keep the snapshot folder (a new temporary folder, removed at exit by default)
          --quiet         print only the summary
          --help          print this help
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
            case "--quiet":
                options.quiet = true
            case "--help", "-h":
                options.help = true
            default:
                throw ParseError(description: "unknown option '\(argument)'")
            }
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
