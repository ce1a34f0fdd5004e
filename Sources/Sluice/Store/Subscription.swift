/// A registration of a store observer; notifications stop when it is cancelled or released.
///
/// Keep the subscription for as long as you want notifications: releasing it cancels it, so a discarded result
/// of ``Store/subscribe(_:)`` never calls its observer. A subscription does not keep its store alive.
///
/// Subscriptions are `Hashable` by identity, so a set of them can hold a screen's or a service's observers.
public final class Subscription: Sendable, Hashable {
    private let onCancel: @Sendable () -> Void

    @usableFromInline
    init<State, Action>(core: StoreCore<State, Action>, id: UInt64) {
        onCancel = { core.unsubscribe(id) }
    }

    /// Creates a subscription that runs `onCancel` when it is cancelled or released.
    ///
    /// `onCancel` may run more than once (from `cancel()` and again from `deinit`): it must be idempotent.
    package init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    deinit {
        onCancel()
    }

    /// Stops the notifications.
    ///
    /// No notification starts for an action reduced after `cancel()` returns. Calling it again does nothing;
    /// calling it from inside a notification takes effect from the next action.
    public func cancel() {
        onCancel()
    }

    public static func == (lhs: Subscription, rhs: Subscription) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
