public import Logging
public import Sluice

extension Logger.Level {
    /// The swift-log level of a Sluice log level: the two have the same seven levels, mapped one to one.
    ///
    /// - Parameter level: The Sluice level.
    public init(_ level: Middlewares.LogLevel) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}

extension Middlewares.LogLevel {
    /// The Sluice level of a swift-log level, so that a store's logging can follow a configured `Logger.Level`.
    ///
    /// - Parameter level: The swift-log level.
    public init(_ level: Logger.Level) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}

/// The metadata keys that ``Sluice/Middlewares/logging(to:level:store:diff:maxChanges:maxLineLength:sampling:include:)``
/// writes, so that a log pipeline can pick them out by name.
public enum SluiceLogMetadataKey {
    /// The time the action's work took (the middleware after this one, the reducer, the subscribers): `3.2µs`.
    public static let duration = "sluice.duration"
    /// How long the dispatch waited for another thread or task to finish the store's work; present only when it
    /// waited: `46ms`.
    public static let waited = "sluice.waited"
    /// The fields of the state that the action changed, as an array of `path: before -> after`; with `diff: true`.
    public static let changes = "sluice.changes"
    /// The changes found beyond `maxChanges` and not listed; present only when there are some.
    public static let omittedChanges = "sluice.omitted_changes"
    /// The label of the store, when the middleware was given one: tells apart the stores of one service.
    public static let store = "sluice.store"
}

