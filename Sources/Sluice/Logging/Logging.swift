import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

extension Middlewares {
    /// A middleware that writes one line per action: the action, the time it took, and optionally what changed.
    ///
    /// ```swift
    /// let store = Store<AppState, AppAction>(
    ///     initialState: AppState(),
    ///     reducer: appReducer,
    ///     middleware: [Middlewares.logging(diff: true, sampling: .every(10))]
    /// )
    /// // orders(.place(id: 7, quantity: 2)) in 3.2µs | orders.pending: 3 -> 4; orders.items: 3 items -> 4 items
    /// ```
    ///
    /// A line is `<action> in <duration>`, followed with `diff: true` by ` | ` and the changes, separated by `; `.
    ///
    /// - The action is described compactly by reflection: `orders(.place(id: 7, quantity: 2))`, without the
    ///   module-qualified type names that `String(describing:)` gives nested enums. An action type that conforms
    ///   to `CustomStringConvertible` is described by its `description`.
    /// - The duration is the time that the rest of the chain took for this action: the middleware after this one,
    ///   the reducer and the subscribers, measured with the monotonic clock (`DispatchTime`). Actions that this
    ///   work dispatched are queued (rule 2), so they are logged on their own lines and not counted here. Put the
    ///   logging middleware first in the array to measure the whole chain.
    /// - The changes are the fields of the state that differ before and after the action, found with `Mirror`
    ///   and named by dotted paths: `orders.pending: 3 -> 4`. Optionals are compared through their values
    ///   (`discount: nil -> 5`), enums as whole values (`status: .pending -> .shipped(at: 12)`), collections by count
    ///   (`orders.items: 3 items -> 4 items`; `tags: 2 items (changed)` when the count is the same and the
    ///   elements are `Equatable` and differ). A field whose type is `Equatable` and equal is not visited, so
    ///   unchanged parts of a large state, and arrays that still share their storage, cost one comparison. The
    ///   elements of a collection whose elements are not `Equatable` are not compared: only its count is.
    ///   An action that changed nothing logs `no change`.
    ///
    /// Lines go to `sink`, on the thread that dispatched the action; by default each line is written to standard
    /// error in one `write` call, so that lines from concurrent threads do not interleave.
    ///
    /// ## Cost
    ///
    /// An action that `include` rejects or sampling skips costs one call of `include` (and, when sampling, one
    /// uncontended lock). A logged action costs two clock reads, its description and the sink. Describing an
    /// action by reflection is the expensive part: about 20 µs for `place(id: 1, quantity: 2)` in a release
    /// build on Linux, against about 2 µs for the whole logged dispatch when the action type conforms to
    /// `CustomStringConvertible` (the type is checked once, when the middleware is made). With
    /// `diff: false` the middleware never reads the state. With `diff: true` it reads the state before and
    /// after the action and walks both; the state from before the action is held while the reducer runs, so a
    /// reducer that changes a collection in place pays one copy-on-write copy of that collection. Use the diff
    /// while investigating, or together with sampling.
    ///
    /// - Parameters:
    ///   - diff: Whether each line lists the fields of the state that the action changed.
    ///   - maxChanges: The most changes listed on one line; the rest are counted as `+N more`. At least 1.
    ///   - maxLineLength: The most characters in a line, or `nil` for no limit. A longer line is cut and ends
    ///     with `…`; a long action description is cut first, so that the duration stays on the line. At least 1.
    ///   - sampling: Which of the included actions are logged, counted per store; ``LogSampling/all`` by
    ///     default.
    ///   - include: Whether an action is logged (and counted for sampling). Other actions pass through untouched.
    ///   - sink: Receives each line, without a trailing newline. It is called on the dispatching thread, and may
    ///     be called from several threads at once. ``writeToStandardError(_:)`` by default.
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
        if maxChanges < 1 {
            usageError("Middlewares.logging: maxChanges must be at least 1, got \(maxChanges).")
        }
        if let maxLineLength, maxLineLength < 1 {
            usageError(
                "Middlewares.logging: maxLineLength must be at least 1 (or nil for no limit), got \(maxLineLength)."
            )
        }
        let format = LogLineFormat(
            maxLineLength: maxLineLength,
            maxChanges: maxChanges,
            // Decided once: reflection costs microseconds per action, a type's own description usually not.
            actionHasDescription: Action.self is any CustomStringConvertible.Type
        )
        return Middleware { api in
            // Created per store: each store counts its own actions.
            let sampler = sampling.makeSampler()
            return { next in
                { action in
                    guard include(action), sampler?.shouldLog() ?? true else {
                        next(action)
                        return
                    }
                    if diff {
                        let before = api.state
                        let start = clock()
                        next(action)
                        let elapsed = clock() &- start
                        let after = api.state
                        sink(format.line(for: action, elapsed: elapsed, changes: StateDiff(before, after, format)))
                    } else {
                        let start = clock()
                        next(action)
                        let elapsed = clock() &- start
                        sink(format.line(for: action, elapsed: elapsed, changes: nil))
                    }
                }
            }
        }
    }

    /// Which actions ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)`` logs, among those it
    /// includes.
    ///
    /// Sampling is deterministic: it counts the included actions of each store, from the first one, and picks
    /// the same positions every run. The first included action is always logged.
    ///
    /// ```swift
    /// Middlewares.logging(sampling: .every(100))   // the 1st, 101st, 201st, ... action
    /// Middlewares.logging(sampling: .rate(0.3))    // 3 actions in 10, evenly spread: the 1st, 5th, 8th, 11th, ...
    /// ```
    public struct LogSampling: Sendable, Equatable {
        enum Kind: Equatable {
            case all
            case every(UInt64)
            case rate(Double)
        }

        let kind: Kind

        /// Logs every action.
        public static let all = LogSampling(kind: .all)

        /// Logs one action in `n`: the 1st, the `n + 1`th, the `2n + 1`th, and so on.
        ///
        /// - Parameter n: The period; at least 1 (`.every(1)` is ``all``).
        public static func every(_ n: Int) -> LogSampling {
            if n < 1 {
                usageError("Middlewares.LogSampling.every: n must be at least 1, got \(n).")
            }
            return n == 1 ? .all : LogSampling(kind: .every(UInt64(n)))
        }

        /// Logs the given fraction of the actions, spread evenly: action `k` (counting from 0) is logged when
        /// `floor(k * fraction)` differs from `floor((k - 1) * fraction)`.
        ///
        /// - Parameter fraction: Greater than 0 and at most 1 (`.rate(1)` is ``all``).
        public static func rate(_ fraction: Double) -> LogSampling {
            if !(fraction > 0 && fraction <= 1) {
                usageError(
                    "Middlewares.LogSampling.rate: fraction must be greater than 0 and at most 1, got \(fraction)."
                )
            }
            return fraction == 1 ? .all : LogSampling(kind: .rate(fraction))
        }

        func makeSampler() -> LogSampler? {
            kind == .all ? nil : LogSampler(kind)
        }
    }

    /// Writes `line` and a newline to standard error in one `write` call.
    ///
    /// One call per line keeps lines from concurrent threads whole (a pipe writes up to `PIPE_BUF` bytes, at
    /// least 512, atomically; a terminal or a file opened for appending writes each call whole). A short write
    /// is completed with further calls.
    public static func writeToStandardError(_ line: String) {
        writeLine(line, toFileDescriptor: 2)
    }

    /// Writes `line` and a newline to standard output in one `write` call, like ``writeToStandardError(_:)``.
    ///
    /// This bypasses the buffer of `print`: mixing both on standard output can reorder lines.
    public static func writeToStandardOutput(_ line: String) {
        writeLine(line, toFileDescriptor: 1)
    }

    /// Writes `line` and a newline to a file descriptor with one `write` call (more only after a short write).
    package static func writeLine(_ line: String, toFileDescriptor descriptor: Int32) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // A logger must not bring the service down: the line is lost.
                }
                offset += written
            }
        }
    }
}

