import Dispatch

extension Middlewares {
    /// A middleware that writes one line per action: the action, the time it took, and optionally what changed.
    ///
    /// ```swift
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     middleware: [Middlewares.logging(sampling: .every(100))]
    /// )
    /// // orders(.place(id: 7, quantity: 2)) in 3.2µs
    /// ```
    ///
    /// With `diff: true`, a line also lists what the action changed in the state
    /// (`| orders.pending: 3 -> 4; orders.byID[7].status: .open -> .shipped`). That diff holds the state from before the
    /// action while the reducer runs, so it costs a copy of every collection the action changes in place: use it
    /// while investigating a small state, and
    /// ``logging(diffing:maxChanges:maxLineLength:sampling:include:sink:)``, which compares only the parts of the
    /// state that the action touches, for a large state or in a service.
    ///
    /// A line is `<action> in <duration>`, then ` (waited <time>)` when the action's dispatch waited for another
    /// thread or task to finish the store's work (`place(id: 7) in 3.2µs (waited 46ms)`), then with `diff: true`
    /// ` | ` and the changes, separated by `; `. This is the ``LogRecord/line`` of a record: for a structured logger
    /// (metadata, levels), use ``logging(level:diff:maxChanges:maxLineLength:sampling:include:isEnabled:records:)``,
    /// of which this middleware is the convenience that writes every record's line to `sink`.
    /// Each action writes exactly one line: control characters in any text that goes into it (strings in the action
    /// or the state, a type's own `description`, labels) are written as escapes (`\n`, `\r`, `\t`, `\0`, `\u{1B}`,
    /// also for NEL, U+2028 and U+2029), and `String`, `Substring`, `Character` and `Unicode.Scalar` values are
    /// quoted: `note("a\nb")`.
    ///
    /// - The action is described compactly by reflection: `orders(.place(id: 7, quantity: 2))`, without the
    ///   module-qualified type names that `String(describing:)` gives nested enums. An action type that adopts
    ///   ``LogDescribable`` writes the same description itself, without reflection; one that conforms to
    ///   `CustomStringConvertible` (and not to ``LogDescribable``) is described by its `description`.
    /// - The duration is the time that the rest of the chain took for this action: the middleware after this one,
    ///   the reducer and the subscribers, measured with the monotonic clock (`DispatchTime`). Actions that this
    ///   work dispatched are queued (rule 2), so they are logged on their own lines and not counted here. Put the
    ///   logging middleware first in the array to measure the whole chain.
    /// - The changes are the parts of the state that differ before and after the action, found with `Mirror` and
    ///   named by their path down to the field: `orders.pending: 3 -> 4`, `auctions[35].price: 1020 -> 1015`.
    ///   Arrays are compared by index, with their count when it changed (`items.count: 3 -> 4`, and
    ///   `items[3]: (none) -> Item(sku: "D")` for an element on one side only); dictionaries by key, in the order of
    ///   the keys (by their descriptions when the keys are not `Comparable`); sets by the elements removed and
    ///   inserted (`tags: inserted "new"`); optionals through their values (`discount: nil -> 5`); enums of the
    ///   same case through their payload, named by the case (`status.shipped.at: 3 -> 4`), and of different cases
    ///   as whole values (`status: .pending -> .shipped(at: 12)`). A part of the state that still has the same
    ///   storage (the same bytes: the same class instance, array or dictionary buffer, or indirect enum box) is
    ///   skipped without being read, and so is an element of an array, a dictionary or a set whose bytes did not
    ///   change; a part whose type is `Equatable` and equal costs one comparison. So the parts that an action left
    ///   alone cost little however large they are. Parts nested deeper than 16 levels are compared as whole
    ///   values, part by part up to the first difference, at most 32 levels deep. The diff reflects at most 1,024
    ///   values in all; a part it had no budget left for is listed with `(not compared in full)`. Values and keys
    ///   are shown in at most 60 characters and 16 levels of nesting (deeper ones as `…`). An action that changed
    ///   nothing logs `no change`. The same diff names a replay's changes and a `TestStore`'s failures.
    ///
    /// Lines go to `sink` once the store's pipeline is free again, outside the store's lock: the action's description,
    /// the line and the sink hold no other dispatch. A `dispatch` or `send` returns after its own line, and the
    /// follow-ups its work dispatched are written after it, in order: by the dispatching thread, or, for a task whose
    /// action the thread owning the pipeline ran while the task waited in line, by that task when it resumes. Lines of
    /// actions that different threads or tasks run at once can reach the sink in either order. An action handed to the
    /// pipeline's owner from inside another store's work (rule 2) is written by that owner.
    /// ``Store/shutdown(timeout:)`` returns after the lines of the actions it let finish. A sink may dispatch to the
    /// same store: that is an ordinary dispatch, processed before the sink goes on. By default each line is written to
    /// standard error in one `write` call, so that lines from concurrent threads do not interleave.
    ///
    /// ## Cost
    ///
    /// An action that `include` rejects or sampling skips costs one call of `include` (and, when sampling, one
    /// uncontended lock). A logged action costs two clock reads, one lock round trip (to read the time it waited),
    /// its description and the sink. Describing an action by reflection is the expensive part of a line (one
    /// mirror per enum case, struct or tuple in it; numbers, `Bool` and text without one; what a conformance check
    /// finds about a type is learned once per type); an action type that adopts ``LogDescribable`` writes its
    /// description without reflection, and one that conforms to `CustomStringConvertible` is described by its
    /// `description` (the type is checked once, when the middleware is made). A
    /// description reads no more of a value than the line shows, except a type's own `description`, which is made
    /// whole. With `diff: false` the middleware never reads the state.
    ///
    /// With `diff: true` it reads the state before and after the action and walks both, skipping the parts whose
    /// storage did not change: a collection that the action left alone costs nothing, however large. The state
    /// from before the action is held while the reducer runs, so a reducer that changes a collection in place
    /// copies all of it (copy-on-write), and the changed collection is then compared with `==` when it is
    /// `Equatable` and walked element by element to name what changed: an element whose bytes did not change
    /// costs a comparison of its bytes, the others their `==` or the bounded walk. All of it grows with the
    /// collection: for a state of many entries, compare the entries the action touches with
    /// ``logging(diffing:maxChanges:maxLineLength:sampling:include:sink:)``, whose cost does not depend on the
    /// size of the state.
    ///
    /// - Parameters:
    ///   - diff: Whether each line lists the fields of the state that the action changed.
    ///   - maxChanges: The most changes listed on one line; the rest are counted as `+N more`. At least 1.
    ///   - maxLineLength: The most characters in a line, or `nil` for no limit; at least 1. A longer line is made
    ///     to fit in this order: the action's description is cut (ending with `…`), down to its first 16
    ///     characters; then the changes that do not fit are left out from the end and counted in `+N more`; then
    ///     the action is cut further, down to `…`. The duration stays whole, unless even `… in <duration> | +N more`
    ///     is longer than the limit: then the line is cut at its end.
    ///   - sampling: Which of the included actions are logged, counted per store; ``LogSampling/all`` by
    ///     default.
    ///   - include: Whether an action is logged (and counted for sampling). Other actions pass through untouched.
    ///   - sink: Receives each line, without a trailing newline, once the store's pipeline is free again (see
    ///     above); it may be called from several threads at once. ``writeToStandardError(_:)`` by default.
    /// - Returns: The middleware. Its sampling counter is created per store when the store installs it.
    public static func logging<State: Sendable, Action: Sendable>(
        diff: Bool = false,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        sink: @escaping @Sendable (String) -> Void = Middlewares.writeToStandardError
    ) -> Middleware<State, Action> {
        logging(
            diff: diff,
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            sink: sink,
            clock: { DispatchTime.now().uptimeNanoseconds }
        )
    }

