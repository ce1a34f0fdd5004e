extension Middlewares {
    /// The importance of a log record, from the most detailed to the most severe; the same levels as swift-log's
    /// `Logger.Level`, so that a record maps to it one to one.
    public enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable {
        /// Detail for tracing a problem.
        case trace
        /// Information for debugging.
        case debug
        /// Information about normal operation.
        case info
        /// A normal but significant condition.
        case notice
        /// A condition that may need attention.
        case warning
        /// An error.
        case error
        /// A critical error.
        case critical

        /// Whether `lhs` is less severe than `rhs`.
        public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
            lhs.rawValue < rhs.rawValue
        }
    }

    /// What the logging middleware knows about one action, handed to a record sink
    /// (``logging(level:diff:maxChanges:maxLineLength:sampling:include:isEnabled:records:)``).
    ///
    /// The measurements are plain values; the text is made when it is read: ``actionDescription`` and ``line``
    /// describe the action (by reflection, unless its type has its own `description`) on each read, so a sink that
    /// does not read them does not pay for them, and one that needs them reads each once.
    public struct LogRecord<Action: Sendable>: Sendable {
        /// The level of the record: the `level` of the middleware.
        public let level: LogLevel
        /// The action.
        public let action: Action
        /// The time that the rest of the chain took for this action: the middleware after the logging middleware,
        /// the reducer and the subscribers, on the monotonic clock.
        public let duration: Duration
        /// How long this action's dispatch or send waited for another thread or task to finish the store's work;
        /// zero when it did not wait (see ``StoreStatistics``).
        public let waited: Duration
        /// The fields of the state that the action changed, with `diff: true` (with `diffing:`, the fields of what
        /// its closure returned); `nil` with `diff: false`. Empty when the action changed nothing. At most
        /// `maxChanges` of them; ``omittedChanges`` counts the rest.
        public let changes: [LogChange]?
        /// The changes found beyond `maxChanges`, not listed in ``changes``.
        public let omittedChanges: Int
        let format: LogLineFormat
        let elapsedNanoseconds: UInt64
        let waitedNanoseconds: UInt64

        init(
            level: LogLevel,
            action: Action,
            elapsed: UInt64,
            waited: UInt64,
            changes: [LogChange]?,
            omittedChanges: Int,
            format: LogLineFormat
        ) {
            self.level = level
            self.action = action
            self.duration = .nanoseconds(Int64(clamping: elapsed))
            self.waited = .nanoseconds(Int64(clamping: waited))
            self.changes = changes
            self.omittedChanges = omittedChanges
            self.format = format
            self.elapsedNanoseconds = elapsed
            self.waitedNanoseconds = waited
        }

        /// The action described compactly, in at most `maxLineLength` characters, control characters escaped:
        /// `orders(.place(id: 7, quantity: 2))`. Made on each read.
        public var actionDescription: String {
            format.describe(action, limit: format.maxLineLength ?? .max)
        }

        /// The line that ``Middlewares/logging(diff:maxChanges:maxLineLength:sampling:include:sink:)`` writes for
        /// this record: `<action> in <duration>`, then ` (waited <time>)` when the dispatch waited, then with the
        /// diff ` | <changes>`. Made on each read.
        public var line: String {
            format.line(
                for: action,
                elapsed: elapsedNanoseconds,
                waited: waitedNanoseconds,
                changes: changes,
                omitted: omittedChanges
            )
        }

        /// ``duration`` as people read it: `850ns`, `3.2µs`, `12ms`.
        public var durationText: String {
            LogLineFormat.format(nanoseconds: elapsedNanoseconds)
        }

        /// ``waited`` as people read it, like ``durationText``: `46ms`; `0ns` when the dispatch did not wait.
        public var waitedText: String {
            LogLineFormat.format(nanoseconds: waitedNanoseconds)
        }
    }

    /// One part of the state that an action changed, in a ``LogRecord`` or a replay's step.
    public struct LogChange: Sendable, Hashable, CustomStringConvertible {
        package enum Kind: Hashable, Sendable {
            /// `before -> after`.
            case values
            /// The values were compared only in part and may not differ: `before -> after (not compared in full)`.
            case notComparedInFull
            /// An element inserted into a set: `tags: inserted "new"`.
            case inserted
            /// An element removed from a set: `tags: removed "old"`.
            case removed
        }

        /// The part, as a path from the root of the state: fields and enum cases joined by dots, subscripts in
        /// brackets (`auctions[35].price`, `stock["apple"]`, `items.count`); `state` for the whole state.
        public let path: String
        /// The value before the action, described in at most 60 characters: `3`, `.pending`; `(none)` for an
        /// element or an entry that the action added, or for an element inserted into a set.
        public let before: String
        /// The value after the action, described like ``before``; `(none)` for an element or an entry that the
        /// action removed, or for an element removed from a set.
        public let after: String
        package let kind: Kind

        package init(path: String, before: String, after: String, kind: Kind) {
            self.path = path
            self.before = before
            self.after = after
            self.kind = kind
        }

        /// Whether the values were found to differ; `false` when the bounded comparison stopped before it could
        /// tell (the line then says `(not compared in full)`).
        public var isComparedInFull: Bool {
            kind != .notComparedInFull
        }

        /// The change as the line shows it: `auctions[35].price: 1020 -> 1015`, `tags: inserted "new"`.
        public var description: String {
            switch kind {
            case .values: path + ": " + before + " -> " + after
            case .notComparedInFull: path + ": " + before + " -> " + after + " (not compared in full)"
            case .inserted: path + ": inserted " + after
            case .removed: path + ": removed " + before
            }
        }
    }
}
