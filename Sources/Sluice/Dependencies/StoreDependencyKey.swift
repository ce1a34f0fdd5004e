/// Declares one dependency of a store: its type and the value that a store uses when nobody set it.
///
/// Declare a key, then a property in an extension of ``StoreDependencies`` that reads and writes it, in the manner
/// of SwiftUI's `EnvironmentValues`:
///
/// ```swift
/// private enum PaymentGatewayKey: StoreDependencyKey {
///     static let liveValue: any PaymentGateway = StripeGateway()
///     static let testValue: any PaymentGateway = AcceptingGateway()
/// }
///
/// extension StoreDependencies {
///     var paymentGateway: any PaymentGateway {
///         get { self[PaymentGatewayKey.self] }
///         set { self[PaymentGatewayKey.self] = newValue }
///     }
/// }
/// ```
///
/// ``liveValue`` is required; ``testValue`` is optional. A key without a test value that is read in a test context
/// (``StoreDependencies/test(onMissingTestValue:_:)``) is reported instead of being used silently: see
/// ``MissingTestValue``. Both are read lazily, at the first read of the key that needs them, never when a store is
/// created; a `static let` is built once per process.
public protocol StoreDependencyKey: SendableMetatype {
    /// The type of the dependency.
    associatedtype Value: Sendable

    /// The value in a live context (``StoreDependencies/Context/live``), unless a store or a region sets another.
    ///
    /// It may throw when it cannot be built (a configuration file is missing, say): the first read of the key then
    /// stops the program with a message that names the key and the error. Stores that never read the key are not
    /// affected.
    static var liveValue: Value { get throws }

    /// The value in a test context (``StoreDependencies/Context/test``), unless the test sets another.
    ///
    /// Optional: a key that declares none has no test value, and reading it in a test context is reported (see
    /// ``MissingTestValue``). A test value is built once per test container and then kept, so a stateful one (an
    /// incrementing id generator) starts afresh in each test.
    static var testValue: Value { get throws }
}

extension StoreDependencyKey {
    /// No test value: reading the key in a test context is reported (see ``MissingTestValue``).
    public static var testValue: Value {
        get throws { throw NoTestValue() }
    }
}

/// Thrown by the default ``StoreDependencyKey/testValue``: the key declares no test value.
@usableFromInline
struct NoTestValue: Error {}
