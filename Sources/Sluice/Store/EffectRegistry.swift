/// The effects that a store is running: by token, and by id for those started with one.
///
/// Each effect gets a fresh token when it starts and gives that token back when it finishes, so an effect that
/// finishes after a newer effect took over its id removes only itself, never the newer one. Cancelling takes the
/// effects out of the registry at once and cancels them outside the lock (their handlers cancel `Task`s).
///
/// `@unchecked Sendable`: every mutable property is read and written with `lock` held.
final class EffectRegistry: @unchecked Sendable {
    private struct Entry {
        let id: AnyHashable?
        let cancellation: Cancellation
    }

    private let lock = Lock()
    private var running: [UInt64: Entry] = [:]
    /// The tokens of the running effects that have an id, in start order.
    private var tokensByID: [AnyHashable: [UInt64]] = [:]
    private var nextToken: UInt64 = 0

    init() {}

    /// Records a starting effect and returns its token.
    ///
    /// With `cancelInFlight`, the running effects with the same id are cancelled before this returns (so before
    /// the new effect's work starts). The store's going away is not the registry's business: every effect's
    /// cancellation descends from the store's lifetime.
    func register(_ cancellation: Cancellation, id: AnyHashable?, cancelInFlight: Bool) -> UInt64 {
        var superseded: [Cancellation] = []
        let token: UInt64 = lock.withLock {
            nextToken &+= 1
            let token = nextToken
            if let id {
                if cancelInFlight, let tokens = tokensByID.removeValue(forKey: id) {
                    for old in tokens {
                        if let entry = running.removeValue(forKey: old) {
                            superseded.append(entry.cancellation)
                        }
                    }
                }
                tokensByID[id, default: []].append(token)
            }
            running[token] = Entry(id: id, cancellation: cancellation)
            return token
        }
        for old in superseded {
            old.cancel()
        }
        return token
    }

    /// Forgets the effect with `token`: it finished. Does nothing if it was cancelled (and so removed) already.
    func finish(_ token: UInt64) {
        let removed: Entry? = lock.withLock {
            guard let entry = running.removeValue(forKey: token) else { return nil }
            if let id = entry.id, var tokens = tokensByID[id] {
                tokens.removeAll { $0 == token }
                tokensByID[id] = tokens.isEmpty ? nil : tokens
            }
            return entry
        }
        _ = removed
    }

    /// Cancels every running effect with `id`.
    func cancel(id: AnyHashable) {
        let cancelled: [Cancellation] = lock.withLock {
            guard let tokens = tokensByID.removeValue(forKey: id) else { return [] }
            return tokens.compactMap { running.removeValue(forKey: $0)?.cancellation }
        }
        for cancellation in cancelled {
            cancellation.cancel()
        }
    }

    /// The number of effects started and neither finished nor cancelled.
    var count: Int {
        lock.withLock { running.count }
    }

    /// The number of ids with at least one running effect.
    var idCount: Int {
        lock.withLock { tokensByID.count }
    }
}
