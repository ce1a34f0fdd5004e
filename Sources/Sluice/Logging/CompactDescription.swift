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

    /// The description so far, as UTF-8: pieces are copied in as bytes, and the text is made once, at the end.
    private var bytes: [UInt8] = []
    /// At least the length of the text in characters (its UTF-8 length until a piece was counted in characters),
    /// and much cheaper to keep.
    private var lengthBound = 0
    let limit: Int
    private(set) var isFull = false

    init(limit: Int) {
        self.limit = limit
    }

    /// The description.
    var text: String {
        String(decoding: bytes, as: UTF8.self)
    }

    static func of(_ value: Any, limit: Int, dotForTopLevelEnum: Bool = true) -> String {
        var description = CompactDescription(limit: limit)
        description.describe(value, isNested: dotForTopLevelEnum, depth: 0)
        return description.text
    }

    /// Adds `piece`, its control characters escaped, or as much of it as fits, then `…`.
    mutating func append(_ raw: String) {
        guard !isFull else { return }
        // The common case: a piece without control characters that fits even counting bytes, copied as it is.
        var piece = raw
        let copied = piece.withUTF8 { utf8 in
            guard utf8.count <= limit - lengthBound, !LogText.mayNeedEscape(utf8) else { return false }
            appendBytes(utf8)
            return true
        }
        if !copied {
            appendCounting(raw)
        }
    }

    /// Adds bytes that need no escape and fit.
    private mutating func appendBytes(_ utf8: UnsafeBufferPointer<UInt8>) {
        if bytes.capacity == 0 {
            // One allocation for a short line, where growing by doubling would take three.
            bytes.reserveCapacity(64)
        }
        if utf8.count <= 8 {
            // A name or a number: a few single appends cost less than copying a sequence.
            for byte in utf8 {
                bytes.append(byte)
            }
        } else {
            bytes.append(contentsOf: utf8)
        }
        lengthBound += utf8.count
    }

    /// Adds punctuation (`(`, `, `, `: `, `)`): ASCII without characters to escape, so only its length is checked.
    mutating func appendPunctuation(_ text: StaticString) {
        guard !isFull else { return }
        text.withUTF8Buffer { utf8 in
            if utf8.count <= limit - lengthBound {
                appendBytes(utf8)
            } else {
                appendCounting(String(decoding: utf8, as: UTF8.self))
            }
        }
    }

    /// Adds `raw` after its description, without escaping or cutting it: the duration of a log line, which is
    /// never cut.
    mutating func appendWhole(_ raw: String) {
        var piece = raw
        piece.withUTF8 { utf8 in bytes.append(contentsOf: utf8) }
        lengthBound += raw.utf8.count
    }

    /// `append(_:)` for a piece that needs escapes or may not fit: counts characters.
    private mutating func appendCounting(_ raw: String) {
        var text = self.text
        defer { bytes = Array(text.utf8) }
        var piece = raw
        if piece.utf8.count > limit - lengthBound {
            // Look at no more of `piece` than can fit, so that a huge string costs no more than a short one.
            piece = String(piece.prefix(LogText.plusOne(limit - text.count)))
        }
        piece = LogText.escapingControlCharacters(piece)
        let byteCount = piece.utf8.count
        if byteCount <= limit - lengthBound {
            // It fits even counting bytes: no need to count characters.
            text += piece
            lengthBound += byteCount
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

    /// Adds `value` in decimal, as its `description`, without making a string of it first.
    mutating func appendDecimal(_ value: Int) {
        guard !isFull else { return }
        // The digits, last first, into a buffer as long as the longest `Int`: `-9223372036854775808`.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var magnitude = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(truncatingIfNeeded: magnitude % 10) &+ UInt8(ascii: "0")
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            let digits = UnsafeBufferPointer(rebasing: buffer[start...])
            if digits.count <= limit - lengthBound {
                appendBytes(digits)
            } else {
                appendCounting(String(decoding: digits, as: UTF8.self))
            }
        }
    }

    /// Adds `string` in double quotes, as ``LogText/quoted(_:limit:)`` writes it.
    mutating func appendQuoted(_ string: String) {
        guard !isFull else { return }
        // The common case: nothing to escape, and the whole string with its quotes fits counting bytes.
        var text = string
        let copied = text.withUTF8 { utf8 in
            guard utf8.count + 2 <= limit - lengthBound, !LogText.mayNeedEscape(utf8),
                !utf8.contains(UInt8(ascii: "\"")), !utf8.contains(UInt8(ascii: "\\"))
            else { return false }
            bytes.append(UInt8(ascii: "\""))
            appendBytes(utf8)
            bytes.append(UInt8(ascii: "\""))
            lengthBound += 2
            return true
        }
        if !copied {
            append(LogText.quoted(string, limit: limit))
        }
    }

    mutating func describe(_ value: Any, isNested: Bool, depth: Int) {
        guard !isFull else { return }
        guard depth < Self.maxDepth else {
            append("…")
            return
        }
        let facts = DescribedType.of(value)
        if let leaf = facts.leaf {
            if leaf == .int {
                appendDecimal(value as! Int)
            } else {
                append(leaf.description(of: value))
            }
            return
        }
        if facts.describesItself, let describable = value as? any LogDescribable {
            describeItself(describable, depth: depth, isNested: isNested)
            return
        }
        if facts.isText {
            // Text of every kind is quoted and escaped, and read no further than it can be shown.
            if let text = value as? String {
                appendQuoted(text)
            } else if let text = value as? any StringProtocol {
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
                appendPunctuation("nil")
            }
        case .collection, .set:
            appendPunctuation("[")
            for (index, child) in mirror.children.enumerated() {
                if isFull { break }
                if index > 0 { appendPunctuation(", ") }
                describe(child.value, isNested: true, depth: depth + 1)
            }
            appendPunctuation("]")
        case .dictionary:
            if mirror.children.isEmpty {
                appendPunctuation("[:]")
                return
            }
            appendPunctuation("[")
            for (index, child) in mirror.children.enumerated() {
                if isFull { break }
                if index > 0 { appendPunctuation(", ") }
                let pair = Array(Mirror(reflecting: child.value).children)
                if pair.count == 2 {
                    describe(pair[0].value, isNested: true, depth: depth + 1)
                    appendPunctuation(": ")
                    describe(pair[1].value, isNested: true, depth: depth + 1)
                } else {
                    describe(child.value, isNested: true, depth: depth + 1)
                }
            }
            appendPunctuation("]")
        case .tuple:
            describeFields(of: mirror, depth: depth)
        case .enum:
            if let custom = facts.customDescription(of: value) {
                append(custom)
                return
            }
            if isNested { appendPunctuation(".") }
            guard let payload = mirror.children.first else {
                append(String(describing: value))
                return
            }
            append(payload.label ?? "")
            if DescribedType.of(payload.value).isTuple {
                describe(payload.value, isNested: true, depth: depth + 1)
            } else {
                appendPunctuation("(")
                describe(payload.value, isNested: true, depth: depth + 1)
                appendPunctuation(")")
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
        appendPunctuation("(")
        var first = true
        // Only a class has a superclass whose fields come first; asking any other mirror for one costs a lookup.
        let children = mirror.displayStyle == .class ? Self.allChildren(of: mirror) : Array(mirror.children)
        for child in children {
            if isFull { break }
            if !first { appendPunctuation(", ") }
            first = false
            if let label = child.label, !label.hasPrefix(".") {
                append(label)
                appendPunctuation(": ")
            }
            describe(child.value, isNested: true, depth: depth + 1)
        }
        appendPunctuation(")")
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
    /// ``LogDescribable``: the type writes its own description, before any other way.
    let describesItself: Bool
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
        describesItself = valueType is any LogDescribable.Type
        isEquatable = valueType is any Equatable.Type
        container = valueType as? any DiffContainer.Type
        // A tuple cannot have a custom mirror: its display style is its type's.
        isTuple = leaf == nil && !isText && !describesItself && Mirror(reflecting: value).displayStyle == .tuple
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
