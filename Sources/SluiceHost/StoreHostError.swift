public import SluiceJournal

/// Why a ``StoreHost`` did not take a request.
///
/// A request that fails with one of these was not applied, except where a case says otherwise: the host never hands
/// an action to a store that is shut down or passivated, and never drops one silently.
public enum StoreHostError: Error, CustomStringConvertible {
    /// The host was shut down (``StoreHost/shutdown()``): it takes no more requests.
    case shutDown
    /// The store of the id could not be activated: its journal could not be opened or recovered. The next request
    /// for the id tries again.
    case activationFailed(id: String, error: JournalError)
    /// The ownership hook refused to let this process activate the store of the id (another process owns it); the
    /// error is the one that the hook threw.
    case notOwned(id: String, reason: any Error)
    /// The action was handed to the store, but its durable acknowledgement failed: the journal stopped or closed
    /// before the action was on stable storage (the action may be in the state), or a middleware dropped the action.
    case notDurable(JournalError)
    /// The task was cancelled while it waited: for the store (the action was not applied), or, in
    /// ``StoreHost/sendDurably(_:to:)``, for the action's durability (the action was applied and may become durable).
    case cancelled

    /// What went wrong, in a sentence that names the id where there is one.
    public var description: String {
        switch self {
        case .shutDown:
            "the store host is shut down and takes no more requests"
        case .activationFailed(let id, let error):
            "the store \(id) could not be activated: \(error)"
        case .notOwned(let id, let reason):
            "this process may not activate the store \(id): \(reason)"
        case .notDurable(let error):
            "the action is not acknowledged as durable: \(error)"
        case .cancelled:
            "the task was cancelled while it waited for the store or for the action's durability"
        }
    }
}
