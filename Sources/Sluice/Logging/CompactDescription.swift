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
