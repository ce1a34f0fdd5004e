/// Builds the lines of the logging middleware.
package struct LogLineFormat: Sendable {
    let maxLineLength: Int?
    let maxChanges: Int
    /// Whether the action type has its own `description`, which then describes actions without reflection.
    var actionHasDescription = false
    /// The characters of the action that a line keeps before it leaves out changes to fit its limit.
    static let minActionLength = 16

    /// A format for lines of at most `maxLineLength` characters (`nil`: no limit) that list at most `maxChanges`
    /// changes.
    package init(maxLineLength: Int?, maxChanges: Int, actionHasDescription: Bool = false) {
        self.maxLineLength = maxLineLength
        self.maxChanges = maxChanges
        self.actionHasDescription = actionHasDescription
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
        var duration = " in " + Self.format(nanoseconds: elapsed)
        if waited > 0 {
            duration += " (waited " + Self.format(nanoseconds: waited) + ")"
        }
        guard let maxLineLength else {
            let changesPart = changes.map { " | " + Self.changesText($0.map(\.description)[...], more: omitted) } ?? ""
            return describe(action, limit: .max) + duration + changesPart
        }
        let durationLength = duration.count
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
