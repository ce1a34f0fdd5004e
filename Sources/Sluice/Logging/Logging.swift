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
    /// Each action writes exactly one line: control characters in any text that goes into it (strings in the action
    /// or the state, a type's own `description`, labels) are written as escapes (`\n`, `\r`, `\t`, `\0`, `\u{1B}`,
    /// also for NEL, U+2028 and U+2029), and `String`, `Substring`, `Character` and `Unicode.Scalar` values are
    /// quoted: `note("a\nb")`.
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
    ///   elements are `Equatable` and differ). A part of the state that still has the same storage (the same bytes:
    ///   the same class instance, array or dictionary buffer, or indirect enum box) is skipped without being read,
    ///   and a part whose type is `Equatable` and equal costs one comparison, so the parts that an action left alone
    ///   cost the same however large they are. Other values (enums that are not `Equatable`, parts nested deeper
    ///   than 16 levels) are compared part by part, stopping at the first difference, at most 32 levels deep and
    ///   1,024 values in all; when that is not enough to decide, the change is listed with
    ///   `(not compared in full)`. The elements of a collection whose elements are not `Equatable` are not
    ///   compared: only its count is. Values are shown in at most 60 characters and 16 levels of nesting (deeper
    ///   ones as `…`). An action that changed nothing logs `no change`.
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
    /// `CustomStringConvertible` (the type is checked once, when the middleware is made). A description reads no
    /// more of a value than the line shows, except a type's own `description`, which is made whole. With
    /// `diff: false` the middleware never reads the state. With `diff: true` it reads the state before and
    /// after the action and walks both, skipping the parts whose storage did not change; the state from before
    /// the action is held while the reducer runs, so a reducer that changes a collection in place pays one
    /// copy-on-write copy of that collection. A large part that the action did change costs its comparison up to
    /// the first difference: `==` for an `Equatable` part (about 12 ms for an array of 2,000,000 `Int`s that
    /// differs in its last element, in a release build), otherwise at most the bounded walk; and its description,
    /// at most 60 characters. Use the diff while investigating, or together with sampling.
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
    /// How deep the diff follows nested values, naming them by path, before it compares what it found there as a
    /// whole.
    let maxDepth = 16
    /// The characters of the action that a line keeps before it leaves out changes to fit its limit.
    static let minActionLength = 16

    /// The line for one action: `<action> in <duration>`, then with the diff ` | <changes>`.
    ///
    /// A line longer than `maxLineLength` is made to fit in this order: the action is cut (ending with `…`), down to
    /// its first ``minActionLength`` characters; then the changes that do not fit are left out from the end and
    /// counted in `+N more`; then the action is cut further, down to one character. The duration is never cut,
    /// unless even `… in <duration>` and the changes' count do not fit: then the line is cut at its end.
    func line<Action>(for action: Action, elapsed: UInt64, changes: StateDiff?) -> String {
        let duration = " in " + Self.format(nanoseconds: elapsed)
        guard let maxLineLength else {
            let changesPart = changes.map { " | " + Self.changesText($0.changes[...], more: $0.omitted) } ?? ""
            return describe(action, limit: .max) + duration + changesPart
        }
        let durationLength = duration.count
        let description = describe(action, limit: max(1, maxLineLength - durationLength))
        guard let changes else {
            return Self.fit(description, duration, "", into: maxLineLength, durationLength: durationLength)
        }
        let keep = min(description.count, Self.minActionLength)
        let listed = changes.changes
        let lengths = listed.map(\.count)
        var listedLength = lengths.reduce(0, +) + 2 * max(0, listed.count - 1)
        var shown = listed.count
        // Leave out changes from the end until the action keeps its first characters; the last try shows none.
        while shown > 0 {
            let more = changes.omitted + listed.count - shown
            let length = 3 + listedLength + (more > 0 ? 2 + Self.moreText(more).count : 0)
            if maxLineLength - durationLength - length >= keep { break }
            shown -= 1
            listedLength -= lengths[shown] + (shown > 0 ? 2 : 0)
        }
        let changesPart = " | " + Self.changesText(listed[..<shown], more: changes.omitted + listed.count - shown)
        return Self.fit(description, duration, changesPart, into: maxLineLength, durationLength: durationLength)
    }

    /// `description + duration + changesPart`, with the description cut to fit `limit`; if not even one character of
    /// it fits, the whole line cut at its end.
    private static func fit(
        _ description: String,
        _ duration: String,
        _ changesPart: String,
        into limit: Int,
        durationLength: Int
    ) -> String {
        let room = limit - durationLength - changesPart.count
        if room >= 1 {
            return truncate(description, to: room) + duration + changesPart
        }
        return truncate(description + duration + changesPart, to: limit)
    }

    private static func changesText(_ listed: ArraySlice<String>, more: Int) -> String {
        if listed.isEmpty {
            return more > 0 ? moreText(more) : "no change"
        }
        let text = listed.joined(separator: "; ")
        return more > 0 ? text + "; " + moreText(more) : text
    }

    private static func moreText(_ count: Int) -> String {
        "+\(count) more"
    }

    /// The action's description, at most `limit` characters, its control characters escaped.
    private func describe<Action>(_ action: Action, limit: Int) -> String {
        if actionHasDescription {
            // The type's own description is made whole (its cost is the type's); only what can be shown is escaped.
            let description = String(describing: action)
            return Self.truncate(
                LogText.escapingControlCharacters(description.prefix(LogText.plusOne(limit))),
                to: limit
            )
        }
        return CompactDescription.of(action, limit: limit, dotForTopLevelEnum: false)
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

// MARK: - Text

/// Makes text safe to put on a log line: every line the logging middleware writes is one line.
enum LogText {
    /// Whether `scalar` is written as an escape: the control characters (`\n`, `\r`, `\t`, escape, NEL, all of
    /// Unicode's category Cc) and the line and paragraph separators, which would otherwise break the line or drive
    /// the terminal.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    /// `text` with its control characters written as escapes: `\n`, `\r`, `\t`, `\0`, `\u{1B}`.
    static func escapingControlCharacters(_ text: some StringProtocol) -> String {
        // Cheap check first: the characters to escape are encoded with these leading bytes only.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else {
            return String(text)
        }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                appendEscape(of: scalar, to: &result)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` in double quotes, with `"`, `\` and control characters escaped; of a longer text, only its first
    /// `limit` characters are read, and the closing quote is left out.
    static func quoted(_ text: some StringProtocol, limit: Int) -> String {
        let head = text.prefix(limit)
        var result = "\""
        for scalar in head.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where needsEscape(scalar): appendEscape(of: scalar, to: &result)
            default: result.unicodeScalars.append(scalar)
            }
        }
        if head.endIndex == text.endIndex {
            result += "\""
        }
        return result
    }

    private static func appendEscape(of scalar: Unicode.Scalar, to text: inout String) {
        switch scalar {
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case "\0": text += "\\0"
        default: text += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }

    /// `limit + 1` without overflow: how much of a text to read to know whether it is longer than `limit`.
    static func plusOne(_ limit: Int) -> Int {
        limit == .max ? limit : limit + 1
    }
}

