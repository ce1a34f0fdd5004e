extension Reducer {
    /// Runs a reducer of one element of a dictionary, for the element that an action addresses by key.
    ///
    /// `toElement` extracts the key and the element's action from a parent action, or returns `nil` to skip. The
    /// element is changed in place, inside the dictionary, inside the state: neither the dictionary nor the
    /// element is copied, so updating one entry costs about the same in a dictionary of a million entries as in
    /// one of a thousand.
    ///
    /// ```swift
    /// struct AppState { var orders: [Int: Order] = [:] }
    /// enum AppAction { case order(id: Int, OrderAction) }
    /// let orders: Reducer<AppState, AppAction> = .forEach(\.orders, action: { action in
    ///     if case .order(let id, let local) = action { (id, local) } else { nil }
    /// }, element: orderReducer)
    /// ```
    ///
    /// An action for a key that is not in the dictionary changes nothing and is reported to `ifMissing` (see
    /// ``UnmatchedChildAction``).
    ///
    /// - Parameters:
    ///   - keyPath: Where the dictionary lives in the state.
    ///   - toElement: Returns the key and the element's action for a parent action, or `nil` to skip.
    ///   - reducer: The reducer of one element.
    ///   - ifMissing: Called with each action whose key is not in the dictionary; by default,
    ///     ``UnmatchedChildAction/debugReport``.
    ///   - fileID: The file of the call, reported with unmatched actions.
    ///   - line: The line of the call, reported with unmatched actions.
    @inlinable
    public static func forEach<Key: Hashable & Sendable, Element, ElementAction>(
        _ keyPath: any WritableKeyPath<State, [Key: Element]> & Sendable,
        action toElement: @escaping @Sendable (Action) -> (Key, ElementAction)?,
        element reducer: Reducer<Element, ElementAction>,
        ifMissing: @escaping @Sendable (UnmatchedChildAction) -> Void = UnmatchedChildAction.debugReport,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Reducer where Action: Sendable {
        forEach(
            keyPath,
            action: ClosureExtractor(toElement),
            element: reducer,
            ifMissing: ifMissing,
            fileID: fileID,
            line: line
        )
    }

    /// Runs a reducer of one element of a dictionary, for the element that an action addresses by key, with an
    /// extractor type instead of a closure.
    ///
    /// The same as the closure form
    /// (``forEach(_:action:element:ifMissing:fileID:line:)-ojl6``),
    /// for reducers on a hot path: the compiler inlines the extractor's `extract(from:)` into the reducer, which a
    /// closure prevents (see ``ActionExtractor``).
    ///
    /// ```swift
    /// struct OrderActions: ActionExtractor {
    ///     func extract(from action: AppAction) -> (Int, OrderAction)? {
    ///         if case .order(let id, let local) = action { (id, local) } else { nil }
    ///     }
    /// }
    /// let orders: Reducer<AppState, AppAction> = .forEach(\.orders, action: OrderActions(), element: orderReducer)
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: Where the dictionary lives in the state.
    ///   - extractor: Extracts the key and the element's action from a parent action, or `nil` to skip.
    ///   - reducer: The reducer of one element.
    ///   - ifMissing: Called with each action whose key is not in the dictionary; by default,
    ///     ``UnmatchedChildAction/debugReport``.
    ///   - fileID: The file of the call, reported with unmatched actions.
    ///   - line: The line of the call, reported with unmatched actions.
    @inlinable
    public static func forEach<Key: Hashable & Sendable, Element, ElementAction>(
        _ keyPath: any WritableKeyPath<State, [Key: Element]> & Sendable,
        action extractor: some ActionExtractor<Action, (Key, ElementAction)>,
        element reducer: Reducer<Element, ElementAction>,
        ifMissing: @escaping @Sendable (UnmatchedChildAction) -> Void = UnmatchedChildAction.debugReport,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Reducer where Action: Sendable {
        let parts = ChildReducerParts(
            part: KeyPathWriter(keyPath),
            extractor: extractor,
            reduce: reducer.reduce,
            ifMissing: ifMissing,
            fileID: fileID,
            line: line
        )
        return Reducer(mutating: { state, action in
            parts.reduceAddressedElement(in: &state, for: action) { elements, key, reduce in
                // `values[index]` yields the element in place; `elements[key]?` would move it out and back.
                guard let index = elements.index(forKey: key) else { return false }
                reduce(&elements.values[index])
                return true
            }
        })
    }

    /// Runs a reducer of one element of an array of `Identifiable` elements, for the element whose `id` an action
    /// addresses.
    ///
    /// The element is found by a linear search of the ids (an array has no index by id; keep a dictionary by id
    /// with ``forEach(_:action:element:ifMissing:fileID:line:)-ojl6`` for
    /// large collections) and changed in place: neither the array nor the element is copied.
    ///
    /// ```swift
    /// struct AppState { var todos: [Todo] = [] }  // Todo: Identifiable
    /// let todos: Reducer<AppState, AppAction> = .forEach(\.todos, action: { action in
    ///     if case .todo(let id, let local) = action { (id, local) } else { nil }
    /// }, element: todoReducer)
    /// ```
    ///
    /// An action for an id that no element has changes nothing and is reported to `ifMissing`; if several
    /// elements share the id, the first one is changed.
    ///
    /// - Parameters:
    ///   - keyPath: Where the array lives in the state.
    ///   - toElement: Returns the element's id and action for a parent action, or `nil` to skip.
    ///   - reducer: The reducer of one element.
    ///   - ifMissing: Called with each action whose id no element has; by default,
    ///     ``UnmatchedChildAction/debugReport``.
    ///   - fileID: The file of the call, reported with unmatched actions.
    ///   - line: The line of the call, reported with unmatched actions.
    @inlinable
    public static func forEach<Element: Identifiable & Sendable, ElementAction>(
        _ keyPath: any WritableKeyPath<State, [Element]> & Sendable,
        action toElement: @escaping @Sendable (Action) -> (Element.ID, ElementAction)?,
        element reducer: Reducer<Element, ElementAction>,
        ifMissing: @escaping @Sendable (UnmatchedChildAction) -> Void = UnmatchedChildAction.debugReport,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Reducer where Action: Sendable, Element.ID: Sendable {
        forEach(
            keyPath,
            action: ClosureExtractor(toElement),
            element: reducer,
            ifMissing: ifMissing,
            fileID: fileID,
            line: line
        )
    }

    /// Runs a reducer of one element of an array of `Identifiable` elements, for the element whose `id` an action
    /// addresses, with an extractor type instead of a closure.
    ///
    /// The same as the closure form
    /// (``forEach(_:action:element:ifMissing:fileID:line:)-7jgsd``),
    /// for reducers on a hot path: the compiler inlines the extractor's `extract(from:)` into the reducer, which a
    /// closure prevents (see ``ActionExtractor``).
    ///
    /// - Parameters:
    ///   - keyPath: Where the array lives in the state.
    ///   - extractor: Extracts the element's id and action from a parent action, or `nil` to skip.
    ///   - reducer: The reducer of one element.
    ///   - ifMissing: Called with each action whose id no element has; by default,
    ///     ``UnmatchedChildAction/debugReport``.
    ///   - fileID: The file of the call, reported with unmatched actions.
    ///   - line: The line of the call, reported with unmatched actions.
    @inlinable
    public static func forEach<Element: Identifiable & Sendable, ElementAction>(
        _ keyPath: any WritableKeyPath<State, [Element]> & Sendable,
        action extractor: some ActionExtractor<Action, (Element.ID, ElementAction)>,
        element reducer: Reducer<Element, ElementAction>,
        ifMissing: @escaping @Sendable (UnmatchedChildAction) -> Void = UnmatchedChildAction.debugReport,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Reducer where Action: Sendable, Element.ID: Sendable {
        let parts = ChildReducerParts(
            part: KeyPathWriter(keyPath),
            extractor: extractor,
            reduce: reducer.reduce,
            ifMissing: ifMissing,
            fileID: fileID,
            line: line
        )
        return Reducer(mutating: { state, action in
            parts.reduceAddressedElement(in: &state, for: action) { elements, id, reduce in
                guard let index = elements.firstIndex(where: { $0.id == id }) else { return false }
                reduce(&elements[index])
                return true
            }
        })
    }
}
