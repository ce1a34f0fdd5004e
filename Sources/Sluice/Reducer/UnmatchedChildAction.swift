/// An action that a child reducer could not apply: the element it addresses is missing, or the optional part of
/// the state it is for is `nil`.
///
/// ``Reducer/forEach(_:action:element:ifMissing:fileID:line:)-ojl6`` and
/// ``Reducer/ifLet(_:action:then:ifMissing:fileID:line:)-(_,(Action)->ChildAction?,_,_,_,_)`` never crash on such an action: the state is left as it
/// is and the action is reported to their `ifMissing` handler. The default handler,
/// ``UnmatchedChildAction/debugReport``, writes one line to standard error in a debug build and does nothing in a
/// release build. An action for an element that was just removed is usually a race worth seeing (a response that
/// arrives after its order was cancelled), rarely a bug worth stopping the program for.
///
/// ```swift
/// let orders: Reducer<AppState, AppAction> = .forEach(\.orders, action: orderAction, element: orderReducer,
///     ifMissing: { unmatched in metrics.increment("order.unmatched") })
/// ```
public struct UnmatchedChildAction: Sendable, CustomStringConvertible {
    /// Why the child reducer did not run.
    public enum Reason: Sendable, Hashable {
        /// `forEach`: no element has the key or id that the action addresses.
        case missingElement
        /// `ifLet`: the optional part of the state is `nil`.
        case nilState
    }

    /// Why the child reducer did not run.
    public let reason: Reason
    /// The key or id that the action addressed (`forEach`), or `nil` (`ifLet`).
    public let key: (any Hashable & Sendable)?
    /// The parent action.
    public let action: any Sendable
    /// The file of the `forEach` or `ifLet` call that made the reducer.
    public let fileID: String
    /// The line of that call.
    public let line: Int

    /// Creates a report (for tests of handlers).
    public init(reason: Reason, key: (any Hashable & Sendable)?, action: any Sendable, fileID: String, line: Int) {
        self.reason = reason
        self.key = key
        self.action = action
        self.fileID = fileID
        self.line = line
    }

    /// One line for people, e.g.
    /// `Sluice: forEach at App/Orders.swift:12 ignored ship(id: 7): no element with key 7`.
    public var description: String {
        switch reason {
        case .missingElement:
            let key = key.map { String(describing: $0) } ?? "?"
            return "Sluice: forEach at \(fileID):\(line) ignored \(action): no element with key \(key)"
        case .nilState:
            return "Sluice: ifLet at \(fileID):\(line) ignored \(action): the state is nil"
        }
    }

    /// The default handler: writes ``description`` to standard error in a debug build of Sluice; does nothing in a
    /// release build.
    public static let debugReport: @Sendable (UnmatchedChildAction) -> Void = { unmatched in
        #if DEBUG
        Middlewares.writeToStandardError(unmatched.description)
        #endif
    }

    /// A handler that does nothing: the action is ignored silently.
    public static let ignore: @Sendable (UnmatchedChildAction) -> Void = { _ in }
}
