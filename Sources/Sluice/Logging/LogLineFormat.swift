/// Builds the lines of the logging middleware.
package struct LogLineFormat: Sendable {
    let maxLineLength: Int?
    let maxChanges: Int
    /// Whether the action type has its own `description`, which then describes actions without reflection.
    let actionHasDescription: Bool
    /// For an action type that is ``LogDescribable``: writes the action at the address into a description. Made
    /// once per middleware, so that a line neither looks the conformance up nor boxes the action.
    let describeAction: (@Sendable (UnsafeRawPointer, inout LogDescription) -> Void)?
    /// The characters of the action that a line keeps before it leaves out changes to fit its limit.
    static let minActionLength = 16

    /// A format for lines of at most `maxLineLength` characters (`nil`: no limit) that list at most `maxChanges`
    /// changes, for the actions of `Action`: described by their ``LogDescribable`` conformance if they have one,
    /// else by their own `description` if they have one, else by reflection.
    package init<Action>(maxLineLength: Int?, maxChanges: Int, for action: Action.Type) {
        self.maxLineLength = maxLineLength
        self.maxChanges = maxChanges
        if let describable = Action.self as? any LogDescribable.Type {
            describeAction = Self.describer(of: describable)
            actionHasDescription = false
        } else {
            describeAction = nil
            actionHasDescription = Action.self is any CustomStringConvertible.Type
        }
    }

    private static func describer<Described: LogDescribable>(
        of type: Described.Type
    ) -> @Sendable (UnsafeRawPointer, inout LogDescription) -> Void {
        { action, description in
            action.assumingMemoryBound(to: Described.self).pointee.describe(into: &description)
        }
    }

    /// The line for one action: `<action> in <duration>`, then ` (waited <time>)` if its dispatch waited for the
    /// pipeline, then with the diff ` | <changes>`.
    ///
    /// A line longer than `maxLineLength` is made to fit in this order: the action is cut (ending with `…`), down to
    /// its first ``minActionLength`` characters; then the changes that do not fit are left out from the end and
    /// counted in `+N more`; then the action is cut further, down to one character. The duration is never cut,
    /// unless even `… in <duration>` and the changes' count do not fit: then the line is cut at its end.
    func line<Action>(
        for action: Action,
        elapsed: UInt64,
        waited: UInt64,
        changes: [Middlewares.LogChange]?,
        omitted: Int
    ) -> String {
        let (duration, durationLength) = Self.durationPart(elapsed: elapsed, waited: waited)
        guard let maxLineLength else {
            let changesPart = changes.map { " | " + Self.changesText($0.map(\.description)[...], more: omitted) } ?? ""
            return describe(action, limit: .max) + duration + changesPart
        }
        if changes == nil, maxLineLength - durationLength >= 1,
            var description = describedWithoutOwnDescription(
                action,
                limit: maxLineLength - durationLength
            )
        {
            // The description fits beside the duration: the line is one buffer.
            description.appendWhole(duration)
            return description.text
        }
        let description = describe(action, limit: max(1, maxLineLength - durationLength))
        guard let changes else {
            return Self.fit(description, duration, "", into: maxLineLength, durationLength: durationLength)
        }
        let keep = min(description.count, Self.minActionLength)
        let listed = changes.map(\.description)
        let lengths = listed.map(\.count)
        var listedLength = lengths.reduce(0, +) + 2 * max(0, listed.count - 1)
        var shown = listed.count
        // Leave out changes from the end until the action keeps its first characters; the last try shows none.
        while shown > 0 {
            let more = omitted + listed.count - shown
            let length = 3 + listedLength + (more > 0 ? 2 + Self.moreText(more).count : 0)
            if maxLineLength - durationLength - length >= keep { break }
            shown -= 1
            listedLength -= lengths[shown] + (shown > 0 ? 2 : 0)
        }
        let changesPart = " | " + Self.changesText(listed[..<shown], more: omitted + listed.count - shown)
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
    package func describe<Action>(_ action: Action, limit: Int) -> String {
        if let description = describedWithoutOwnDescription(action, limit: limit) {
            return description.text
        }
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

    /// The action's description through its ``LogDescribable`` conformance or by reflection, or `nil` when its type
    /// has its own `description`.
    private func describedWithoutOwnDescription<Action>(_ action: Action, limit: Int) -> CompactDescription? {
        if let describeAction {
            // `Action` is the type the describer was made for: the format is made per middleware, for its actions.
            var description = LogDescription(writer: CompactDescription(limit: limit), depth: 0, isNested: false)
            withUnsafePointer(to: action) { action in describeAction(UnsafeRawPointer(action), &description) }
            description.closeFields()
            return description.writer
        }
        if actionHasDescription {
            return nil
        }
        var description = CompactDescription(limit: limit)
        description.describe(action, isNested: false, depth: 0)
        return description
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
        // At most 14 bytes (11 digits of seconds, a decimal and a unit): a string without an allocation of its own.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { buffer in
            var count = 0
            writeDuration(nanoseconds, into: buffer, at: &count)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    /// ` in <duration>`, then ` (waited <time>)` if `waited` is not zero: what a line says after the action, and
    /// its length in characters.
    static func durationPart(elapsed: UInt64, waited: UInt64) -> (text: String, length: Int) {
        // At most 4 + 14 + 9 + 14 + 1 bytes; without a wait, at most 15 (up to 999.9ms), a small string.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            var count = 0
            write(" in ", into: buffer, at: &count)
            writeDuration(elapsed, into: buffer, at: &count)
            if waited > 0 {
                write(" (waited ", into: buffer, at: &count)
                writeDuration(waited, into: buffer, at: &count)
                write(")", into: buffer, at: &count)
            }
            let bytes = UnsafeBufferPointer(rebasing: buffer[..<count])
            // Every character is one byte but `µ`, which is two (its second byte, 0xB5, is in no other).
            let micros = bytes.reduce(0) { $0 + ($1 == 0xB5 ? 1 : 0) }
            return (String(decoding: bytes, as: UTF8.self), count - micros)
        }
    }

    /// Writes `nanoseconds` as ``format(nanoseconds:)`` shows it, as UTF-8 bytes from `count` on.
    private static func writeDuration(
        _ nanoseconds: UInt64,
        into buffer: UnsafeMutableBufferPointer<UInt8>,
        at count: inout Int
    ) {
        if nanoseconds < 1_000 {
            writeDecimal(nanoseconds, into: buffer, at: &count)
            write("ns", into: buffer, at: &count)
            return
        }
        // The units: 0 µs, 1 ms, 2 s.
        var unit = nanoseconds >= 1_000_000_000 ? 2 : nanoseconds >= 1_000_000 ? 1 : 0
        var tenths = (nanoseconds + scale(of: unit) / 20) / (scale(of: unit) / 10)
        if tenths >= 10_000 && unit < 2 {
            // 999.96µs rounds to 1000.0µs: say 1ms.
            unit += 1
            tenths = (nanoseconds + scale(of: unit) / 20) / (scale(of: unit) / 10)
        }
        writeDecimal(tenths / 10, into: buffer, at: &count)
        if tenths % 10 != 0 {
            write(".", into: buffer, at: &count)
            writeDecimal(tenths % 10, into: buffer, at: &count)
        }
        write(unit == 0 ? "µs" : unit == 1 ? "ms" : "s", into: buffer, at: &count)
    }

    private static func writeDecimal(
        _ value: UInt64,
        into buffer: UnsafeMutableBufferPointer<UInt8>,
        at count: inout Int
    ) {
        var digits = 1
        var rest = value
        while rest >= 10 {
            digits += 1
            rest /= 10
        }
        rest = value
        for position in stride(from: count + digits - 1, through: count, by: -1) {
            buffer[position] = UInt8(truncatingIfNeeded: rest % 10) &+ UInt8(ascii: "0")
            rest /= 10
        }
        count += digits
    }

    private static func write(_ text: StaticString, into buffer: UnsafeMutableBufferPointer<UInt8>, at count: inout Int)
    {
        text.withUTF8Buffer { utf8 in
            for byte in utf8 {
                buffer[count] = byte
                count += 1
            }
        }
    }

    /// The nanoseconds in one of the units of ``format(nanoseconds:)``.
    private static func scale(of unit: Int) -> UInt64 {
        unit == 0 ? 1_000 : unit == 1 ? 1_000_000 : 1_000_000_000
    }
}
