/// What a container in a test context shares between its copies: the test values built so far, and the handler
/// of reads of keys without one.
///
/// Test values are kept per container (and so per test store), not per process: a stateful test value (an
/// incrementing id generator) starts afresh in each test and is shared by every read within one.
///
@usableFromInline
final class DependencyTestContext: Sendable {
    private let values: Locked<[ObjectIdentifier: any AnyObject & Sendable]>
    let onMissingTestValue: (@Sendable (MissingTestValue) -> Void)?

    init(
        values: [ObjectIdentifier: any AnyObject & Sendable] = [:],
        onMissingTestValue: (@Sendable (MissingTestValue) -> Void)?
    ) {
        self.values = Locked(values)
        self.onMissingTestValue = onMissingTestValue
    }

    /// A context with the test values built so far and `handler` called for each read of a key without one, before
    /// this context's own handler (if any).
    func reporting(to handler: @escaping @Sendable (MissingTestValue) -> Void) -> DependencyTestContext {
        let previous = onMissingTestValue
        return DependencyTestContext(values: values.withLock { $0 }) { missing in
            handler(missing)
            previous?(missing)
        }
    }

    /// The test value of `Key`, built at its first read; a key without one is reported and read live.
    @usableFromInline
    func value<Key: StoreDependencyKey>(_ key: Key.Type, action: (any Sendable)?) -> Key.Value {
        let id = ObjectIdentifier(key)
        if let box = values.withLock({ $0[id] }) {
            return unsafeDowncast(box, to: DependencyBox<Key.Value>.self).value
        }
        // Built outside the lock: a test value may read other dependencies.
        let built: Key.Value
        do {
            built = try Key.testValue
        } catch is NoTestValue {
            // A read through `api.dependencies` carries no action; inside the work that a store of this context
            // started for an action (an async side effect, a scheduled run), the task-local binding names it.
            let bound = StoreDependencies.bound.storage
            let cause: (any Sendable)? = action ?? (bound.testContext === self ? bound.action : nil)
            let missing = MissingTestValue(key: String(describing: key), action: cause)
            guard let onMissingTestValue else { usageError(missing.message) }
            onMissingTestValue(missing)
            return StoreDependencies.liveValue(of: key)
        } catch {
            usageError("StoreDependencies: the test value of \(String(describing: key)) could not be built: \(error).")
        }
        let box = values.withLock { values -> any AnyObject & Sendable in
            if let first = values[id] { return first }  // another thread built it first: keep one value
            let box = DependencyBox(built)
            values[id] = box
            return box
        }
        return unsafeDowncast(box, to: DependencyBox<Key.Value>.self).value
    }
}

/// One dependency value, boxed so that a container holds values of any type in one array and reads them back
/// without a dynamic cast.
@usableFromInline
final class DependencyBox<Value: Sendable>: Sendable {
    @usableFromInline
    let value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }
}
