/// The changes between two values, found by reflection and named by their path down to the field
/// (`auctions[35].price: 1020 -> 1015`): the one diff behind the logging middleware's changes, a replay's step and
/// the test store's failure messages, each of which only chooses its ``Bounds`` and how to show a change.
///
/// How each part is compared:
/// - A part whose storage did not change (the same bytes: the same class instance, the same array, dictionary or
///   string buffer, the same indirect enum box) is skipped before it is reflected, and an `Equatable` part costs
///   its `==`; so the parts that a change left alone cost little, however large.
/// - Structs, classes (their superclasses' fields first) and tuples, field by field: `orders.pending`.
/// - Optionals through their value: `discount: nil -> 5`.
/// - Enums: two values of the same case with a payload through the payload, named by the case
///   (`status.shipped.at: 3 -> 4`); other cases, and cases without a payload, as whole values.
/// - Arrays (and other values that reflect as a collection) by index (`items[2].count`), with the count when it
///   changed (`items.count: 3 -> 4`); an element on one side only shows `(none)` on the other.
/// - Dictionaries (and other values that reflect as one) by key (`stock["apple"]`), in the order of the keys when
///   they are `Comparable`, of their descriptions otherwise; an entry on one side only shows `(none)` on the other.
/// - Sets by the elements removed, then those inserted, each in order: `tags: inserted "new"`.
/// - Numbers, `Bool`, text and values without parts as whole values.
///
/// The elements of an array, a dictionary or a set are walked with their own types: an element whose bytes did not
/// change costs a comparison of its bytes, not a reflection. The bounds (``Bounds``) cap what a diff lists, how
/// deep it names parts, how long a value's description gets, and how many values it reflects in all; past the
/// last, a part not compared yet is listed as `(not compared in full)`.
package struct ValueDiff {
    /// What a diff lists and how much work it does.
    package struct Bounds: Sendable {
        /// The most changes listed; the rest are counted in ``ValueDiff/omitted``.
        package var maxChanges: Int
        /// How deep parts are named; a part found deeper is compared as a whole (``ValueComparison``).
        package var maxDepth: Int
        /// The most characters of a value, or of a dictionary's key in a path, described in a change.
        package var maxValueLength: Int
        /// The most values reflected (structs, enums, classes, tuples, collections) in one diff, counting those
        /// that ``ValueComparison`` looks at. Equal and unchanged parts settled without reflection are not counted.
        package var maxVisits: Int

        /// A log line's: the diff runs for each logged action while the service serves, so its work is bounded
        /// like one comparison of ``ValueComparison``.
        package static func logLine(maxChanges: Int) -> Bounds {
            Bounds(maxChanges: maxChanges, maxDepth: 16, maxValueLength: 60, maxVisits: ValueComparison.maxVisits)
        }

        /// A replay's step: the line's bounds, with more values reflected, since a replay runs offline, where an
        /// answer is worth more than the time.
        package static func replay(maxChanges: Int) -> Bounds {
            Bounds(maxChanges: maxChanges, maxDepth: 16, maxValueLength: 60, maxVisits: 1 << 16)
        }

        /// A failing test's: more changes, deeper, longer values, and all the work it takes.
        package static let testFailure = Bounds(
            maxChanges: 40,
            maxDepth: 24,
            maxValueLength: 200,
            maxVisits: .max
        )
    }

    /// The changes found, at most ``Bounds/maxChanges``, in the order of the walk.
    package private(set) var changes: [Middlewares.LogChange] = []
    /// The changes found beyond ``Bounds/maxChanges``.
    package private(set) var omitted = 0

    /// What a change shows for an element or entry that is on one side only.
    package static let absent = "(none)"

    private let bounds: Bounds
    /// The name of a change of the whole value, and the start of a path that begins with a subscript.
    private let rootName: String
    private let isIncluded: ((String) -> Bool)?
    /// The parts from the root to the value being compared; made into text only when a change is recorded.
    private var path: [PathComponent] = []
    private var visits = 0
    /// Every change found, listed, counted or left out by `isIncluded`: whether a part's walk found anything.
    private var found = 0

    private enum PathComponent {
        case field(String)
        case enumCase(String)
        case index(Int)
        case key(Any)
        case count
    }

    /// The changes from `old` to `new`.
    ///
    /// - Parameters:
    ///   - rootName: The path of a change of the whole value, and the start of a path that begins with a subscript
    ///     (`state[3]`, `state.count`).
    ///   - bounds: What to list and how much work to do.
    ///   - isIncluded: With it, only the changes whose path it accepts are listed and counted.
    package init(
        _ old: Any,
        _ new: Any,
        rootName: String = "state",
        bounds: Bounds,
        only isIncluded: ((String) -> Bool)? = nil
    ) {
        self.bounds = bounds
        self.rootName = rootName
        self.isIncluded = isIncluded
        // An untouched value costs a comparison of its bytes, not an `==` after a walk that found nothing.
        guard !ValueComparison.isIdentical(old, new) else { return }
        if !compare(old, new, depth: 0) {
            recordValues(old, new, kind: .notComparedInFull)
        } else if found == 0, equalIfEquatable(old, new) == false {
            // `==` says they differ, but no part does (an `==` of its own).
            recordValues(old, new)
        }
    }

    // MARK: - Walking

    /// Compares two values at the current path and records what differs. Returns `false`, having recorded
    /// nothing, when the values need reflecting and the diff has no visits left: the caller then records the part
    /// it was walking as not compared in full.
    @discardableResult
    mutating func compare(_ old: Any, _ new: Any, depth: Int) -> Bool {
        // Before anything else, so that an untouched part is never reflected.
        if ValueComparison.isIdentical(old, new) { return true }
        let facts = DescribedType.of(old)
        let isSameType = type(of: old) == type(of: new)
        if facts.leaf != nil || facts.isText || !isSameType {
            if isSameType, equalIfEquatable(old, new) == true { return true }
            recordValues(old, new)
            return true
        }
        // `==` is not asked of a container, whose walk finds what differs in about the time of its `==`, nor of the
        // root, which differs in nearly every diff: its `==` would read the value up to its first change, and the
        // walk would read it again (``init(_:_:rootName:bounds:only:)`` asks it when the walk found nothing).
        let equal = facts.container == nil && depth > 0 ? equalIfEquatable(old, new) : nil
        if equal == true { return true }
        guard visits < bounds.maxVisits else { return false }
        visits += 1
        let foundBefore = found
        if depth >= bounds.maxDepth {
            compareWhole(old, new, knownDifferent: equal == false)
        } else if let container = facts.container {
            if !container.compareParts(old, new, in: &self, depth: depth) { return false }
        } else {
            compareReflected(old, new, facts, knownDifferent: equal == false, depth: depth)
        }
        if equal == false, found == foundBefore {
            // `==` says they differ, but no part does (an `==` of its own, a float that is not equal to itself).
            recordValues(old, new)
        }
        return true
    }

    private mutating func compareReflected(
        _ old: Any,
        _ new: Any,
        _ facts: DescribedType,
        knownDifferent: Bool,
        depth: Int
    ) {
        let oldMirror = Mirror(reflecting: old)
        let newMirror = Mirror(reflecting: new)
        let style = CompactDescription.style(of: oldMirror)
        guard style == CompactDescription.style(of: newMirror) else {
            recordValues(old, new)
            return
        }
        switch style {
        case .struct, .class, .tuple:
            let oldChildren = CompactDescription.allChildren(of: oldMirror)
            let newChildren = CompactDescription.allChildren(of: newMirror)
            guard oldChildren.count == newChildren.count else {
                recordValues(old, new)
                return
            }
            for (index, (oldChild, newChild)) in zip(oldChildren, newChildren).enumerated() {
                var label = oldChild.label ?? "\(index)"
                if label.hasPrefix(".") { label.removeFirst() }
                path.append(.field(label))
                if !compare(oldChild.value, newChild.value, depth: depth + 1) {
                    recordValues(oldChild.value, newChild.value, kind: .notComparedInFull)
                }
                path.removeLast()
            }
        case .enum:
            guard facts.custom == .none, let oldCase = oldMirror.children.first,
                let newCase = newMirror.children.first, let label = oldCase.label, label == newCase.label
            else {
                // Another case, a case without a payload, or an enum with a description of its own, which is how
                // its type asks to be shown.
                compareWhole(old, new, knownDifferent: knownDifferent)
                return
            }
            path.append(.enumCase(label))
            if !compare(oldCase.value, newCase.value, depth: depth + 1) {
                recordValues(oldCase.value, newCase.value, kind: .notComparedInFull)
            }
            path.removeLast()
        case .collection:
            let oldElements = oldMirror.children.map(\.value)
            let newElements = newMirror.children.map(\.value)
            compareIndexed(
                old,
                new,
                count: oldElements.count,
                newElements.count,
                depth: depth,
                isSame: { index in ValueComparison.isIdentical(oldElements[index], newElements[index]) },
                old: { oldElements[$0] },
                new: { newElements[$0] }
            )
        case .dictionary:
            guard let oldEntries = Self.entries(of: oldMirror), let newEntries = Self.entries(of: newMirror) else {
                compareWhole(old, new, knownDifferent: knownDifferent)
                return
            }
            var keys = Set(oldEntries.keys)
            keys.formUnion(newEntries.keys)
            let parts = keys.compactMap { key -> KeyedPart? in
                let oldValue = oldEntries[key]
                let newValue = newEntries[key]
                if let oldValue, let newValue, ValueComparison.isIdentical(oldValue, newValue) { return nil }
                return KeyedPart(key: key.base, old: oldValue, new: newValue)
            }
            compareKeyed(old, new, sorted(parts, by: \.key), depth: depth)
        default:
            // A leaf, or a value that reflects as a set without being a `Set` (its elements cannot be matched).
            compareWhole(old, new, knownDifferent: knownDifferent)
        }
    }

    /// The entries of a value that reflects as a dictionary, by key; `nil` if a key is not `Hashable`.
    private static func entries(of mirror: Mirror) -> [AnyHashable: Any]? {
        var entries: [AnyHashable: Any] = [:]
        for child in mirror.children {
            let pair = Array(Mirror(reflecting: child.value).children)
            guard pair.count == 2, let key = pair[0].value as? AnyHashable else { return nil }
            entries[key] = pair[1].value
        }
        return entries
    }

    /// Records `old -> new` if the values differ as a whole, or if the bounded comparison could not tell.
    private mutating func compareWhole(_ old: Any, _ new: Any, knownDifferent: Bool) {
        if knownDifferent {
            recordValues(old, new)
            return
        }
        let (verdict, visited) = ValueComparison.compare(old, new, maxVisits: max(1, bounds.maxVisits - visits))
        visits += visited
        switch verdict {
        case .same: return
        case .different: recordValues(old, new)
        case .unknown: recordValues(old, new, kind: .notComparedInFull)
        }
    }

    /// Compares two collections by index: their counts, the elements at the indices both have (those for which
    /// `isSame` is false), and the elements on one side only.
    mutating func compareIndexed(
        _ oldWhole: Any,
        _ newWhole: Any,
        count oldCount: Int,
        _ newCount: Int,
        depth: Int,
        isSame: (Int) -> Bool,
        old: (Int) -> Any,
        new: (Int) -> Any
    ) {
        if oldCount != newCount {
            path.append(.count)
            record(String(oldCount), String(newCount))
            path.removeLast()
        }
        for index in 0..<min(oldCount, newCount) where !isSame(index) {
            path.append(.index(index))
            let compared = compare(old(index), new(index), depth: depth + 1)
            path.removeLast()
            if !compared {
                recordValues(oldWhole, newWhole, kind: .notComparedInFull)
                return
            }
        }
        if isIncluded == nil, changes.count >= bounds.maxChanges {
            // Nothing more is listed: count the elements on one side without visiting them.
            found += abs(oldCount - newCount)
            omitted += abs(oldCount - newCount)
            return
        }
        let limit = bounds.maxValueLength
        for index in newCount..<max(oldCount, newCount) {
            path.append(.index(index))
            record(Self.describe(old(index), limit), Self.absent)
            path.removeLast()
        }
        for index in oldCount..<max(oldCount, newCount) {
            path.append(.index(index))
            record(Self.absent, Self.describe(new(index), limit))
            path.removeLast()
        }
    }

    /// An entry of a dictionary that differs: its key, and its value on each side that has it.
    struct KeyedPart {
        let key: Any
        let old: Any?
        let new: Any?
    }

    /// Compares the entries of two dictionaries that differ, in the order given.
    mutating func compareKeyed(_ oldWhole: Any, _ newWhole: Any, _ parts: [KeyedPart], depth: Int) {
        let limit = bounds.maxValueLength
        for part in parts {
            path.append(.key(part.key))
            var compared = true
            switch (part.old, part.new) {
            case (let old?, let new?):
                compared = compare(old, new, depth: depth + 1)
            case (let old?, nil):
                record(Self.describe(old, limit), Self.absent)
            case (nil, let new?):
                record(Self.absent, Self.describe(new, limit))
            case (nil, nil):
                break
            }
            path.removeLast()
            if !compared {
                recordValues(oldWhole, newWhole, kind: .notComparedInFull)
                return
            }
        }
    }

    /// Records the elements removed from a set and those inserted into it, at the set's path.
    mutating func recordMembership(removed: [Any], inserted: [Any]) {
        let limit = bounds.maxValueLength
        for element in removed {
            record(Self.describe(element, limit), Self.absent, kind: .removed)
        }
        for element in inserted {
            record(Self.absent, Self.describe(element, limit), kind: .inserted)
        }
    }

    /// `items` in a deterministic order: by `key`, with `<` when the keys' type is `Comparable`, else by the keys'
    /// descriptions.
    func sorted<Item, Key>(_ items: [Item], by key: (Item) -> Key) -> [Item] {
        guard items.count > 1 else { return items }
        if let comparable = Key.self as? any Comparable.Type {
            func sort<Order: Comparable>(_: Order.Type) -> [Item] {
                items.sorted { (key($0) as! Order) < (key($1) as! Order) }
            }
            return sort(comparable)
        }
        return items.map { (describe(key($0)), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    // MARK: - Recording

    mutating func record(
        _ before: @autoclosure () -> String,
        _ after: @autoclosure () -> String,
        kind: Middlewares.LogChange.Kind = .values
    ) {
        found += 1
        if let isIncluded, !isIncluded(renderedPath()) { return }
        if changes.count < bounds.maxChanges {
            changes.append(Middlewares.LogChange(path: renderedPath(), before: before(), after: after(), kind: kind))
        } else {
            omitted += 1
        }
    }

    mutating func recordValues(_ old: Any, _ new: Any, kind: Middlewares.LogChange.Kind = .values) {
        let limit = bounds.maxValueLength
        record(Self.describe(old, limit), Self.describe(new, limit), kind: kind)
    }

    func describe(_ value: Any) -> String {
        Self.describe(value, bounds.maxValueLength)
    }

    static func describe(_ value: Any, _ limit: Int) -> String {
        CompactDescription.of(value, limit: limit)
    }

    /// The path as a change shows it: fields and cases joined by dots, subscripts in brackets (`auctions[35].price`,
    /// `stock["apple"]`), the root's name for the whole value or before a leading subscript.
    private func renderedPath() -> String {
        var text = ""
        for (position, component) in path.enumerated() {
            switch component {
            case .field(let label), .enumCase(let label):
                if position > 0 { text += "." }
                text += LogText.escapingControlCharacters(label)
            case .index(let index):
                if position == 0 { text = rootName }
                text += "[\(index)]"
            case .key(let key):
                if position == 0 { text = rootName }
                text += "[" + describe(key) + "]"
            case .count:
                if position == 0 { text = rootName }
                text += ".count"
            }
        }
        return path.isEmpty ? rootName : text
    }
}

/// A standard container that the diff walks with its element types, without reflecting it: an element whose bytes
/// did not change costs a comparison of bytes, not an `Any` box and a mirror.
protocol DiffContainer: SendableMetatype {
    /// Compares the parts of `old` and `new`, two values of this type, in `diff`; `false` when `diff` ran out of
    /// visits before it recorded anything (only an optional, which has no path of its own, passes that on).
    static func compareParts(_ old: Any, _ new: Any, in diff: inout ValueDiff, depth: Int) -> Bool
}

extension Array: DiffContainer {
    static func compareParts(_ old: Any, _ new: Any, in diff: inout ValueDiff, depth: Int) -> Bool {
        let oldElements = old as! [Element]
        let newElements = new as! [Element]
        let size = MemoryLayout<Element>.size
        let stride = MemoryLayout<Element>.stride
        // The elements' bytes side by side: an unchanged element costs a `memcmp`, without a copy of it.
        oldElements.withUnsafeBytes { oldBytes in
            newElements.withUnsafeBytes { newBytes in
                diff.compareIndexed(
                    old,
                    new,
                    count: oldElements.count,
                    newElements.count,
                    depth: depth,
                    isSame: { index in
                        ValueComparison.sameBytes(
                            UnsafeRawBufferPointer(rebasing: oldBytes[(index * stride)..<(index * stride + size)]),
                            UnsafeRawBufferPointer(rebasing: newBytes[(index * stride)..<(index * stride + size)])
                        )
                    },
                    old: { oldElements[$0] },
                    new: { newElements[$0] }
                )
            }
        }
        return true
    }
}

extension Dictionary: DiffContainer {
    static func compareParts(_ old: Any, _ new: Any, in diff: inout ValueDiff, depth: Int) -> Bool {
        let oldEntries = old as! [Key: Value]
        let newEntries = new as! [Key: Value]
        // Keys and values are read through their own iterators: an iterator of `(key, value)` pairs asks the
        // runtime for the pair's tuple type at each step, which costs several times the comparison.
        var changed: [Key] = []
        // A copy made on write keeps the original's order: walk both together while their keys agree, and look
        // keys up only when they do not.
        var aligned = oldEntries.count == newEntries.count
        if aligned {
            var oldKeys = oldEntries.keys.makeIterator()
            var newKeys = newEntries.keys.makeIterator()
            var oldValues = oldEntries.values.makeIterator()
            var newValues = newEntries.values.makeIterator()
            while let oldKey = oldKeys.next(), let newKey = newKeys.next(), let oldValue = oldValues.next(),
                let newValue = newValues.next()
            {
                guard oldKey == newKey else {
                    aligned = false
                    break
                }
                if !ValueComparison.sameBytes(oldValue, newValue) { changed.append(oldKey) }
            }
        }
        var onOneSide: [Key] = []
        if !aligned {
            changed.removeAll()
            var oldKeys = oldEntries.keys.makeIterator()
            var oldValues = oldEntries.values.makeIterator()
            while let key = oldKeys.next(), let oldValue = oldValues.next() {
                if let newValue = newEntries[key] {
                    if !ValueComparison.sameBytes(oldValue, newValue) { changed.append(key) }
                } else {
                    onOneSide.append(key)
                }
            }
            if newEntries.count != oldEntries.count - onOneSide.count {
                for key in newEntries.keys where oldEntries[key] == nil {
                    onOneSide.append(key)
                }
            }
        }
        let keys = diff.sorted(changed + onOneSide, by: { $0 })
        diff.compareKeyed(
            old,
            new,
            keys.map { key in ValueDiff.KeyedPart(key: key, old: oldEntries[key], new: newEntries[key]) },
            depth: depth
        )
        return true
    }
}

extension Set: DiffContainer {
    static func compareParts(_ old: Any, _ new: Any, in diff: inout ValueDiff, depth: Int) -> Bool {
        let oldElements = old as! Set<Element>
        let newElements = new as! Set<Element>
        diff.recordMembership(
            removed: diff.sorted(Array(oldElements.subtracting(newElements)), by: { $0 }),
            inserted: diff.sorted(Array(newElements.subtracting(oldElements)), by: { $0 })
        )
        return true
    }
}

extension Optional: DiffContainer {
    static func compareParts(_ old: Any, _ new: Any, in diff: inout ValueDiff, depth: Int) -> Bool {
        switch (old as! Wrapped?, new as! Wrapped?) {
        case (nil, nil):
            return true
        case (let old?, let new?):
            return diff.compare(old, new, depth: depth + 1)
        default:
            diff.recordValues(old, new)
            return true
        }
    }
}
