/// A value that writes its own description for the logging middleware, without reflection.
///
/// The logging middleware describes an action by reflection (`Mirror`) unless its type has its own: reflection
/// needs no code, but it is the costly part of a logged line. A type that adopts `LogDescribable` writes the same
/// compact description through a ``LogDescription`` at about the cost of formatting its fields by hand, and keeps
/// its `description` for other uses:
///
/// ```swift
/// enum OrderAction: Sendable, LogDescribable {
///     case place(id: Int, quantity: Int)
///     case rename(id: Int, String)
///     case clear
///
///     func describe(into description: inout LogDescription) {
///         switch self {
///         case .place(let id, let quantity):
///             description.enumCase("place")
///             description.field("id", id)
///             description.field("quantity", quantity)
///         case .rename(let id, let name):
///             description.enumCase("rename")
///             description.field("id", id)
///             description.field(name)
///         case .clear:
///             description.enumCase("clear")
///         }
///     }
/// }
/// // place(id: 7, quantity: 2), rename(id: 7, "tea"), clear: as reflection writes them
/// ```
///
/// The logging middleware uses it for the action and for any value inside a described value (a payload, a
/// field, an element), in preference to the type's `description`. What the type writes is cut to the line's
/// length limit and its control characters are escaped, as with reflection.
public protocol LogDescribable: SendableMetatype {
    /// Writes the value's description into `description`: a case or a type name, then its fields.
    func describe(into description: inout LogDescription)
}

/// Where a ``LogDescribable`` value writes its description: the compact form of the logging middleware's lines,
/// `place(id: 7, quantity: 2)`, `orders(.place(id: 7))`, `Item(sku: "A", count: 2)`.
///
/// Start with ``enumCase(_:)`` or ``structure(_:)``, then write the fields in order with `field`: the
/// parentheses and separators are added. Each field is written as reflection would write it: strings quoted and
/// escaped, numbers and `Bool` as their `description`, a ``LogDescribable`` value through its own
/// ``LogDescribable/describe(into:)``, and any other value by reflection (`Optional`, collections, a type's own
/// `description`). The description stops being written once
/// it reaches the line's length limit (ending with `…`), so a long value costs no more than the line shows.
public struct LogDescription {
    var writer: CompactDescription
    let depth: Int
    let isNested: Bool
    private var fields = Fields.none

    /// Where the list of fields stands.
    private enum Fields {
        /// No list: nothing written, a case without a payload, or raw text.
        case none
        /// A name was written and no field yet; a structure shows `()` even without fields.
        case awaitingFirst(parenthesesIfEmpty: Bool)
        /// At least one field was written: the list is open.
        case listing
    }

    init(writer: CompactDescription, depth: Int, isNested: Bool) {
        self.writer = writer
        self.depth = depth
        self.isNested = isNested
    }

    /// Writes the name of an enum case, `place`; with a leading dot when the enum is inside another value
    /// (`orders(.place(id: 7))`). The fields written next are its payload.
    public mutating func enumCase(_ name: String) {
        closeFields()
        if isNested { writer.appendPunctuation(".") }
        writer.append(name)
        fields = .awaitingFirst(parenthesesIfEmpty: false)
    }

    /// Writes the name of a structure or a class, `Item`; the fields written next follow it in parentheses
    /// (`Item()` without any).
    public mutating func structure(_ name: String) {
        closeFields()
        writer.append(name)
        fields = .awaitingFirst(parenthesesIfEmpty: true)
    }

    /// Writes a field with its label, `quantity: 2`, after the name (or after the previous field).
    public mutating func field<Value>(_ label: String, _ value: Value) {
        guard beginField() else { return }
        writer.append(label)
        writer.appendPunctuation(": ")
        writeValue(value)
    }

    /// Writes a field without a label, `7` in `add(7)`, after the name (or after the previous field).
    public mutating func field<Value>(_ value: Value) {
        guard beginField() else { return }
        writeValue(value)
    }

    /// Writes `text` as it is (its control characters escaped), for a description of another shape.
    public mutating func write(_ text: String) {
        writer.append(text)
    }

    /// Whether anything more can be written: `false` once the description reached the line's length limit.
    public var hasRoom: Bool {
        !writer.isFull
    }

    /// Opens the list or writes the separator; `false` when the description is full.
    private mutating func beginField() -> Bool {
        guard !writer.isFull else { return false }
        switch fields {
        case .listing: writer.appendPunctuation(", ")
        case .awaitingFirst, .none: writer.appendPunctuation("(")
        }
        fields = .listing
        return true
    }

    /// Closes the list of fields, if one was opened.
    mutating func closeFields() {
        switch fields {
        case .none: return
        case .awaitingFirst(let parenthesesIfEmpty): if parenthesesIfEmpty { writer.appendPunctuation("()") }
        case .listing: writer.appendPunctuation(")")
        }
        fields = .none
    }

    /// A value written as reflection writes it: the common leaves without a look-up of their type.
    private mutating func writeValue<Value>(_ value: Value) {
        // A comparison of metadata pointers: the leaves that most fields are skip the look-up of what the type is.
        if Value.self == Int.self {
            writer.appendDecimal(unsafeBitCast(value, to: Int.self))
        } else if Value.self == String.self {
            writer.appendQuoted(unsafeBitCast(value, to: String.self))
        } else if Value.self == Bool.self {
            writer.append(unsafeBitCast(value, to: Bool.self) ? "true" : "false")
        } else if Value.self == Double.self {
            writer.append(unsafeBitCast(value, to: Double.self).description)
        } else if let describable = value as? any LogDescribable {
            writer.describeItself(describable, depth: depth + 1)
        } else {
            writer.describe(value, isNested: true, depth: depth + 1)
        }
    }
}

extension CompactDescription {
    /// Describes `value` through its ``LogDescribable`` conformance, at `depth`, as a nested value.
    mutating func describeItself(_ value: some LogDescribable, depth: Int, isNested: Bool = true) {
        guard !isFull else { return }
        guard depth < Self.maxDepth else {
            append("…")
            return
        }
        // The text moves into the description and back, so that appending to it never copies it.
        var description = LogDescription(writer: CompactDescription(limit: limit), depth: depth, isNested: isNested)
        swap(&description.writer, &self)
        value.describe(into: &description)
        description.closeFields()
        swap(&description.writer, &self)
    }
}