// MARK: - Sampling

/// Counts the included actions of one store and picks those to log.
///
/// `@unchecked Sendable`: `count` is read and written only with `lock` held. A lock is needed although the
/// store serializes its dispatches: a middleware before this one may call `next` from another thread.
final class LogSampler: @unchecked Sendable {
    private let lock = Lock()
    private var count: UInt64 = 0
    private let kind: Middlewares.LogSampling.Kind

    init(_ kind: Middlewares.LogSampling.Kind) {
        self.kind = kind
    }

    /// Counts one action and returns whether to log it.
    func shouldLog() -> Bool {
        let index = lock.withLock {
            defer { count &+= 1 }
            return count
        }
        switch kind {
        case .all:
            return true
        case .every(let period):
            return index % period == 0
        case .rate(let fraction):
            guard index > 0 else { return true }
            return (Double(index) * fraction).rounded(.down) != (Double(index - 1) * fraction).rounded(.down)
        }
    }
}

// MARK: - Line format

/// Builds the lines of the logging middleware.
struct LogLineFormat: Sendable {
    let maxLineLength: Int?
    let maxChanges: Int
    /// Whether the action type has its own `description`, which then describes actions without reflection.
    var actionHasDescription = false
    /// The most characters of one value on either side of `->` in a change.
    let maxValueLength = 60
    /// How deep the diff follows nested values before it compares what it found there as a whole.
    let maxDepth = 16

