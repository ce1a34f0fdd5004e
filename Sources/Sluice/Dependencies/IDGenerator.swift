#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Makes identifiers, as a dependency: `api.dependencies.makeID()`.
///
/// Live, each call returns a random `UUID`. In a test context the default is ``incrementing()``: `UUID`s that count
/// from `00000000-0000-0000-0000-000000000000`, starting afresh for each test container, so a test can name the
/// ids that its actions will carry.
public struct IDGenerator: Sendable {
    private let make: @Sendable () -> UUID

    /// A generator that calls `make` for each id.
    public init(_ make: @escaping @Sendable () -> UUID) {
        self.make = make
    }

    /// A new id.
    public func callAsFunction() -> UUID {
        make()
    }

    /// Random ids, `UUID()`.
    public static var live: IDGenerator {
        IDGenerator { UUID() }
    }

    /// Ids that count up from zero: `00000000-0000-0000-0000-000000000000`, then `…-000000000001`, and so on; each
    /// call of `incrementing()` makes a generator with its own count. Safe from any thread.
    public static func incrementing() -> IDGenerator {
        let count = Locked<UInt64>(0)
        return IDGenerator {
            UUID(
                counting: count.withLock { count in
                    defer { count &+= 1 }
                    return count
                }
            )
        }
    }
}

extension UUID {
    /// The UUID whose last 64 bits are `count`, big-endian, and whose other bits are zero.
    fileprivate init(counting count: UInt64) {
        let b = withUnsafeBytes(of: count.bigEndian) { Array($0) }
        self.init(uuid: (0, 0, 0, 0, 0, 0, 0, 0, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]))
    }
}

extension StoreDependencies {
    /// Makes ids; see ``IDGenerator``. Live: random `UUID`s; test: ``IDGenerator/incrementing()``.
    public var makeID: IDGenerator {
        get { self[IDGeneratorKey.self] }
        set { self[IDGeneratorKey.self] = newValue }
    }
}

private enum IDGeneratorKey: StoreDependencyKey {
    static let liveValue = IDGenerator.live
    /// Computed: each test container builds its own, and keeps it (see ``StoreDependencyKey/testValue``).
    static var testValue: IDGenerator { .incrementing() }
}
