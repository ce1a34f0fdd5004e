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
        let facts = DescribedType.of(value)
        if let leaf = facts.leaf {
            append(leaf.description(of: value))
            return
        }
        if facts.isText {
            // Text of every kind is quoted and escaped, and read no further than it can be shown.
            if let text = value as? any StringProtocol {
                append(LogText.quoted(text, limit: limit))
            } else if let character = value as? Character {
                append(LogText.quoted(String(character), limit: limit))
            } else if let scalar = value as? Unicode.Scalar {
                append(LogText.quoted(String(scalar), limit: limit))
            }
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
            if let custom = facts.customDescription(of: value) {
                append(custom)
                return
            }
            if isNested { append(".") }
            guard let payload = mirror.children.first else {
                append(String(describing: value))
                return
            }
            append(payload.label ?? "")
            if DescribedType.of(payload.value).isTuple {
                describe(payload.value, isNested: true, depth: depth + 1)
            } else {
                append("(")
                describe(payload.value, isNested: true, depth: depth + 1)
                append(")")
            }
        case .struct, .class:
            if let custom = facts.customDescription(of: value) {
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
        // Only a class has a superclass whose fields come first; asking any other mirror for one costs a lookup.
        let children = mirror.displayStyle == .class ? Self.allChildren(of: mirror) : Array(mirror.children)
        for child in children {
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

/// What describing a value needs to know about its type, learned once per type: the conformance checks that find
/// it cost the runtime far more on each call than a look-up here.
///
/// Only facts that hold for every value of a type are kept; a type's mirror (its display style, its children)
/// can depend on the value (`CustomReflectable`), so it is made for each value.
struct DescribedType: Sendable {
    /// The numbers and `Bool`, written as their `description` (what `String(describing:)` writes) without
    /// reflection.
    enum Leaf: Sendable {
        case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, double, float, bool

        init?(_ type: Any.Type) {
            switch ObjectIdentifier(type) {
            case ObjectIdentifier(Int.self): self = .int
            case ObjectIdentifier(Int8.self): self = .int8
            case ObjectIdentifier(Int16.self): self = .int16
            case ObjectIdentifier(Int32.self): self = .int32
            case ObjectIdentifier(Int64.self): self = .int64
            case ObjectIdentifier(UInt.self): self = .uint
            case ObjectIdentifier(UInt8.self): self = .uint8
            case ObjectIdentifier(UInt16.self): self = .uint16
            case ObjectIdentifier(UInt32.self): self = .uint32
            case ObjectIdentifier(UInt64.self): self = .uint64
            case ObjectIdentifier(Double.self): self = .double
            case ObjectIdentifier(Float.self): self = .float
            case ObjectIdentifier(Bool.self): self = .bool
            default: return nil
            }
        }

        /// The description of `value`, which has this type; the cast is to the exact type, which the runtime
        /// checks first.
        func description(of value: Any) -> String {
            switch self {
            case .int: (value as! Int).description
            case .int8: (value as! Int8).description
            case .int16: (value as! Int16).description
            case .int32: (value as! Int32).description
            case .int64: (value as! Int64).description
            case .uint: (value as! UInt).description
            case .uint8: (value as! UInt8).description
            case .uint16: (value as! UInt16).description
            case .uint32: (value as! UInt32).description
            case .uint64: (value as! UInt64).description
            case .double: (value as! Double).description
            case .float: (value as! Float).description
            case .bool: (value as! Bool).description
            }
        }
    }

    /// The type's own description, if it has one.
    enum Custom: Sendable {
        case none
        case description
        case debugDescription
    }

    let leaf: Leaf?
    /// `StringProtocol`, `Character` or `Unicode.Scalar`: quoted and escaped.
    let isText: Bool
    let custom: Custom
    /// A tuple type: an enum payload of several values, written without extra parentheses.
    let isTuple: Bool
    /// `Equatable`: the diff compares two values of the type with `==` (a failed cast to `any Equatable` costs as
    /// much as a successful one, so it is not repeated for the types that are not).
    let isEquatable: Bool
    /// An array, a dictionary, a set or an optional: the diff walks its parts with their own types.
    let container: (any DiffContainer.Type)?

    /// The facts about the type of `value`, learned from it the first time a value of its type is described.
    static func of(_ value: Any) -> DescribedType {
        let key = ObjectIdentifier(type(of: value))
        if let known = known.withLock({ $0[key] }) {
            return known
        }
        let learned = DescribedType(learningFrom: value)
        known.withLock { $0[key] = learned }
        return learned
    }

    /// Every type described so far: as many entries as the program has types that reach a log line.
    private static let known = Locked<[ObjectIdentifier: DescribedType]>([:])

    private init(learningFrom value: Any) {
        // The conformances of the type, not of the value: a cast of a value looks through an optional
        // (`Optional("a") as? any StringProtocol` succeeds), which would make the facts depend on the first value.
        let valueType = type(of: value)
        leaf = Leaf(valueType)
        isText =
            valueType is any StringProtocol.Type || valueType == Character.self || valueType == Unicode.Scalar.self
        custom =
            if valueType is any CustomStringConvertible.Type {
                .description
            } else if valueType is any CustomDebugStringConvertible.Type {
                .debugDescription
            } else {
                .none
            }
        isEquatable = valueType is any Equatable.Type
        container = valueType as? any DiffContainer.Type
        // A tuple cannot have a custom mirror: its display style is its type's.
        isTuple = leaf == nil && !isText && Mirror(reflecting: value).displayStyle == .tuple
    }

    /// The type's own description of `value`, or `nil` if the type has none.
    func customDescription(of value: Any) -> String? {
        switch custom {
        case .none: nil
        case .description: (value as? any CustomStringConvertible)?.description
        case .debugDescription: (value as? any CustomDebugStringConvertible)?.debugDescription
        }
    }
}