    func line<Action>(for action: Action, elapsed: UInt64, changes: StateDiff?) -> String {
        let tail = " in " + Self.format(nanoseconds: elapsed)
        let actionLimit = maxLineLength.map { max(1, $0 - tail.count) } ?? Int.max
        var line =
            actionHasDescription
            ? Self.truncate(String(describing: action), to: actionLimit)
            : CompactDescription.of(action, limit: actionLimit, dotForTopLevelEnum: false)
        line += tail
        if let changes {
            line += " | "
            if changes.changes.isEmpty {
                line += "no change"
            } else {
                line += changes.changes.joined(separator: "; ")
                if changes.omitted > 0 {
                    line += "; +\(changes.omitted) more"
                }
            }
        }
        if let maxLineLength {
            return Self.truncate(line, to: maxLineLength)
        }
        return line
    }

    /// `line` cut to `limit` characters, ending with `…` when it was cut.
    static func truncate(_ line: String, to limit: Int) -> String {
        // Cheap check first: a line has at most as many characters as UTF-8 bytes.
        if line.utf8.count <= limit { return line }
        let head = line.prefix(limit)
        if head.endIndex == line.endIndex { return line }
        return String(line.prefix(limit - 1)) + "…"
    }

    /// A duration for people: `850ns`, `1.5µs`, `12µs`, `3.2ms`, `1.4s` (one decimal at most, rounded).
    static func format(nanoseconds: UInt64) -> String {
        if nanoseconds < 1_000 {
            return "\(nanoseconds)ns"
        }
        let units: [(scale: UInt64, suffix: String)] = [(1_000, "µs"), (1_000_000, "ms"), (1_000_000_000, "s")]
        var unit = 0
        while unit < units.count - 1 && nanoseconds >= units[unit + 1].scale {
            unit += 1
        }
        var tenths = (nanoseconds + units[unit].scale / 20) / (units[unit].scale / 10)
        if tenths >= 10_000 && unit < units.count - 1 {
            // 999.96µs rounds to 1000.0µs: say 1ms.
            unit += 1
            tenths = (nanoseconds + units[unit].scale / 20) / (units[unit].scale / 10)
        }
        let whole = tenths / 10
        let fraction = tenths % 10
        return fraction == 0 ? "\(whole)\(units[unit].suffix)" : "\(whole).\(fraction)\(units[unit].suffix)"
    }
}

// MARK: - Compact descriptions

/// A short description of any value, built by reflection and cut at a length limit.
///
/// Enums print as `place(id: 1, quantity: 2)` (nested ones with a leading dot: `orders(.place(id: 1))`),
/// structs as `Item(sku: "A", count: 2)`, optionals as their value or `nil`, collections as `[1, 2]`, strings
/// quoted. A type with its own `description` (`CustomStringConvertible`) is described by it.
struct CompactDescription {
    private(set) var text = ""
    /// The UTF-8 length of `text`: at least its length in characters, and much cheaper to keep.
    private var lengthBound = 0
    private let limit: Int
    private var isFull = false