    /// A middleware that hands one ``LogRecord`` per action to `records`: the action, the time it took, the time
    /// its dispatch waited for the store, and optionally what changed. For a structured logger (swift-log, say),
    /// which then decides how to write it.
    ///
    /// ```swift
    /// let logging: Middleware<AppState, AppAction> = Middlewares.logging(
    ///     level: .debug,
    ///     diff: true,
    ///     isEnabled: { level in level >= .info }  // a logger's own level check goes here
    /// ) { record in
    ///     let changes = record.changes?.map(\.description).joined(separator: "; ") ?? ""
    ///     print(record.level, record.actionDescription, record.duration, record.waited, changes)
    /// }
    /// ```
    ///
    /// `isEnabled(level)` is asked first, for every action: when it answers `false`, the action passes through
    /// untouched, and nothing is measured, compared or described (a logger set to `.warning` pays one call of
    /// `isEnabled` for a `.debug` middleware). Then `include` and `sampling` choose the actions as in
    /// ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)``. A chosen action is measured, compared
    /// with `diff: true` (the changes are made as text when found, at most `maxChanges`), and handed to `records`;
    /// the action's description and the line are made only if `records` reads ``LogRecord/actionDescription`` or
    /// ``LogRecord/line``.
    ///
    /// ``LogRecord/waited`` is read from the store, under its lock, once per chosen action: the time that this
    /// action's dispatch or send waited for another thread or task to finish the store's work.
    ///
    /// - Parameters:
    ///   - level: The level of every record.
    ///   - diff: Whether each record lists the fields of the state that the action changed.
    ///   - maxChanges: The most changes listed in one record; the rest are counted in
    ///     ``LogRecord/omittedChanges``. At least 1.
    ///   - maxLineLength: The most characters in ``LogRecord/line`` and ``LogRecord/actionDescription``, or `nil`
    ///     for no limit; at least 1.
    ///   - sampling: Which of the included actions are logged, counted per store; ``LogSampling/all`` by default.
    ///   - include: Whether an action is logged (and counted for sampling). Other actions pass through untouched.
    ///   - isEnabled: Whether records of a level are written now; asked before anything else for each action.
    ///   - records: Receives each record once the store's pipeline is free again, as a line reaches the sink of
    ///     ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)``; it may be called from several threads
    ///     at once.
    /// - Returns: The middleware. Its sampling counter is created per store when the store installs it.
    public static func logging<State: Sendable, Action: Sendable>(
        level: LogLevel = .info,
        diff: Bool = false,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        isEnabled: @escaping @Sendable (LogLevel) -> Bool = { _ in true },
        records: @escaping @Sendable (LogRecord<Action>) -> Void
    ) -> Middleware<State, Action> {
        logging(
            level: level,
            diff: diff,
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            isEnabled: isEnabled,
            records: records,
            clock: { DispatchTime.now().uptimeNanoseconds }
        )
    }

