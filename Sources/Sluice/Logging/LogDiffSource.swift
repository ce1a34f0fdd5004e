/// What the logging middleware compares before and after a logged action: nothing, the whole state, or the parts
/// of it that a projection returns.
///
/// The value compared is read before the action and held while the rest of the chain runs. The whole state then
/// shares its collections' storage with the store, so a reducer that changes one in place copies it; a projection
/// holds only what it returns.
package struct LogDiffSource<State: Sendable, Action: Sendable>: Sendable {
    /// Reads the value to compare, or `nil` for no diff.
    let capture: (@Sendable (MiddlewareAPI<State, Action>, Action) -> Any)?
    /// The name of a change of the compared value as a whole (it has no path of its own).
    let rootName: String

    /// No diff: the state is never read.
    package static var none: LogDiffSource {
        LogDiffSource(capture: nil, rootName: "state")
    }

    /// The whole state, its changes named from `state`.
    package static var wholeState: LogDiffSource {
        LogDiffSource(capture: { api, _ in api.state }, rootName: "state")
    }

    /// What `parts` returns for the state and the action, its changes named by its labels (`value` as a whole).
    ///
    /// The state is read as a copy that is released before the action runs: only the result is held.
    package static func parts<Parts>(_ parts: @escaping @Sendable (State, Action) -> Parts) -> LogDiffSource {
        LogDiffSource(capture: { api, action in parts(api.state, action) }, rootName: "value")
    }
}