    private init(limit: Int) {
        self.limit = limit
    }

    static func of(_ value: Any, limit: Int, dotForTopLevelEnum: Bool = true) -> String {
        var description = CompactDescription(limit: limit)
        description.describe(value, isNested: dotForTopLevelEnum, depth: 0)
        return description.text
    }

    private mutating func append(_ piece: String) {
        guard !isFull else { return }
        let bytes = piece.utf8.count
        if bytes <= limit - lengthBound {
            // It fits even counting bytes: no need to count characters.
            text += piece
            lengthBound += bytes
            return
        }
        let length = text.count
        let remaining = limit - length
        // Look at no more of `piece` than can fit, so that a huge string costs no more than a short one.
        let head = piece.prefix(min(remaining, Int.max - 1) + 1)
        let count = head.count
        if count <= remaining {
            text += piece
            lengthBound = max(lengthBound, length + count)
        } else {
            text += String(piece.prefix(max(0, remaining - 1))) + "…"
            isFull = true
        }
    }

    private mutating func describe(_ value: Any, isNested: Bool, depth: Int) {
        guard !isFull else { return }
        let mirror = Mirror(reflecting: value)
        switch Self.style(of: mirror) {
        case .optional:
            if let wrapped = mirror.children.first?.value {
                describe(wrapped, isNested: isNested, depth: depth)
            } else {
                append("nil")
            }
        case .collection, .set:
            append("[")
            for (index, child) in mirror.children.enumerated() {
                if isFull { break }
                if index > 0 { append(", ") }
                describe(child.value, isNested: true, depth: depth + 1)
            }
            append("]")
        case .dictionary:
            if mirror.children.isEmpty {
                append("[:]")
                return
            }
            append("[")
            for (index, child) in mirror.children.enumerated() {
                if isFull { break }
                if index > 0 { append(", ") }
                let pair = Array(Mirror(reflecting: child.value).children)
                if pair.count == 2 {
                    describe(pair[0].value, isNested: true, depth: depth + 1)
                    append(": ")
                    describe(pair[1].value, isNested: true, depth: depth + 1)
                } else {
                    describe(child.value, isNested: true, depth: depth + 1)
                }
            }
            append("]")
        case .tuple:
            describeFields(of: mirror, depth: depth)
        case .enum:
            if let custom = customDescription(value) {
                append(custom)
                return
            }
            if isNested { append(".") }
            guard let payload = mirror.children.first else {
                append(String(describing: value))
                return
            }
            append(payload.label ?? "")
            if Mirror(reflecting: payload.value).displayStyle == .tuple {
                describe(payload.value, isNested: true, depth: depth + 1)
            } else {
                append("(")
                describe(payload.value, isNested: true, depth: depth + 1)
                append(")")
            }
        case .struct, .class:
            if let custom = customDescription(value) {
                append(custom)
                return
            }
            append(String(describing: type(of: value)))
            if depth >= 8 {
                append("(…)")
                return
            }
            describeFields(of: mirror, depth: depth)
        default:
            if let string = value as? String {
                append(String(reflecting: string))
            } else {
                append(String(describing: value))
            }
        }
    }

    /// `(label: value, ...)`; tuple elements without a label (`.0`) are listed without one.
    private mutating func describeFields(of mirror: Mirror, depth: Int) {
        append("(")
        var first = true
        for child in Self.allChildren(of: mirror) {
            if isFull { break }
            if !first { append(", ") }
            first = false
            if let label = child.label, !label.hasPrefix(".") {
                append(label)
                append(": ")
            }
            describe(child.value, isNested: true, depth: depth + 1)
        }
        append(")")
    }

    private func customDescription(_ value: Any) -> String? {
        if let value = value as? any CustomStringConvertible {
            return value.description
        }
        if let value = value as? any CustomDebugStringConvertible {
            return value.debugDescription
        }
        return nil
    }

