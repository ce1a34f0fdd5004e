public import Observation

/// `Store` works with Observation: reading ``Store/state`` inside `withObservationTracking` (or a SwiftUI view's
/// `body`) registers the read, and the next action that the store reduces reports a change.
///
/// Observation tracking is one-shot: after a change is reported, the observer reads `state` again to be told about
/// the next one. The store relies on that to keep its dispatch cheap: it tells Observation about a change only if
/// `state` was read since the previous change. See <doc:ConsumingState>.
extension Store: Observable {}

/// The Observation side of a store: the registrar, and the subject and key path that stand for "the state".
///
/// The registrar identifies observers by key path and calls them on the thread that reports the change; the subject
/// passed to it only supplies the key path's root type. That lets the core report changes without a reference to
/// its ``Store`` (which it must not keep alive).
@usableFromInline
final class StoreObservation: Observable, Sendable {
    private let registrar = ObservationRegistrar()

    /// The key path the registrar files observers of the state under.
    ///
    /// Formed once: a key path literal is built again on each use.
    nonisolated(unsafe) private static let stateKeyPath: KeyPath<StoreObservation, Void> = \.state
    // nonisolated(unsafe): a `let` that is never mutated; key paths are immutable.

    /// Stands for the store's state in the registrar; its value is irrelevant.
    private var state: Void { () }

    @usableFromInline
    init() {}

    /// Registers a read of the state with the observation tracking of the calling thread, if any.
    @usableFromInline
    func access() {
        registrar.access(self, keyPath: Self.stateKeyPath)
    }

    /// Reports a change of the state to every observer that tracked a read of it.
    @usableFromInline
    func stateDidChange() {
        registrar.withMutation(of: self, keyPath: Self.stateKeyPath) {}
    }
}

extension Store {
    /// Whether ``state`` was read since the last reduced action, so that the next one reports a change (for tests).
    package var isObservedSinceLastChange: Bool {
        core.lock.withLock { core.observedSinceLastChange }
    }
}