    /// A middleware that writes one line per action with the changes of the parts of the state that `diffing`
    /// picks out: the diff for a large state, at a cost set by what `diffing` returns rather than by the state.
    ///
    /// ```swift
    /// // AppState holds `orders.byID: [Order.ID: Order]`, 100,000 of them; each action names one order.
    /// let logging: Middleware<AppState, AppAction> = Middlewares.logging(
    ///     diffing: { state, action in
    ///         switch action {
    ///         case .place(let order): (count: state.orders.byID.count, order: state.orders.byID[order.id])
    ///         case .cancel(let id): (count: state.orders.byID.count, order: state.orders.byID[id])
    ///         }
    ///     },
    ///     sampling: .every(100)
    /// )
    /// // place(Order(id: 7, name: "tea")) in 2.9µs | count: 99999 -> 100000; order: nil -> Order(id: 7, name: "tea")
    /// ```
    ///
    /// A closure whose branches return `nil` for some actions needs its result type written out
    /// (`{ (state: AppState, action: AppAction) -> Order? in ... }`): Swift does not infer an optional from `nil`.
    ///
    /// For each logged action, `diffing` is called twice, with the state and the action: before the rest of the
    /// chain runs and after it. The two results are compared as
    /// ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)`` compares two states, and the changes
    /// are named by the labels of the result (a tuple's labels, a struct's fields: `order.shipped: false -> true`),
    /// or `value` for a change of the result as a whole. The line is the same in every other way.
    ///
    /// Unlike `diff: true`, this form does not hold the state while the reducer runs: the state that `diffing`
    /// receives is released before the action goes on, and only the result is held. So a reducer that changes a
    /// dictionary of the state in place changes it in place, without a copy, and the comparison reads only the
    /// result: the entries that the action touches, counts, a few fields. A result that holds a whole collection of
    /// the state (`state.byID` itself) brings back the cost of `diff: true` for that collection: a copy when the
    /// reducer changes it in place, and its `==` when it changed.
    ///
    /// ## Cost
    ///
    /// An action that `include` rejects or sampling skips costs what it costs with `diff: false`. A logged action
    /// costs, beyond its line, two reads of the state (each a copy of the state's fields, not of their storage),
    /// two calls of `diffing` and the comparison of the two results, whatever the size of the state.
    ///
    /// - Parameters:
    ///   - diffing: Returns the parts of the state to compare, for the state and the action being logged. Called
    ///     on the dispatching thread, twice per logged action, never for the others.
    ///   - maxChanges: The most changes listed on one line; the rest are counted as `+N more`. At least 1.
    ///   - maxLineLength: The most characters in a line, or `nil` for no limit; at least 1. A longer line is made
    ///     to fit as with ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)``.
    ///   - sampling: Which of the included actions are logged, counted per store; ``LogSampling/all`` by
    ///     default.
    ///   - include: Whether an action is logged (and counted for sampling). Other actions pass through untouched.
    ///   - sink: Receives each line, without a trailing newline, once the store's pipeline is free again (see
    ///     above); it may be called from several threads at once. ``writeToStandardError(_:)`` by default.
    /// - Returns: The middleware. Its sampling counter is created per store when the store installs it.
    public static func logging<State: Sendable, Action: Sendable, Parts>(
        diffing: @escaping @Sendable (State, Action) -> Parts,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        sink: @escaping @Sendable (String) -> Void = Middlewares.writeToStandardError
    ) -> Middleware<State, Action> {
        logging(
            comparing: .parts(diffing),
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            sink: sink,
            clock: { DispatchTime.now().uptimeNanoseconds }
        )
    }

