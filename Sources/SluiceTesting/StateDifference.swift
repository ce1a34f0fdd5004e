import Sluice

/// The differences between an expected and an actual value, as lines for a failure message: the changes that
/// Sluice's diff finds from the expected value to the actual one (the same diff as a log line's or a replay's
/// step, with a failing test's bounds), each written as `path: expected …, actual …`.
struct StateDifference {
    /// `path: expected …, actual …`, one per difference found, at most `limit`, then `… and N more`.
    private(set) var lines: [String] = []

    /// The differences between `expected` and `actual`; with `isIncluded`, only those at the paths it accepts.
    init(expected: Any, actual: Any, limit: Int = 40, only isIncluded: ((String) -> Bool)? = nil) {
        var bounds = ValueDiff.Bounds.testFailure
        bounds.maxChanges = limit
        let diff = ValueDiff(expected, actual, rootName: "", bounds: bounds, only: isIncluded)
        lines = diff.changes.map(Self.line)
        if diff.omitted > 0 {
            lines.append("… and \(diff.omitted) more")
        }
    }

    /// The path of every difference between `expected` and `actual` (`""` for the whole value).
    static func paths(expected: Any, actual: Any) -> [String] {
        var bounds = ValueDiff.Bounds.testFailure
        bounds.maxChanges = .max
        return ValueDiff(expected, actual, rootName: "", bounds: bounds).changes.map(\.path)
    }

    /// Whether a difference at `path` concerns one of `named`: the same part, a part inside one, or a part that
    /// contains one (a difference recorded for a whole collection or value when a field of it was named).
    static func path(_ path: String, concernsAnyOf named: Set<String>) -> Bool {
        if named.contains(path) { return true }
        return named.contains { name in
            name.isEmpty || path.isEmpty || isPath(path, inside: name) || isPath(name, inside: path)
        }
    }

    private static func isPath(_ path: String, inside outer: String) -> Bool {
        guard path.count > outer.count, path.hasPrefix(outer) else { return false }
        let next = path[path.index(path.startIndex, offsetBy: outer.count)]
        return next == "." || next == "["
    }

    /// A change from the expected value to the actual one, as a line: `items[0]: expected (none), actual "apple"`.
    private static func line(_ change: Middlewares.LogChange) -> String {
        // The paths are made from the root without a name, so that the whole value's is `""`; the message names it.
        let path =
            change.path.isEmpty || change.path.hasPrefix("[") || change.path.hasPrefix(".")
            ? "state" + change.path : change.path
        switch change.kind {
        case .values:
            return "\(path): expected \(change.before), actual \(change.after)"
        case .notComparedInFull:
            return "\(path): expected \(change.before), actual \(change.after) (not compared in full)"
        case .removed:
            return "\(path): expected to contain \(change.before), actual does not"
        case .inserted:
            return "\(path): actual contains \(change.after), expected does not"
        }
    }
}
