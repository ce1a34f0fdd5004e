#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The current date (wall-clock time), as a dependency: `api.dependencies.date.now`.
///
/// For time intervals and timers use ``StoreDependencies/scheduler`` (monotonic); use this for what a user or a record
/// shows: a receipt's date, an order's creation time.
///
/// ```swift
/// let dependencies = StoreDependencies.test { $0.date = .constant(Date(timeIntervalSince1970: 1_700_000_000)) }
/// ```
public struct DateProvider: Sendable {
    private let read: @Sendable () -> Date

    /// A provider that calls `now` for each read.
    public init(_ now: @escaping @Sendable () -> Date) {
        read = now
    }

    /// The current date.
    public var now: Date {
        read()
    }

    /// The system's date, `Date()`.
    public static var live: DateProvider {
        DateProvider { Date() }
    }

    /// A provider that always answers `date`.
    public static func constant(_ date: Date) -> DateProvider {
        DateProvider { date }
    }
}

extension StoreDependencies {
    /// The current date; see ``DateProvider``. Live: the system's. It has no test value: a test that reads it sets
    /// it (``DateProvider/constant(_:)``), so that its results do not depend on when it runs.
    public var date: DateProvider {
        get { self[DateKey.self] }
        set { self[DateKey.self] = newValue }
    }
}

private enum DateKey: StoreDependencyKey {
    static let liveValue = DateProvider.live
}