    /// A middleware that hands one ``LogRecord`` per action to `records`, with the changes of the parts of the
    /// state that `diffing` picks out: the record form of
    /// ``logging(diffing:maxChanges:maxLineLength:sampling:include:sink:)``, for a structured logger.
    ///
    /// `isEnabled`, `include` and `sampling` choose the actions as in
    /// ``logging(level:diff:maxChanges:maxLineLength:sampling:include:isEnabled:records:)``; for a chosen action,
    /// `diffing` is called before and after the rest of the chain and the two results are compared, without
    /// holding the state while the reducer runs.
    ///
    /// - Parameters:
    ///   - level: The level of every record.
    ///   - diffing: Returns the parts of the state to compare, for the state and the action being logged. Called
    ///     on the dispatching thread, twice per chosen action, never for the others.
    ///   - maxChanges: The most changes listed in one record; the rest are counted in
    ///     ``LogRecord/omittedChanges``. At least 1.
    ///   - maxLineLength: The most characters in ``LogRecord/line`` and ``LogRecord/actionDescription``, or `nil`
    ///     for no limit; at least 1.
    ///   - sampling: Which of the included actions are logged, counted per store; ``LogSampling/all`` by default.
    ///   - include: Whether an action is logged (and counted for sampling). Other actions pass through untouched.
    ///   - isEnabled: Whether records of a level are written now; asked before anything else for each action.
    ///   - records: Receives each record once the store's pipeline is free again, as a line reaches the sink of
    ///     ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)``; it may be called from several threads
    ///     at once.
    /// - Returns: The middleware. Its sampling counter is created per store when the store installs it.
    public static func logging<State: Sendable, Action: Sendable, Parts>(
        level: LogLevel = .info,
        diffing: @escaping @Sendable (State, Action) -> Parts,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        isEnabled: @escaping @Sendable (LogLevel) -> Bool = { _ in true },
        records: @escaping @Sendable (LogRecord<Action>) -> Void
    ) -> Middleware<State, Action> {
        logging(
            level: level,
            comparing: .parts(diffing),
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            isEnabled: isEnabled,
            records: records,
            clock: { DispatchTime.now().uptimeNanoseconds }
        )
    }

