public import Logging
public import SluiceJournal

/// The command line of `OrderService`.
public struct ServiceOptions: Sendable, Equatable {
    /// Which backend holds the orders.
    public enum Backend: String, Sendable {
        /// A Sluice store.
        case sluice
        /// A `Mutex`-guarded struct (the comparison floor).
        case mutex
    }

    /// The address to listen on; loopback by default.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (the chosen port is printed).
    public var port = 8080
    /// `--backend sluice|mutex`.
    public var backend = Backend.sluice
    /// `--data-dir PATH`: journal the store there, and recover from it at start.
    public var dataDirectory: String?
    /// `--durability group|every|none`: when a journaled action is on stable storage.
    public var durability = JournalDurability.groupCommit(interval: .milliseconds(1))
    /// `--log-level`: swift-log's level (`debug` logs every action).
    public var logLevel = Logger.Level.info
    /// `--max-body BYTES`: the largest request body taken.
    public var maxBodyBytes = 4_096

    /// The defaults.
    public init() {}

    /// How to call the program.
    public static let usage = """
        usage: OrderService [--host ADDRESS] [--port N] [--backend sluice|mutex] [--data-dir PATH]
                            [--durability group|every|none] [--log-level trace|debug|info|...] [--max-body BYTES]
        """

    /// Parses the arguments (without the program's name).
    ///
    /// - Throws: ``OptionsError`` naming the argument that is wrong.
    public init(arguments: some Sequence<String>) throws(OptionsError) {
        var iterator = arguments.makeIterator()
        func value(for option: String) throws(OptionsError) -> String {
            guard let value = iterator.next() else { throw OptionsError("\(option) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--host":
                host = try value(for: argument)
            case "--port":
                let text = try value(for: argument)
                guard let port = Int(text), (0...65_535).contains(port) else {
                    throw OptionsError("--port must be a number from 0 to 65535, got \(text)")
                }
                self.port = port
            case "--backend":
                let text = try value(for: argument)
                guard let backend = Backend(rawValue: text) else {
                    throw OptionsError("--backend must be sluice or mutex, got \(text)")
                }
                self.backend = backend
            case "--data-dir":
                dataDirectory = try value(for: argument)
            case "--durability":
                switch try value(for: argument) {
                case "group": durability = .groupCommit(interval: .milliseconds(1))
                case "every": durability = .everyAction
                case "none": durability = JournalDurability.none
                case let other: throw OptionsError("--durability must be group, every or none, got \(other)")
                }
            case "--log-level":
                let text = try value(for: argument)
                guard let level = Logger.Level(rawValue: text) else {
                    throw OptionsError(
                        "--log-level must be one of trace, debug, info, notice, warning, error, critical"
                    )
                }
                logLevel = level
            case "--max-body":
                let text = try value(for: argument)
                guard let bytes = Int(text), bytes > 0 else {
                    throw OptionsError("--max-body must be a positive number of bytes, got \(text)")
                }
                maxBodyBytes = bytes
            case "-h", "--help":
                throw OptionsError(nil)
            default:
                throw OptionsError("unknown argument \(argument)")
            }
        }
        if backend == .mutex && dataDirectory != nil {
            throw OptionsError("--data-dir journals the Sluice store; the mutex backend keeps no journal")
        }
    }
}

/// A command line that `ServiceOptions` cannot take.
public struct OptionsError: Error, Sendable {
    /// What is wrong; `nil` for `--help`.
    public var message: String?

    init(_ message: String?) {
        self.message = message
    }
}
