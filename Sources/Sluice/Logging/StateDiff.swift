/// The changes between two states, found by reflection, as ``Middlewares/LogChange`` values (`path: old -> new`).
///
/// The work does not grow with the size of the parts that an action left alone: a part whose storage did not
/// change (the same bytes: the same class instance, the same array or dictionary buffer, the same indirect enum
/// box) is skipped before it is reflected, an `Equatable` part costs its `==`, and other parts are compared by a
/// bounded walk (``ValueComparison``) that stops at the first difference. Values are described in at most
/// ``LogLineFormat/maxValueLength`` characters.
package struct StateDiff {
    package private(set) var changes: [Middlewares.LogChange] = []
    package private(set) var omitted = 0
    private let format: LogLineFormat
    /// The name of a change of the whole value, which has no path.
    private let rootName: String
    /// The labels from the root to the value being compared; joined only when a change is recorded.
    private var path: [String] = []

    package init<State>(_ before: State, _ after: State, rootName: String = "state", _ format: LogLineFormat) {
        self.format = format
        self.rootName = rootName
        compare(before, after, depth: 0)
    }

    private mutating func record(
        _ before: @autoclosure () -> String,
        _ after: @autoclosure () -> String,
        kind: Middlewares.LogChange.Kind = .values
    ) {
        if changes.count < format.maxChanges {
            let name = path.isEmpty ? rootName : LogText.escapingControlCharacters(path.joined(separator: "."))
            changes.append(Middlewares.LogChange(path: name, before: before(), after: after(), kind: kind))
        } else {
            omitted += 1
        }
    }

    private mutating func recordValues(_ old: Any, _ new: Any, kind: Middlewares.LogChange.Kind = .values) {
        let limit = format.maxValueLength
        record(CompactDescription.of(old, limit: limit), CompactDescription.of(new, limit: limit), kind: kind)
    }

    private mutating func compare(_ old: Any, _ new: Any, depth: Int) {
        // Before anything else, so that an untouched part is never reflected.
        if ValueComparison.isIdentical(old, new) { return }
        let equal = equalIfEquatable(old, new)
        if equal == true { return }
        if DescribedType.of(old).leaf != nil, type(of: old) == type(of: new) {
            // A number or a `Bool` that is not `==`: nothing to reflect.
            recordValues(old, new)
            return
        }
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
                record(Self.items(oldCount), Self.items(newCount))
            } else if equal == false {
                record(Self.items(oldCount), Self.items(newCount), kind: .elementsChanged)
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
            recordValues(old, new, kind: .notComparedInFull)
        }
    }

    private static func items(_ count: Int) -> String {
        count == 1 ? "1 item" : "\(count) items"
    }
}
