// What tests may ask a store about its internals (`package`: the library's own tests and SluiceTesting).

extension Store {
    /// The number of subscribers, streams included (for tests).
    package var subscriberCount: Int {
        core.lock.withLock { core.subscribers.count }
    }

    /// The number of handlers that run when the store goes away (for tests).
    package var teardownHandlerCount: Int {
        core.lifetime.handlerCount
    }
}
