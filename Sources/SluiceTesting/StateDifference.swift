/// The differences between an expected and an actual value, field by field, as lines for a failure message.
///
/// Found with `Mirror`: structs, classes and tuples by their fields (`orders.pending`), arrays by index
/// (`items[2]`), dictionaries by key (`stock["apple"]`), optionals through their value; enums, sets and other
/// leaves are compared as whole values. A part whose type is `Equatable` and equal is not visited.
///
/// The test store keeps its own differ rather than the logging middleware's, which formats for one log line
/// (counts of collections, values cut short) where a failing test wants each differing element.
struct StateDifference {
    /// `path: expected …, actual …`, one per difference found, at most `limit`.
    private(set) var lines: [String] = []
    /// The path of every difference found (`""` for the whole value), without a limit.
    private(set) var paths: [String] = []
    private var omitted = 0
    private let limit: Int
    private let maxDepth = 24
    private let isIncluded: ((String) -> Bool)?

    /// The differences between `expected` and `actual`; with `isIncluded`, only those at the paths it accepts.
    init(expected: Any, actual: Any, limit: Int = 40, only isIncluded: ((String) -> Bool)? = nil) {
        self.limit = limit
        self.isIncluded = isIncluded
        compare(expected, actual, path: "", depth: 0)
        if omitted > 0 {
            lines.append("… and \(omitted) more")
        }
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

    private mutating func record(_ path: String, _ text: String) {
        if let isIncluded, !isIncluded(path) { return }
        paths.append(path)
        if lines.count < limit {
            lines.append((path.isEmpty ? "state" : path) + ": " + text)
        } else {
            omitted += 1
        }
    }

    private mutating func recordValues(_ path: String, expected: Any, actual: Any) {
        record(path, "expected \(Self.describe(expected)), actual \(Self.describe(actual))")
    }

    private mutating func compare(_ expected: Any, _ actual: Any, path: String, depth: Int) {
        let equal = equalIfEquatable(expected, actual)
        if equal == true { return }
        let expectedMirror = Mirror(reflecting: expected)
        let actualMirror = Mirror(reflecting: actual)
        let style = Self.style(of: expectedMirror)
        guard type(of: expected) == type(of: actual), style == Self.style(of: actualMirror), depth < maxDepth else {
            if equal == false || Self.describe(expected) != Self.describe(actual) {
                recordValues(path, expected: expected, actual: actual)
            }
            return
        }
        switch style {
        case .optional:
            switch (expectedMirror.children.first?.value, actualMirror.children.first?.value) {
            case (nil, nil):
                return
            case (let expectedValue?, let actualValue?):
                compare(expectedValue, actualValue, path: path, depth: depth + 1)
            default:
                recordValues(path, expected: expected, actual: actual)
            }
        case .collection:
            let expectedElements = expectedMirror.children.map(\.value)
            let actualElements = actualMirror.children.map(\.value)
            if expectedElements.count != actualElements.count {
                record(path + ".count", "expected \(expectedElements.count), actual \(actualElements.count)")
            }
            for index in 0..<max(expectedElements.count, actualElements.count) {
                let elementPath = path + "[\(index)]"
                switch (index < expectedElements.count, index < actualElements.count) {
                case (true, true):
                    compare(expectedElements[index], actualElements[index], path: elementPath, depth: depth + 1)
                case (true, false):
                    record(elementPath, "expected \(Self.describe(expectedElements[index])), actual (none)")
                default:
                    record(elementPath, "expected (none), actual \(Self.describe(actualElements[index]))")
                }
            }
        case .dictionary:
            let expectedEntries = Self.entries(of: expectedMirror)
            let actualEntries = Self.entries(of: actualMirror)
            let keys = Set(expectedEntries.keys).union(actualEntries.keys).sorted()
            for key in keys {
                let entryPath = path + "[\(key)]"
                switch (expectedEntries[key], actualEntries[key]) {
                case (let expectedValue?, let actualValue?):
                    compare(expectedValue, actualValue, path: entryPath, depth: depth + 1)
                case (let expectedValue?, nil):
                    record(entryPath, "expected \(Self.describe(expectedValue)), actual (none)")
                case (nil, let actualValue?):
                    record(entryPath, "expected (none), actual \(Self.describe(actualValue))")
                case (nil, nil):
                    break
                }
            }
        case .struct, .class, .tuple:
            if style == .class, (expected as AnyObject) === (actual as AnyObject) {
                return
            }
            let expectedChildren = Self.allChildren(of: expectedMirror)
            let actualChildren = Self.allChildren(of: actualMirror)
            guard expectedChildren.count == actualChildren.count, !expectedChildren.isEmpty else {
                if equal == false || Self.describe(expected) != Self.describe(actual) {
                    recordValues(path, expected: expected, actual: actual)
                }
                return
            }
            for (index, (expectedChild, actualChild)) in zip(expectedChildren, actualChildren).enumerated() {
                var label = expectedChild.label ?? "\(index)"
                if label.hasPrefix(".") { label.removeFirst() }
                let childPath = path.isEmpty ? label : path + "." + label
                compare(expectedChild.value, actualChild.value, path: childPath, depth: depth + 1)
            }
        default:
            // Enums, sets and leaves (numbers, strings, ...) are compared as whole values.
            if equal == false || Self.describe(expected) != Self.describe(actual) {
                recordValues(path, expected: expected, actual: actual)
            }
        }
    }

    /// A dictionary's entries by the description of their keys (strings quoted).
    private static func entries(of mirror: Mirror) -> [String: Any] {
        var entries: [String: Any] = [:]
        for child in mirror.children {
            let pair = Array(Mirror(reflecting: child.value).children)
            if pair.count == 2 {
                entries[describe(pair[0].value)] = pair[1].value
            }
        }
        return entries
    }

    /// A value for a failure message: strings quoted, optionals unwrapped, long values cut at 200 characters.
    static func describe(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return describe(wrapped)
        }
        let text = value is String ? String(reflecting: value) : String(describing: value)
        return text.count > 200 ? String(text.prefix(199)) + "…" : text
    }

    private static func style(of mirror: Mirror) -> Mirror.DisplayStyle? {
        if let style = mirror.displayStyle { return style }
        return mirror.children.isEmpty ? nil : .struct
    }

    private static func allChildren(of mirror: Mirror) -> [Mirror.Child] {
        var chain = [mirror]
        while let superclass = chain.last?.superclassMirror {
            chain.append(superclass)
        }
        return chain.reversed().flatMap { Array($0.children) }
    }
}

/// `a == b` if `a` is `Equatable` and `b` has the same type, `false` if `b`'s type differs, `nil` if `a` is not
/// `Equatable`.
private func equalIfEquatable(_ a: Any, _ b: Any) -> Bool? {
    guard let a = a as? any Equatable else { return nil }
    return a._sluiceTestingIsEqual(to: b)
}

extension Equatable {
    fileprivate func _sluiceTestingIsEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
