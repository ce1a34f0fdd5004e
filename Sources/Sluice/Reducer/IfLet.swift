extension Reducer {
    /// Runs a reducer of an optional part of the state, for the actions that it accepts, while the part is not
    /// `nil`.
    ///
    /// The part is changed in place (unwrapped where it lives, not copied out and back).
    ///
    /// ```swift
    /// struct AppState { var currentJob: ImportJob? }
    /// let job: Reducer<AppState, AppAction> = .ifLet(\.currentJob, action: { action in
    ///     if case .job(let local) = action { local } else { nil }
    /// }, then: jobReducer)
    /// ```
    ///
    /// An action for the part while it is `nil` changes nothing and is reported to `ifMissing` (see
    /// ``UnmatchedChildAction``). To create or clear the part, handle those actions in the parent's reducer.
    ///
    /// - Parameters:
    ///   - keyPath: Where the optional part lives in the state.
    ///   - toChild: Returns the part's action for a parent action, or `nil` to skip.
    ///   - reducer: The reducer of the unwrapped part.
    ///   - ifMissing: Called with each action for the part while it is `nil`; by default,
    ///     ``UnmatchedChildAction/debugReport``.
    ///   - fileID: The file of the call, reported with unmatched actions.
    ///   - line: The line of the call, reported with unmatched actions.
    @inlinable
    public static func ifLet<Child, ChildAction>(
        _ keyPath: any WritableKeyPath<State, Child?> & Sendable,
        action toChild: @escaping @Sendable (Action) -> ChildAction?,
        then reducer: Reducer<Child, ChildAction>,
        ifMissing: @escaping @Sendable (UnmatchedChildAction) -> Void = UnmatchedChildAction.debugReport,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Reducer where Action: Sendable {
        ifLet(
            keyPath,
            action: ClosureExtractor(toChild),
            then: reducer,
            ifMissing: ifMissing,
            fileID: fileID,
            line: line
        )
    }

    /// Runs a reducer of an optional part of the state, for the actions that it accepts, while the part is not
    /// `nil`, with an extractor type instead of a closure.
    ///
    /// The same as the closure form (``ifLet(_:action:then:ifMissing:fileID:line:)-(_,(Action)->ChildAction?,_,_,_,_)``),
    /// for reducers on a hot path: the compiler inlines the extractor's `extract(from:)` into the reducer, which a
    /// closure prevents (see ``ActionExtractor``).
    ///
    /// - Parameters:
    ///   - keyPath: Where the optional part lives in the state.
    ///   - extractor: Extracts the part's action from a parent action, or `nil` to skip.
    ///   - reducer: The reducer of the unwrapped part.
    ///   - ifMissing: Called with each action for the part while it is `nil`; by default,
    ///     ``UnmatchedChildAction/debugReport``.
    ///   - fileID: The file of the call, reported with unmatched actions.
    ///   - line: The line of the call, reported with unmatched actions.
    @inlinable
    public static func ifLet<Child, ChildAction>(
        _ keyPath: any WritableKeyPath<State, Child?> & Sendable,
        action extractor: some ActionExtractor<Action, ChildAction>,
        then reducer: Reducer<Child, ChildAction>,
        ifMissing: @escaping @Sendable (UnmatchedChildAction) -> Void = UnmatchedChildAction.debugReport,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> Reducer where Action: Sendable {
        let reduce = reducer.reduce
        let part = KeyPathWriter(keyPath)
        let site = (fileID: "\(fileID)", line: Int(line))
        return Reducer(mutating: { state, action in
            guard let local = extractor.extract(from: action) else { return }
            var found = true
            part.modify(&state) { child in
                if child == nil {
                    found = false
                } else {
                    reduce(&child!, local)
                }
            }
            if !found {
                ifMissing(
                    UnmatchedChildAction(
                        reason: .nilState,
                        key: nil,
                        action: action,
                        fileID: site.fileID,
                        line: site.line
                    )
                )
            }
        })
    }
}