    /// ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)`` with the clock injected, for tests.
    ///
    /// - Parameter clock: Returns a monotonic time in nanoseconds; called just before and just after `next`.
    package static func logging<State: Sendable, Action: Sendable>(
        diff: Bool = false,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        sink: @escaping @Sendable (String) -> Void,
        clock: @escaping @Sendable () -> UInt64
    ) -> Middleware<State, Action> {
        logging(
            comparing: diff ? .wholeState : .none,
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            lines: sink,
            clock: clock
        )
    }

    /// ``logging(level:diff:maxChanges:maxLineLength:sampling:include:isEnabled:records:)`` with the clock
    /// injected, for tests.
    ///
    /// - Parameter clock: Returns a monotonic time in nanoseconds; called just before and just after `next`.
    package static func logging<State: Sendable, Action: Sendable>(
        level: LogLevel = .info,
        diff: Bool = false,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        isEnabled: @escaping @Sendable (LogLevel) -> Bool = { _ in true },
        records: @escaping @Sendable (LogRecord<Action>) -> Void,
        clock: @escaping @Sendable () -> UInt64
    ) -> Middleware<State, Action> {
        logging(
            level: level,
            comparing: diff ? .wholeState : .none,
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            isEnabled: isEnabled,
            records: records,
            clock: clock
        )
    }

    /// ``logging(diffing:maxChanges:maxLineLength:sampling:include:sink:)`` with the clock injected, for tests.
    package static func logging<State: Sendable, Action: Sendable, Parts>(
        diffing: @escaping @Sendable (State, Action) -> Parts,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        sink: @escaping @Sendable (String) -> Void,
        clock: @escaping @Sendable () -> UInt64
    ) -> Middleware<State, Action> {
        logging(
            comparing: .parts(diffing),
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            sink: sink,
            clock: clock
        )
    }

    /// The line middleware with what to compare and the clock given, for tests.
    package static func logging<State: Sendable, Action: Sendable>(
        comparing: LogDiffSource<State, Action>,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        sink: @escaping @Sendable (String) -> Void,
        clock: @escaping @Sendable () -> UInt64
    ) -> Middleware<State, Action> {
        logging(
            comparing: comparing,
            maxChanges: maxChanges,
            maxLineLength: maxLineLength,
            sampling: sampling,
            include: include,
            lines: sink,
            clock: clock
        )
    }

    /// The logging middleware that every public form makes: what to compare, the clock and the record sink given.
    package static func logging<State: Sendable, Action: Sendable>(
        level: LogLevel = .info,
        comparing: LogDiffSource<State, Action>,
        maxChanges: Int = 8,
        maxLineLength: Int? = 200,
        sampling: LogSampling = .all,
        include: @escaping @Sendable (Action) -> Bool = { _ in true },
        isEnabled: @escaping @Sendable (LogLevel) -> Bool = { _ in true },
        records: (@Sendable (LogRecord<Action>) -> Void)? = nil,
        lines: (@Sendable (String) -> Void)? = nil,
        clock: @escaping @Sendable () -> UInt64
    ) -> Middleware<State, Action> {
        if maxChanges < 1 {
            usageError("Middlewares.logging: maxChanges must be at least 1, got \(maxChanges).")
        }
        if let maxLineLength, maxLineLength < 1 {
            usageError(
                "Middlewares.logging: maxLineLength must be at least 1 (or nil for no limit), got \(maxLineLength)."
            )
        }
        // How actions are described is decided once: reflection is the costly part of a line.
        let format = LogLineFormat(maxLineLength: maxLineLength, maxChanges: maxChanges, for: Action.self)
        let chosen = ChosenActionLogger<State, Action>(
            level: level,
            comparing: comparing,
            format: format,
            // A line without a diff needs no record: it is made straight from the action and the times.
            lines: comparing.capture == nil ? lines : nil,
            records: records ?? { record in lines?(record.line) },
            clock: clock
        )
        return Middleware { api in
            // Created per store: each store counts its own actions.
            let sampler = sampling.makeSampler()
            return { next in
                { action in
                    guard isEnabled(level), include(action), sampler?.shouldLog() ?? true else {
                        next(action)
                        return
                    }
                    chosen.log(action, api: api, next: next)
                }
            }
        }
    }

