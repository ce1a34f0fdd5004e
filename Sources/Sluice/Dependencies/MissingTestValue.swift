/// A read, in a test context, of a dependency that has no test value and was not set by the test.
///
/// A handler given to ``StoreDependencies/test(onMissingTestValue:_:)`` receives it; a test store installs one that
/// fails the test (Swift Testing's `Issue.record`), naming the key and the action being processed. The read then
/// returns the key's live value so that the test can go on to its end; declare a ``StoreDependencyKey/testValue``
/// or set the dependency in the test to keep live services out of tests. Without a handler, such a read stops the program with ``message``.
public struct MissingTestValue: Sendable, CustomStringConvertible {
    /// The key's type name, e.g. `PaymentGatewayKey`.
    public let key: String
    /// The action whose async side effect or scheduled time-modifier run read the dependency (through
    /// ``StoreDependencies/current`` or ``MiddlewareAPI/dependencies``); `nil` for other reads: a synchronous
    /// middleware, an effect, a helper outside store work (a test store fills in the action it is processing).
    public let action: (any Sendable)?

    init(key: String, action: (any Sendable)?) {
        self.key = key
        self.action = action
    }

    /// What went wrong and how to fix it, naming the key and, when known, the action.
    public var message: String {
        let during = action.map { " while processing \(String(reflecting: $0))" } ?? ""
        return
            "StoreDependencies: \(key) has no test value and was read in a test context\(during). Declare a "
            + "`testValue` for \(key), or set this dependency in the test's dependencies."
    }

    public var description: String { message }
}