extension Middlewares {
    /// A middleware that logs each action to a swift-log `Logger`: the action as the message, what it cost as
    /// structured metadata.
    ///
    /// ```swift
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     middleware: [Middlewares.logging(to: logger, level: .debug, store: "orders")]
    /// )
    /// ```
    ///
    /// The logger's level is checked first, for every action: when it lets no record of `level` through, the
    /// action passes to the next middleware untouched, and nothing is measured, compared or described. A
    /// logged action writes one entry at `level` whose message is the action described compactly
    /// (`place(id: 7, quantity: 2)`, at most `maxLineLength` characters), with the metadata named in
    /// ``SluiceLogMetadataKey``: the duration, the wait (when the dispatch waited), the changes (with
    /// `diff: true`) and the store's label (when given). This is
    /// ``Sluice/Middlewares/logging(level:diff:maxChanges:maxLineLength:sampling:include:isEnabled:records:)``
    /// with the logger's level check as `isEnabled` and the logger as the record sink.
    ///
    /// The entry is written on the thread that dispatched the action, while that thread runs the store's work:
    /// a log handler that blocks delays that dispatch and those queued behind it. Use a handler that hands its
    /// entries to another thread (most server backends do) for a store on a hot path.
    ///
    /// - Parameters:
    ///   - logger: Where the entries go; its level and handler are read for each action, so a level changed on
    ///     the handler at run time takes effect at the next action.
    ///   - level: The level of every entry.
    ///   - store: A label for the store, written as metadata; `nil` to write none.
    ///   - diff: Whether each entry lists the fields of the state that the action changed.
    ///   - maxChanges: The most changes listed in one entry. At least 1.
    ///   - maxLineLength: The most characters in the message, or `nil` for no limit; at least 1.
    ///   - sampling: Which of the included actions are logged, counted per store.
    ///   - include: Whether an action is logged (and counted for sampling).
    /// - Returns: The middleware.
    @inlinable
    public static func logging<State: Sendable, Action: Sendable>(
        to logger: Logger,
        level: Logger.Level = .debug,
        store: String? = nil,
        diff: Bool = false,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true }
    ) -> Middleware<State, Action> {
        let logged: Middleware<State, Action> = logging(
            level: LogLevel(level),
            diff: diff,
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            isEnabled: { level in logger.logLevel <= Logger.Level(level) },
            records: swiftLogWriter(logger, store: store)
        )
        return gated(logged, by: logger, at: level)
    }

    /// Writes one entry per action to a swift-log `Logger`, with the changes of the parts of the state that
    /// `diffing` picks out, as
    /// ``Sluice/Middlewares/logging(level:diffing:maxChanges:maxLineLength:sampling:include:isEnabled:records:)``
    /// finds them: read before and after the action, without holding the state while the reducer runs, so the
    /// entry of an action on a large state costs what the parts cost.
    ///
    /// ```swift
    /// Middlewares.logging(
    ///     to: logger,
    ///     store: "orders",
    ///     diffing: { state, action in (pending: state.pending.count, shipped: state.shipped) },
    ///     sampling: .every(100)
    /// )
    /// ```
    ///
    /// Otherwise this is ``Sluice/Middlewares/logging(to:level:store:diff:maxChanges:maxLineLength:sampling:include:)``:
    /// the same level check first, the same message and metadata.
    ///
    /// - Parameters:
    ///   - logger: Where the entries go; its level and handler are read for each action.
    ///   - level: The level of every entry.
    ///   - store: A label for the store, written as metadata; `nil` to write none.
    ///   - diffing: The parts of the state (and of the action) to compare, read before and after each logged
    ///     action; the changes are named by their labels.
    ///   - maxChanges: The most changes listed in one entry. At least 1.
    ///   - maxLineLength: The most characters in the message, or `nil` for no limit; at least 1.
    ///   - sampling: Which of the included actions are logged, counted per store.
    ///   - include: Whether an action is logged (and counted for sampling).
    /// - Returns: The middleware.
    @inlinable
    public static func logging<State: Sendable, Action: Sendable, Parts>(
        to logger: Logger,
        level: Logger.Level = .debug,
        store: String? = nil,
        diffing: @escaping @Sendable (State, Action) -> Parts,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true }
    ) -> Middleware<State, Action> {
        let logged: Middleware<State, Action> = logging(
            level: LogLevel(level),
            diffing: diffing,
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            isEnabled: { level in logger.logLevel <= Logger.Level(level) },
            records: swiftLogWriter(logger, store: store)
        )
        return gated(logged, by: logger, at: level)
    }

    /// `logged`, behind a check of the logger's level: an action at a disabled level goes straight to `next`,
    /// without entering the library's generic logging step. Inlinable, so the check is specialized for the
    /// caller's types.
    @inlinable
    static func gated<State: Sendable, Action: Sendable>(
        _ logged: Middleware<State, Action>,
        by logger: Logger,
        at level: Logger.Level
    ) -> Middleware<State, Action> {
        Middleware { api in
            let install = logged.body(api)
            return { next in
                let loggedNext = install(next)
                return { action in
                    if logger.logLevel <= level {
                        loggedNext(action)
                    } else {
                        next(action)
                    }
                }
            }
        }
    }

    /// Writes one record to `logger`: the action as the message, the rest as metadata.
    @usableFromInline
    static func swiftLogWriter<Action: Sendable>(
        _ logger: Logger,
        store: String?
    ) -> @Sendable (LogRecord<Action>) -> Void {
        let storeLabel: Logger.MetadataValue? = store.map { .string($0) }
        return { record in
            var metadata: Logger.Metadata = [SluiceLogMetadataKey.duration: .string(record.durationText)]
            if record.waited > .zero {
                metadata[SluiceLogMetadataKey.waited] = .string(record.waitedText)
            }
            if let changes = record.changes {
                metadata[SluiceLogMetadataKey.changes] = .array(changes.map { .string($0.description) })
                if record.omittedChanges > 0 {
                    metadata[SluiceLogMetadataKey.omittedChanges] = .stringConvertible(record.omittedChanges)
                }
            }
            if let storeLabel {
                metadata[SluiceLogMetadataKey.store] = storeLabel
            }
            logger.log(
                level: Logger.Level(record.level),
                Logger.Message(stringLiteral: record.actionDescription),
                metadata: metadata
            )
        }
    }
}
