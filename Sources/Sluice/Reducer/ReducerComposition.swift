// The composition functions as static members of `Reducer`, so that they are found where a reducer is expected
// (`let app: Reducer<AppState, AppAction> = .combine(.withKey(\.orders, use: ordersReducer), ...)`) and listed on the
// type's page. Each forwards to the free function of the same meaning, which stays the reference.

extension Reducer {
    /// Combines reducers of the same state and action into one that runs them left to right; the member form of
    /// ``combineReducers(_:)-(Reducer<State,Action>...)``.
    ///
    /// ```swift
    /// let app: Reducer<AppState, AppAction> = .combine(
    ///     .withKey(\.orders, use: ordersReducer),
    ///     .withKey(\.inventory, use: inventoryReducer)
    /// )
    /// ```
    ///
    /// - Parameter reducers: The reducers; each receives the state that the previous one produced.
    public static func combine(_ reducers: Reducer...) -> Reducer {
        combineReducers(reducers)
    }

    /// Combines an array of reducers into one that runs them in array order; the member form of
    /// ``combineReducers(_:)-([Reducer<State,Action>])``.
    ///
    /// - Parameter reducers: The reducers; each receives the state that the previous one produced.
    public static func combine(_ reducers: [Reducer]) -> Reducer {
        combineReducers(reducers)
    }

    /// Runs a reducer of a part of the state, found by key path, for every action; the member form of
    /// ``withKey(_:use:)``.
    ///
    /// - Parameters:
    ///   - keyPath: Where the part lives in the state.
    ///   - reducer: The reducer of the part; it sees every action.
    @inlinable
    public static func withKey<Substate>(
        _ keyPath: any WritableKeyPath<State, Substate> & Sendable,
        use reducer: Reducer<Substate, Action>
    ) -> Reducer {
        Sluice.withKey(keyPath, use: reducer)
    }

    /// Runs a reducer of a part of the state with its own action type, for the actions that it accepts; the member
    /// form of ``Sluice/withKey(_:action:use:)-(_,(Action)->LocalAction?,_)``.
    ///
    /// - Parameters:
    ///   - keyPath: Where the part lives in the state.
    ///   - toLocal: Returns the child's action for an action, or `nil` to skip the child.
    ///   - reducer: The reducer of the part.
    @inlinable
    public static func withKey<Substate, LocalAction>(
        _ keyPath: any WritableKeyPath<State, Substate> & Sendable,
        action toLocal: @escaping @Sendable (Action) -> LocalAction?,
        use reducer: Reducer<Substate, LocalAction>
    ) -> Reducer {
        Sluice.withKey(keyPath, action: toLocal, use: reducer)
    }

    /// Runs a reducer of a part of the state with its own action type, for the actions that it accepts, with an
    /// extractor type instead of a closure; the member form of
    /// ``Sluice/withKey(_:action:use:)-(_,ActionExtractor<Action,LocalAction>,_)``.
    ///
    /// - Parameters:
    ///   - keyPath: Where the part lives in the state.
    ///   - extractor: Extracts the child's action from an action, or `nil` to skip the child.
    ///   - reducer: The reducer of the part.
    @inlinable
    public static func withKey<Substate, LocalAction>(
        _ keyPath: any WritableKeyPath<State, Substate> & Sendable,
        action extractor: some ActionExtractor<Action, LocalAction>,
        use reducer: Reducer<Substate, LocalAction>
    ) -> Reducer {
        Sluice.withKey(keyPath, action: extractor, use: reducer)
    }
}