// MARK: - Compact descriptions

/// A short description of any value, built by reflection and cut at a length limit.
///
/// Enums print as `place(id: 1, quantity: 2)` (nested ones with a leading dot: `orders(.place(id: 1))`),
/// structs as `Item(sku: "A", count: 2)`, optionals as their value or `nil`, collections as `[1, 2]`, strings
/// quoted and escaped (`String`, `Substring`, `Character`, `Unicode.Scalar`). A type with its own `description`
/// (`CustomStringConvertible`) is described by it. Control characters are escaped wherever they come from, and a
/// description reads no more of a value than it shows, nested at most ``maxDepth`` levels deep.
struct CompactDescription {
    /// How deep a description goes; a value nested deeper is shown as `…`. This bounds the recursion, so a deep
    /// value (a long chain of an indirect enum) cannot overflow the stack, even without a length limit.
    static let maxDepth = 16

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

    /// Adds `piece`, its control characters escaped, or as much of it as fits, then `…`.
    private mutating func append(_ raw: String) {
        guard !isFull else { return }
        var piece = raw
        if piece.utf8.count > limit - lengthBound {
            // Look at no more of `piece` than can fit, so that a huge string costs no more than a short one.
            piece = String(piece.prefix(LogText.plusOne(limit - text.count)))
        }
        piece = LogText.escapingControlCharacters(piece)
        let bytes = piece.utf8.count
        if bytes <= limit - lengthBound {
            // It fits even counting bytes: no need to count characters.
            text += piece
            lengthBound += bytes
            return
        }
        let length = text.count
        let remaining = limit - length
        let head = piece.prefix(LogText.plusOne(remaining))
        let count = head.count
        if count <= remaining {
            text += piece
            lengthBound = max(lengthBound, length + count)
        } else if remaining >= 1 {
            text += String(piece.prefix(remaining - 1)) + "…"
            isFull = true
        } else {
            // `text` is exactly full: its last character makes way for the `…`.
            text = String(text.prefix(limit - 1)) + "…"
            isFull = true
        }
    }

