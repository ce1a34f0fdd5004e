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

    /// Everything a container holds, in one immutable object: copying a container is one retain, and setting a key
    /// makes a new storage (keys are set when a store is configured, read on every use).
    @usableFromInline
    var storage: DependencyStorage

    /// An empty live container: every key reads its ``StoreDependencyKey/liveValue``.
    public init() {
        storage = DependencyStorage.emptyLive
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

    init(storage: DependencyStorage) {
        self.storage = storage
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
        var dependencies = test(onMissingTestValue: onMissingTestValue)
        try configure(&dependencies)
        return dependencies
    }

    /// A container for a test in which nothing is set yet; see ``test(onMissingTestValue:_:)``.
    ///
    /// - Parameter onMissingTestValue: Called for each read of a key that has no test value and was not set.
    public static func test(onMissingTestValue: (@Sendable (MissingTestValue) -> Void)? = nil) -> StoreDependencies {
        let context = DependencyTestContext(onMissingTestValue: onMissingTestValue)
        return StoreDependencies(storage: DependencyStorage(entries: [], testContext: context, action: nil))
    }

    /// Whether a key that was not set reads its live or its test value.
    public var context: Context {
        storage.testContext == nil ? .live : .test
    }

    /// The dependency of `key`: the value set in this container, or else the key's live or test value.
    ///
    /// Declare a property in an extension that reads and writes through this subscript; callers use the property.
    @inlinable
    public subscript<Key: StoreDependencyKey>(key: Key.Type) -> Key.Value {
        get {
            if let value = storage.value(ifSet: key) {
                return value
            }
            if let testContext = storage.testContext {
                return testContext.value(key, action: storage.action)
            }
            return Self.liveValue(of: key)
        }
        set {
            storage = storage.setting(DependencyBox(newValue), for: ObjectIdentifier(key))
        }
    }

    /// The value of `key` if it was set in this container.
    func valueIfSet<Key: StoreDependencyKey>(_ key: Key.Type) -> Key.Value? {
        storage.value(ifSet: key)
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

    /// Whether nothing was set and the context is live: every key reads its live value.
    @inlinable
    var isEmptyLive: Bool {
        storage.entries.isEmpty && storage.testContext == nil
    }

    /// These dependencies with `handler` called, before the handler they had, for each read of a key without a test
    /// value (a test store fails its test there); in a live context, these dependencies.
    package func reportingMissingTestValues(
        to handler: @escaping @Sendable (MissingTestValue) -> Void
    ) -> StoreDependencies {
        guard let testContext = storage.testContext else { return self }
        return StoreDependencies(
            storage: DependencyStorage(
                entries: storage.entries,
                testContext: testContext.reporting(to: handler),
                action: storage.action
            )
        )
    }

    /// These dependencies with `action` recorded as the cause of reads, in a test context (for the report of a
    /// missing test value); in a live context, these dependencies.
    func causedBy(_ action: (any Sendable)?) -> StoreDependencies {
        guard storage.testContext != nil else { return self }
        return StoreDependencies(
            storage: DependencyStorage(entries: storage.entries, testContext: storage.testContext, action: action)
        )
    }
}
