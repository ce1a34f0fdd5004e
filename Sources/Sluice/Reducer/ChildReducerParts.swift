/// What `Reducer.forEach` needs on every action, in one object.
///
/// The reducer's closure captures this one reference instead of each part: a closure that captures several values
/// is called through a forwarder that loads every one of them and passes it as an argument, on every action, even
/// the parts that only a missing element needs.
///
/// `Sendable`: every stored property is a `let` of a `Sendable` type.
@usableFromInline
final class ChildReducerParts<
    State,
    Collection,
    Key: Hashable & Sendable,
    Element,
    ElementAction,
    Extractor: ActionExtractor
>: Sendable where Extractor.Extracted == (Key, ElementAction), Extractor.Action: Sendable {
    /// Where the collection lives in the state.
    @usableFromInline
    let part: KeyPathWriter<State, Collection>
    /// Extracts the key of the element and its action, or `nil` to skip.
    @usableFromInline
    let extractor: Extractor
    /// The reducer of one element.
    @usableFromInline
    let reduce: @Sendable (inout Element, ElementAction) -> Void
    private let ifMissing: @Sendable (UnmatchedChildAction) -> Void
    private let fileID: String
    private let line: Int

    @usableFromInline
    init(
        part: KeyPathWriter<State, Collection>,
        extractor: Extractor,
        reduce: @escaping @Sendable (inout Element, ElementAction) -> Void,
        ifMissing: @escaping @Sendable (UnmatchedChildAction) -> Void,
        fileID: StaticString,
        line: UInt
    ) {
        self.part = part
        self.extractor = extractor
        self.reduce = reduce
        self.ifMissing = ifMissing
        self.fileID = "\(fileID)"
        self.line = Int(line)
    }

    /// Reduces `action` into the element that it addresses: extracts the key and the element's action, finds the
    /// element in the collection in place with `withElement`, and reports the action if no element has the key.
    ///
    /// `withElement` calls its last argument with the element, in place, and returns `true`, or returns `false`
    /// when no element has the key. It is not escaping, so after specialization it is inlined like the rest.
    @inlinable
    func reduceAddressedElement(
        in state: inout State,
        for action: Extractor.Action,
        withElement: (inout Collection, Key, (inout Element) -> Void) -> Bool
    ) {
        guard let (key, local) = extractor.extract(from: action) else { return }
        var found = true
        part.modify(&state) { elements in
            found = withElement(&elements, key) { element in reduce(&element, local) }
        }
        if !found {
            reportMissing(key: key, action: action)
        }
    }

    /// Passes an action whose key no element has to `ifMissing`.
    @usableFromInline
    func reportMissing(key: Key, action: Extractor.Action) {
        ifMissing(UnmatchedChildAction(reason: .missingElement, key: key, action: action, fileID: fileID, line: line))
    }
}