    private mutating func describe(_ value: Any, isNested: Bool, depth: Int) {
        guard !isFull else { return }
        guard depth < Self.maxDepth else {
            append("…")
            return
        }
        // Text of every kind is quoted and escaped, and read no further than it can be shown.
        if let text = value as? any StringProtocol {
            append(LogText.quoted(text, limit: limit))
            return
        }
        if let character = value as? Character {
            append(LogText.quoted(String(character), limit: limit))
            return
        }
        if let scalar = value as? Unicode.Scalar {
            append(LogText.quoted(String(scalar), limit: limit))
            return
        }
        let mirror = Mirror(reflecting: value)
        switch Self.style(of: mirror) {
        case .optional:
            if let wrapped = mirror.children.first?.value {
                describe(wrapped, isNested: isNested, depth: depth + 1)
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
            append(String(describing: value))
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
///
/// The work does not grow with the size of the parts that an action left alone: a part whose storage did not
/// change (the same bytes: the same class instance, the same array or dictionary buffer, the same indirect enum
/// box) is skipped before it is reflected, an `Equatable` part costs its `==`, and other parts are compared by a
/// bounded walk (``ValueComparison``) that stops at the first difference. Values are described in at most
/// ``LogLineFormat/maxValueLength`` characters.
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
            let name = path.isEmpty ? "state" : LogText.escapingControlCharacters(path.joined(separator: "."))
            changes.append(name + ": " + change())
        } else {
            omitted += 1
        }
    }

    private mutating func recordValues(_ old: Any, _ new: Any, note: String = "") {
        let limit = format.maxValueLength
        record(CompactDescription.of(old, limit: limit) + " -> " + CompactDescription.of(new, limit: limit) + note)
    }

    private mutating func compare(_ old: Any, _ new: Any, depth: Int) {
        // Before anything else, so that an untouched part is never reflected.
        if ValueComparison.isIdentical(old, new) { return }
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
                compare(oldValue, newValue, depth: depth + 1)
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
            guard depth < format.maxDepth else {
                compareWhole(old, new, knownDifferent: equal == false)
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
            compareWhole(old, new, knownDifferent: equal == false)
        }
    }

    /// Records `old -> new` if the values differ as a whole, or if the bounded comparison could not tell.
    private mutating func compareWhole(_ old: Any, _ new: Any, knownDifferent: Bool) {
        switch knownDifferent ? .different : ValueComparison.compare(old, new) {
        case .same:
            return
        case .different:
            recordValues(old, new)
        case .unknown:
            recordValues(old, new, note: " (not compared in full)")
        }
    }

    private static func items(_ count: Int) -> String {
        count == 1 ? "1 item" : "\(count) items"
    }
}

/// Whether two values are the same, found without describing them, in bounded depth and work.
///
/// A value is the same as another when their bytes are identical (for a class, an array, a dictionary or an
/// indirect enum: the same storage), when both are `Equatable` and `==`, or when both have the same type, the same
/// shape (enum case, count, labels) and the same parts, compared the same way, stopping at the first difference.
/// Values without parts (an enum case without payload) are compared by their descriptions. The walk goes at most
/// ``maxDepth`` levels deep and looks at most at ``maxVisits`` values; past that, the answer is ``Verdict/unknown``.
/// The parts of a set or a dictionary whose elements are not `Equatable` are not compared (their order can differ
/// between equal values): equal counts give ``Verdict/unknown``.
struct ValueComparison {
    enum Verdict {
        case same
        case different
        /// The walk reached its depth or work limit before it found a difference.
        case unknown
    }

    static let maxDepth = 32
    static let maxVisits = 1_024

    private var visits = 0

    static func compare(_ old: Any, _ new: Any) -> Verdict {
        var comparison = ValueComparison()
        return comparison.compare(old, new, depth: 0)
    }

    /// Whether `a` and `b` have the same type and the same bytes: the same value, held in the same storage.
    ///
    /// Cheap whatever the size of the value: a class instance, an array, a dictionary, a large string or an
    /// indirect enum case is a reference, so this compares a few words and never reads the storage.
    static func isIdentical(_ a: Any, _ b: Any) -> Bool {
        guard type(of: a) == type(of: b) else { return false }
        func sameBytes<Value>(_ a: Value) -> Bool {
            guard let b = b as? Value else { return false }
            return withUnsafeBytes(of: a) { a in
                withUnsafeBytes(of: b) { b in a.elementsEqual(b) }
            }
        }
        return sameBytes(a)
    }

    private mutating func compare(_ a: Any, _ b: Any, depth: Int) -> Verdict {
        guard visits < Self.maxVisits else { return .unknown }
        visits += 1
        if Self.isIdentical(a, b) { return .same }
        if let equal = equalIfEquatable(a, b) { return equal ? .same : .different }
        guard type(of: a) == type(of: b) else { return .different }
        guard depth < Self.maxDepth else { return .unknown }
        let aMirror = Mirror(reflecting: a)
        let bMirror = Mirror(reflecting: b)
        let style = aMirror.displayStyle
        guard style == bMirror.displayStyle else { return .different }
        let aChildren = style == .class ? AnyCollection(CompactDescription.allChildren(of: aMirror)) : aMirror.children
        let bChildren = style == .class ? AnyCollection(CompactDescription.allChildren(of: bMirror)) : bMirror.children
        guard aChildren.count == bChildren.count else { return .different }
        if aChildren.isEmpty {
            return String(describing: a) == String(describing: b) ? .same : .different
        }
        if style == .set || style == .dictionary { return .unknown }
        var verdict = Verdict.same
        for (aChild, bChild) in zip(aChildren, bChildren) {
            guard aChild.label == bChild.label else { return .different }
            if visits >= Self.maxVisits { return .unknown }
            switch compare(aChild.value, bChild.value, depth: depth + 1) {
            case .same: continue
            case .different: return .different
            case .unknown: verdict = .unknown  // A later part may still differ for sure.
            }
        }
        return verdict
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
