import CSluiceSupport

extension Middlewares {
    /// Which actions ``logging(diff:maxChanges:maxLineLength:sampling:include:sink:)`` logs, among those it
    /// includes.
    ///
    /// Sampling is deterministic: it counts the included actions of each store, from the first one, and picks
    /// the same positions every run. The first included action is always logged.
    ///
    /// ```swift
    /// Middlewares.logging(sampling: .every(100))   // the 1st, 101st, 201st, ... action
    /// Middlewares.logging(sampling: .rate(0.3))    // 3 actions in 10, evenly spread: the 1st, 5th, 8th, 11th, ...
    /// ```
    public struct LogSampling: Sendable, Equatable {
        enum Kind: Equatable {
            case all
            case every(UInt64)
            case rate(Double)
        }

        let kind: Kind

        /// Logs every action.
        public static let all = LogSampling(kind: .all)

        /// Logs one action in `n`: the 1st, the `n + 1`th, the `2n + 1`th, and so on.
        ///
        /// - Parameter n: The period; at least 1 (`.every(1)` is ``all``).
        public static func every(_ n: Int) -> LogSampling {
            if n < 1 {
                usageError("Middlewares.LogSampling.every: n must be at least 1, got \(n).")
            }
            return n == 1 ? .all : LogSampling(kind: .every(UInt64(n)))
        }

        /// Logs the given fraction of the actions, spread evenly: action `k` (counting from 0) is logged when
        /// `floor(k * fraction)` differs from `floor((k - 1) * fraction)`.
        ///
        /// - Parameter fraction: Greater than 0 and at most 1 (`.rate(1)` is ``all``).
        public static func rate(_ fraction: Double) -> LogSampling {
            if !(fraction > 0 && fraction <= 1) {
                usageError(
                    "Middlewares.LogSampling.rate: fraction must be greater than 0 and at most 1, got \(fraction)."
                )
            }
            return fraction == 1 ? .all : LogSampling(kind: .rate(fraction))
        }

        func makeSampler() -> LogSampler? {
            kind == .all ? nil : LogSampler(kind)
        }
    }
}

/// Counts the included actions of one store and picks those to log.
///
/// The count is an atomic word although the store serializes its dispatches: a middleware before this one may
/// call `next` from another thread.
final class LogSampler: @unchecked Sendable {
    // @unchecked: `count` is allocated in `init`, freed in `deinit`, and only ever accessed through the C11 atomic
    // function of CSluiceSupport.
    private let count: UnsafeMutablePointer<UInt64>
    private let kind: Middlewares.LogSampling.Kind

    init(_ kind: Middlewares.LogSampling.Kind) {
        self.kind = kind
        count = .allocate(capacity: 1)
        count.initialize(to: 0)
    }

    deinit {
        count.deallocate()
    }

    /// Counts one action and returns whether to log it.
    func shouldLog() -> Bool {
        let index = csluice_counter_next(count)
        switch kind {
        case .all:
            return true
        case .every(let period):
            return index % period == 0
        case .rate(let fraction):
            guard index > 0 else { return true }
            return (Double(index) * fraction).rounded(.down) != (Double(index - 1) * fraction).rounded(.down)
        }
    }
}