    /// Runs the rest of the chain for a chosen action, measures it, and hands its line to `sink`: ``logAction`` for a
    /// line without a diff, which needs no record.
    @inline(never)
    static func logLine<State: Sendable, Action: Sendable>(
        _ action: Action,
        core: StoreCore<State, Action>,
        next: DispatchFunction<Action>,
        format: LogLineFormat,
        sink: @escaping @Sendable (String) -> Void,
        clock: @Sendable () -> UInt64
    ) {
        let waited = core.pipelineLoadOfCurrentAction().waited
        let start = clock()
        next(action)
        let elapsed = clock() &- start
        // The description of the action, the line and the sink run once this thread gives the pipeline up, so that
        // no other dispatch waits for them.
        core.runAfterRelease {
            sink(format.line(for: action, elapsed: elapsed, waited: waited, changes: nil, omitted: 0))
        }
    }

    /// Runs the rest of the chain for a chosen action, measures it, and hands its record to `records`.
    @inline(never)
    static func logAction<State: Sendable, Action: Sendable>(
        _ action: Action,
        api: MiddlewareAPI<State, Action>,
        next: DispatchFunction<Action>,
        level: LogLevel,
        comparing: LogDiffSource<State, Action>,
        format: LogLineFormat,
        records: @escaping @Sendable (LogRecord<Action>) -> Void,
        clock: @Sendable () -> UInt64
    ) {
        let waited = api.core.pipelineLoadOfCurrentAction().waited
        let before = comparing.capture.map { capture in capture(api, action) }
        let start = clock()
        next(action)
        let elapsed = clock() &- start
        let changes = before.map { before in
            ValueDiff(
                before,
                comparing.capture!(api, action),
                rootName: comparing.rootName,
                bounds: .logLine(maxChanges: format.maxChanges)
            )
        }
        let record = LogRecord(
            level: level,
            action: action,
            elapsed: elapsed,
            waited: waited,
            changes: changes?.changes,
            omittedChanges: changes?.omitted ?? 0,
            format: format
        )
        // The description of the action, the line and the sink run once this thread gives the pipeline up, so that
        // no other dispatch waits for them.
        api.core.runAfterRelease { records(record) }
    }
}

/// What the logging middleware does with an action it chose, held in one reference that its per-action closure
/// captures: the closure of every action, chosen or not, then copies one reference out of its context.
final class ChosenActionLogger<State: Sendable, Action: Sendable>: Sendable {
    let level: Middlewares.LogLevel
    let comparing: LogDiffSource<State, Action>
    let format: LogLineFormat
    /// The line sink, when the middleware writes lines without a diff.
    let lines: (@Sendable (String) -> Void)?
    let records: @Sendable (Middlewares.LogRecord<Action>) -> Void
    let clock: @Sendable () -> UInt64

    init(
        level: Middlewares.LogLevel,
        comparing: LogDiffSource<State, Action>,
        format: LogLineFormat,
        lines: (@Sendable (String) -> Void)?,
        records: @escaping @Sendable (Middlewares.LogRecord<Action>) -> Void,
        clock: @escaping @Sendable () -> UInt64
    ) {
        self.level = level
        self.comparing = comparing
        self.format = format
        self.lines = lines
        self.records = records
        self.clock = clock
    }

    /// Runs the rest of the chain for a chosen action, measures it, and hands its line or its record on.
    ///
    /// Apart from the per-action closure, and never inlined into it: the record's generic types are then looked up
    /// only for the actions that are logged, not for every action that sampling skips.
    @inline(never)
    func log(_ action: Action, api: MiddlewareAPI<State, Action>, next: DispatchFunction<Action>) {
        if let lines {
            Middlewares.logLine(action, core: api.core, next: next, format: format, sink: lines, clock: clock)
        } else {
            Middlewares.logAction(
                action,
                api: api,
                next: next,
                level: level,
                comparing: comparing,
                format: format,
                records: records,
                clock: clock
            )
        }
    }
}
