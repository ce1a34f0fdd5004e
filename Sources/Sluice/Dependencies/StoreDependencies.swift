/// The services that a store's middleware, side effects and effects use: a value-typed, `Sendable` container keyed
/// by types, read and written through properties that extensions declare.
///
/// Give a store its dependencies when you create it, read them from a ``MiddlewareAPI``, and, inside the work that
/// a store starts (async side effects, effects, scheduled runs of time modifiers), from ``current``:
///
/// ```swift
/// let store = Store<Shop, ShopAction>(
///     initialState: Shop(),
///     reducer: shopReducer,
///     middleware: [checkout],
///     dependencies: StoreDependencies { $0.paymentGateway = StripeGateway(apiKey: apiKey) }
/// )
/// // in `checkout`:          api.dependencies.paymentGateway
/// // in a helper it calls:   StoreDependencies.current.paymentGateway
/// ```
///
/// A key that nobody set reads its ``StoreDependencyKey/liveValue`` in a live container and its
/// ``StoreDependencyKey/testValue`` in a test container (``test(onMissingTestValue:_:)``). Setting a key on a copy
/// never changes the original: a container is a value.
///
/// Reading a key that was set is a scan of the keys set (a handful, typically) and a load; reading one that was not
/// is a load of the key's `static let`. See <doc:ServicesAndDependencies>.
public struct StoreDependencies: Sendable {
    /// Which default a key that was not set reads.
    public enum Context: Sendable, Hashable {
        /// ``StoreDependencyKey/liveValue``.
        case live
        /// ``StoreDependencyKey/testValue``; a key without one is reported (see ``MissingTestValue``).
        case test
    }

    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline
        let id: ObjectIdentifier
        @usableFromInline
        let box: any AnyObject & Sendable

        @usableFromInline
        init(id: ObjectIdentifier, box: any AnyObject & Sendable) {
            self.id = id
            self.box = box
        }
    }

    /// The keys that were set, in the order they were first set. A linear scan beats hashing for the few keys that
    /// a store sets, and reading an element is a load and a compare.
    @usableFromInline
    var entries: ContiguousArray<Entry> = []
    /// `nil` in a live context.
    @usableFromInline
    let testContext: DependencyTestContext?
    /// The action whose side effect is running, in a test context only (for the report of a missing test value).
    @usableFromInline
    var action: (any Sendable)?

    /// An empty live container: every key reads its ``StoreDependencyKey/liveValue``.
    public init() {
        testContext = nil
    }

    /// A live container with the keys that `configure` sets.
    ///
    /// ```swift
    /// let dependencies = StoreDependencies { $0.paymentGateway = StripeGateway(apiKey: apiKey) }
    /// ```
    public init(_ configure: (inout StoreDependencies) throws -> Void) rethrows {
        self.init()
        try configure(&self)
    }

    private init(testContext: DependencyTestContext) {
        self.testContext = testContext
    }

    /// A container for a test: a key that was not set reads its ``StoreDependencyKey/testValue``.
    ///
    /// A key without a test value that is read is reported to `onMissingTestValue` (a test store fails the test
    /// there) and then read live; without a handler the read stops the program with the report's message.
    ///
    /// ```swift
    /// let dependencies = StoreDependencies.test { $0.paymentGateway = DecliningGateway() }
    /// ```
    ///
    /// - Parameters:
    ///   - onMissingTestValue: Called for each read of a key that has no test value and was not set.
    ///   - configure: Sets the dependencies of the test.
    public static func test(
        onMissingTestValue: (@Sendable (MissingTestValue) -> Void)? = nil,
        _ configure: (inout StoreDependencies) throws -> Void
    ) rethrows -> StoreDependencies {
        var dependencies = StoreDependencies(testContext: DependencyTestContext(onMissingTestValue: onMissingTestValue))
        try configure(&dependencies)
        return dependencies
    }

    /// A container for a test in which nothing is set yet; see ``test(onMissingTestValue:_:)``.
    ///
    /// - Parameter onMissingTestValue: Called for each read of a key that has no test value and was not set.
    public static func test(onMissingTestValue: (@Sendable (MissingTestValue) -> Void)? = nil) -> StoreDependencies {
        StoreDependencies(testContext: DependencyTestContext(onMissingTestValue: onMissingTestValue))
    }

    /// Whether a key that was not set reads its live or its test value.
    public var context: Context {
        testContext == nil ? .live : .test
    }

    /// The dependency of `key`: the value set in this container, or else the key's live or test value.
    ///
    /// Declare a property in an extension that reads and writes through this subscript; callers use the property.
    @inlinable
    public subscript<Key: StoreDependencyKey>(key: Key.Type) -> Key.Value {
        get {
            let id = ObjectIdentifier(key)
            for entry in entries where entry.id == id {
                return unsafeDowncast(entry.box, to: DependencyBox<Key.Value>.self).value
            }
            if let testContext {
                return testContext.value(key, action: action)
            }
            return Self.liveValue(of: key)
        }
        set {
            let id = ObjectIdentifier(key)
            let entry = Entry(id: id, box: DependencyBox(newValue))
            if let index = entries.firstIndex(where: { $0.id == id }) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
        }
    }

    /// The value of `key` if it was set in this container.
    func valueIfSet<Key: StoreDependencyKey>(_ key: Key.Type) -> Key.Value? {
        let id = ObjectIdentifier(key)
        for entry in entries where entry.id == id {
            return unsafeDowncast(entry.box, to: DependencyBox<Key.Value>.self).value
        }
        return nil
    }

    /// The live value of `key`; a live value that cannot be built stops the program, naming the key.
    @inlinable
    static func liveValue<Key: StoreDependencyKey>(of key: Key.Type) -> Key.Value {
        do {
            return try Key.liveValue
        } catch {
            liveValueFailed(key, error)
        }
    }

    @usableFromInline
    static func liveValueFailed(_ key: Any.Type, _ error: any Error) -> Never {
        usageError("StoreDependencies: the live value of \(String(describing: key)) could not be built: \(error).")
    }

    /// Whether nothing was set and the context is live: a store with these dependencies need not bind them.
    @inlinable
    var isEmptyLive: Bool {
        entries.isEmpty && testContext == nil
    }
}
