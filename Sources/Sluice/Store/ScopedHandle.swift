/// The handle of a part of another handle's state, found by key path: the handle behind a ``ScopedStore`` and a
/// ``Store/values(of:)`` stream.
///
/// Reads borrow the part where it lives in the parent's state when the key path is a chain of stored properties;
/// subscribers and sends go to the parent. The parent is held as an existential so that a scope of a scope is one
/// more level, whatever the store's state type.
struct ScopedHandle<Parent: Sendable, State: Sendable, Action: Sendable>: StoreHandle {
    let parent: any StoreHandle<Parent, Action>
    let part: KeyPathReader<Parent, State>

    init(parent: some StoreHandle<Parent, Action>, keyPath: any KeyPath<Parent, State> & Sendable) {
        self.parent = parent
        self.part = KeyPathReader(keyPath)
    }

    func withStatePointer<T, E: Error>(
        tracked: Bool,
        _ body: (UnsafePointer<State>) throws(E) -> T
    ) throws(E) -> T {
        let part = self.part
        return try parent.withStatePointer(tracked: tracked) { (state) throws(E) -> T in
            try part.withPointer(in: state, body)
        }
    }

    func addSubscriber(_ makeObserver: (borrowing State) -> StateObserver<State>) -> Subscription {
        let part = self.part
        return parent.addSubscriber { state in
            let observer = makeObserver(part(state))
            // The part is read in place, where the parent's state lies: not copied out of it.
            return { state in part.withPointer(in: state, observer) }
        }
    }

    @discardableResult
    func dispatchFromAPI(_ action: Action) -> Bool {
        parent.dispatchFromAPI(action)
    }

    nonisolated(nonsending) func sendThroughChain(_ action: Action) async -> StoreTask {
        await parent.sendThroughChain(action)
    }

    var storeLifetime: Cancellation {
        parent.storeLifetime
    }

    var dependencies: StoreDependencies {
        parent.dependencies
    }
}
