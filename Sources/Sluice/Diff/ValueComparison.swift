#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether two values are the same, found without describing them, in bounded depth and work.
///
/// A value is the same as another when their bytes are identical (for a class, an array, a dictionary or an
/// indirect enum: the same storage), when both are `Equatable` and `==`, or when both have the same type, the same
/// shape (enum case, count, labels) and the same parts, compared the same way, stopping at the first difference.
/// Values without parts (an enum case without payload) are compared by their descriptions. The walk goes at most
/// ``maxDepth`` levels deep and looks at most at ``maxVisits`` values (or fewer, when the caller has less to spend);
/// past that, the answer is ``Verdict/unknown``.
/// The parts of a set or a dictionary whose elements are not `Equatable` are not compared (their order can differ
/// between equal values): equal counts give ``Verdict/unknown``.
struct ValueComparison {
    enum Verdict {
        case same
        case different
        /// The walk reached its depth or work limit before it found a difference.
        case unknown
    }

    static let maxDepth = 32
    static let maxVisits = 1_024

    private var visits = 0
    private let visitLimit: Int

    private init(visitLimit: Int) {
        self.visitLimit = visitLimit
    }

    /// Compares `old` and `new`, looking at most at `maxVisits` values; returns the verdict and the values it
    /// looked at.
    static func compare(_ old: Any, _ new: Any, maxVisits: Int = Self.maxVisits) -> (verdict: Verdict, visits: Int) {
        var comparison = ValueComparison(visitLimit: min(maxVisits, Self.maxVisits))
        let verdict = comparison.compare(old, new, depth: 0)
        return (verdict, comparison.visits)
    }

    /// Whether `a` and `b` have the same type and the same bytes: the same value, held in the same storage.
    ///
    /// Cheap whatever the size of the value: a class instance, an array, a dictionary, a large string or an
    /// indirect enum case is a reference, so this compares a few words and never reads the storage.
    static func isIdentical(_ a: Any, _ b: Any) -> Bool {
        guard type(of: a) == type(of: b) else { return false }
        func sameBytes<Value>(_ a: Value) -> Bool {
            guard let b = b as? Value else { return false }
            return Self.sameBytes(a, b)
        }
        return sameBytes(a)
    }

    /// Whether `a` and `b` have the same bytes, which for two values of one type means the same value: the
    /// elements of a container that the diff walks with their own type, without boxing each in an `Any`.
    @inline(__always)
    static func sameBytes<Value>(_ a: Value, _ b: Value) -> Bool {
        withUnsafeBytes(of: a) { a in
            withUnsafeBytes(of: b) { b in sameBytes(a, b) }
        }
    }

    /// Whether two buffers of the same length hold the same bytes.
    @inline(__always)
    static func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard let first = a.baseAddress, let second = b.baseAddress else { return true }
        return memcmp(first, second, a.count) == 0
    }

    private mutating func compare(_ a: Any, _ b: Any, depth: Int) -> Verdict {
        guard visits < visitLimit else { return .unknown }
        visits += 1
        if Self.isIdentical(a, b) { return .same }
        if let equal = equalIfEquatable(a, b) { return equal ? .same : .different }
        guard type(of: a) == type(of: b) else { return .different }
        guard depth < Self.maxDepth else { return .unknown }
        let aMirror = Mirror(reflecting: a)
        let bMirror = Mirror(reflecting: b)
        let style = aMirror.displayStyle
        guard style == bMirror.displayStyle else { return .different }
        let aChildren = style == .class ? AnyCollection(CompactDescription.allChildren(of: aMirror)) : aMirror.children
        let bChildren = style == .class ? AnyCollection(CompactDescription.allChildren(of: bMirror)) : bMirror.children
        guard aChildren.count == bChildren.count else { return .different }
        if aChildren.isEmpty {
            return String(describing: a) == String(describing: b) ? .same : .different
        }
        if style == .set || style == .dictionary { return .unknown }
        var verdict = Verdict.same
        for (aChild, bChild) in zip(aChildren, bChildren) {
            guard aChild.label == bChild.label else { return .different }
            if visits >= visitLimit { return .unknown }
            switch compare(aChild.value, bChild.value, depth: depth + 1) {
            case .same: continue
            case .different: return .different
            case .unknown: verdict = .unknown  // A later part may still differ for sure.
            }
        }
        return verdict
    }
}

/// `a == b` if `a` is `Equatable` and `b` has the same type, `false` if `b`'s type differs, `nil` if `a` is
/// not `Equatable`.
func equalIfEquatable(_ a: Any, _ b: Any) -> Bool? {
    guard DescribedType.of(a).isEquatable, let a = a as? any Equatable else { return nil }
    return a._sluiceIsEqual(to: b)
}

extension Equatable {
    fileprivate func _sluiceIsEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
