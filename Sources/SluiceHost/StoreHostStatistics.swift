/// Counts of what a ``StoreHost`` did since it was created.
public struct StoreHostStatistics: Sendable, Hashable {
    /// The stores that are active now, or being activated or passivated: the ones that hold memory.
    public var liveStores: Int
    /// The stores activated: recovered from their journal (or started from their initial state) and kept.
    public var activations: Int
    /// The activations that failed (the journal could not be opened or recovered, or the ownership hook refused).
    public var failedActivations: Int
    /// The stores passivated after their idle time.
    public var idlePassivations: Int
    /// The stores passivated to make room under the active limit.
    public var limitPassivations: Int
    /// The stores passivated by ``StoreHost/passivate(_:)`` or by ``StoreHost/shutdown()``.
    public var requestedPassivations: Int

    /// Creates statistics.
    public init(
        liveStores: Int = 0,
        activations: Int = 0,
        failedActivations: Int = 0,
        idlePassivations: Int = 0,
        limitPassivations: Int = 0,
        requestedPassivations: Int = 0
    ) {
        self.liveStores = liveStores
        self.activations = activations
        self.failedActivations = failedActivations
        self.idlePassivations = idlePassivations
        self.limitPassivations = limitPassivations
        self.requestedPassivations = requestedPassivations
    }

    /// Every passivation, whatever its reason.
    public var passivations: Int {
        idlePassivations + limitPassivations + requestedPassivations
    }
}