    /// The display style of a mirror; a custom mirror without one but with children counts as a struct.
    static func style(of mirror: Mirror) -> Mirror.DisplayStyle? {
        if let style = mirror.displayStyle { return style }
        return mirror.children.isEmpty ? nil : .struct
    }

    /// The children of a value, with those of its superclasses first.
    static func allChildren(of mirror: Mirror) -> [Mirror.Child] {
        var chain = [mirror]
        while let superclass = chain.last?.superclassMirror {
            chain.append(superclass)
        }
        return chain.reversed().flatMap { Array($0.children) }
    }
}

// MARK: - State diff

/// The changes between two states, found by reflection, as `path: old -> new` strings.
struct StateDiff {
    private(set) var changes: [String] = []
    private(set) var omitted = 0
    private let format: LogLineFormat
    /// The labels from the root to the value being compared; joined only when a change is recorded.
    private var path: [String] = []

    init<State>(_ before: State, _ after: State, _ format: LogLineFormat) {
        self.format = format
        compare(before, after, depth: 0)
    }

    private mutating func record(_ change: @autoclosure () -> String) {
        if changes.count < format.maxChanges {
            let name = path.isEmpty ? "state" : path.joined(separator: ".")
            changes.append(name + ": " + change())
        } else {
            omitted += 1
        }
    }

    private mutating func recordValues(_ old: Any, _ new: Any) {
        let limit = format.maxValueLength
        record(CompactDescription.of(old, limit: limit) + " -> " + CompactDescription.of(new, limit: limit))
    }

    private mutating func compare(_ old: Any, _ new: Any, depth: Int) {
        let equal = equalIfEquatable(old, new)
        if equal == true { return }
        let oldMirror = Mirror(reflecting: old)
        let newMirror = Mirror(reflecting: new)
        let style = CompactDescription.style(of: oldMirror)
        guard type(of: old) == type(of: new), style == CompactDescription.style(of: newMirror) else {
            recordValues(old, new)
            return
        }
        switch style {
        case .optional:
            switch (oldMirror.children.first?.value, newMirror.children.first?.value) {
            case (nil, nil):
                return
            case (let oldValue?, let newValue?):
                compare(oldValue, newValue, depth: depth)
            default:
                recordValues(old, new)
            }
        case .collection, .set, .dictionary:
            let oldCount = oldMirror.children.count
            let newCount = newMirror.children.count
            if oldCount != newCount {
                record(Self.items(oldCount) + " -> " + Self.items(newCount))
            } else if equal == false {
                record(Self.items(oldCount) + " (changed)")
            }
        case .struct, .class, .tuple:
            if style == .class, (old as AnyObject) === (new as AnyObject) {
                return
            }
            guard depth < format.maxDepth else {
                if equal == false || String(describing: old) != String(describing: new) {
                    recordValues(old, new)
                }
                return
            }
            let oldChildren = CompactDescription.allChildren(of: oldMirror)
            let newChildren = CompactDescription.allChildren(of: newMirror)
            guard oldChildren.count == newChildren.count else {
                recordValues(old, new)
                return
            }
            for (index, (oldChild, newChild)) in zip(oldChildren, newChildren).enumerated() {
                var label = oldChild.label ?? "\(index)"
                if label.hasPrefix(".") { label.removeFirst() }
                path.append(label)
                compare(oldChild.value, newChild.value, depth: depth + 1)
                path.removeLast()
            }
        default:
            // Enums and leaves (numbers, strings, ...) are compared as whole values.
            if equal == false || String(describing: old) != String(describing: new) {
                recordValues(old, new)
            }
        }
    }

    private static func items(_ count: Int) -> String {
        count == 1 ? "1 item" : "\(count) items"
    }
}

/// `a == b` if `a` is `Equatable` and `b` has the same type, `false` if `b`'s type differs, `nil` if `a` is
/// not `Equatable`.
private func equalIfEquatable(_ a: Any, _ b: Any) -> Bool? {
    guard let a = a as? any Equatable else { return nil }
    return a._sluiceIsEqual(to: b)
}

extension Equatable {
    fileprivate func _sluiceIsEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
