/// A random number generator, as a dependency: `api.dependencies.random`.
///
/// Live, the system's generator; in a test context the default is ``seeded(_:)`` with seed 0, so a test sees the
/// same numbers on every run. Copies share one sequence (a seeded source gives each number once, from any thread).
///
/// ```swift
/// var random = api.dependencies.random
/// let delay = Int.random(in: 100...200, using: &random)
/// ```
public struct RandomSource: RandomNumberGenerator, Sendable {
    private let generator: Generator

    private init(_ generator: Generator) {
        self.generator = generator
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        generator.next()
    }

    /// The system's generator (`SystemRandomNumberGenerator`): the live value, named as ``DateProvider/live`` and
    /// ``IDGenerator/live`` are.
    public static var live: RandomSource {
        RandomSource(.system)
    }

    /// A reproducible generator (SplitMix64) that starts from `seed`: the same seed gives the same numbers.
    public static func seeded(_ seed: UInt64) -> RandomSource {
        RandomSource(.seeded(SplitMix64(state: seed)))
    }

    /// The seeded state behind its lock; the system generator has no state.
    private final class Generator: Sendable {
        private let seeded: Locked<SplitMix64?>

        private init(seeded: SplitMix64?) {
            self.seeded = Locked(seeded)
        }

        static var system: Generator { Generator(seeded: nil) }

        static func seeded(_ generator: SplitMix64) -> Generator { Generator(seeded: generator) }

        func next() -> UInt64 {
            seeded.withLock { seeded in
                if seeded != nil {
                    return seeded!.next()
                }
                var system = SystemRandomNumberGenerator()
                return system.next()
            }
        }
    }
}

/// Sebastiano Vigna's SplitMix64: small, fast, and good enough for reproducible test data.
private struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension StoreDependencies {
    /// Random numbers; see ``RandomSource``. Live: the system's; test: ``RandomSource/seeded(_:)`` with seed 0.
    public var random: RandomSource {
        get { self[RandomKey.self] }
        set { self[RandomKey.self] = newValue }
    }
}

private enum RandomKey: StoreDependencyKey {
    static let liveValue = RandomSource.live
    /// Computed: each test container builds its own, and keeps it.
    static var testValue: RandomSource { .seeded(0) }
}
