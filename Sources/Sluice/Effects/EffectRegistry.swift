/// The effects that a store is running: by token, and by id for those started with one.
///
/// Each effect gets a fresh token when it starts and gives that token back when it finishes, so an effect that
/// finishes after a newer effect took over its id removes only itself, never the newer one. Cancelling takes the
/// effects out of the registry at once and cancels them outside the lock (their handlers cancel `Task`s).
///
/// Every operation costs O(1) per effect it starts, finishes or cancels (amortized; hashing the id once or twice),
/// however many effects share an id: the tokens under an id are a set, not a list to search. Tokens increase, so
/// sorting them gives the start order back where it is wanted (cancelling by id).
///
/// `@unchecked Sendable`: every mutable property is read and written with `lock` held.
final class EffectRegistry: @unchecked Sendable {
    private struct Entry {
        let id: AnyHashable?
        let cancellation: Cancellation
    }

    private let lock = Lock()
    private var running: [UInt64: Entry] = [:]
    /// The tokens of the running effects that have an id; never an empty set.
    private var tokensByID: [AnyHashable: Set<UInt64>] = [:]
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
                    superseded = takeOut(tokens)
                }
                tokensByID[id, default: []].insert(token)
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
        // The entry is released after the lock: its cancellation may be the last reference to handlers.
        let removed: Entry? = lock.withLock {
            guard let entry = running.removeValue(forKey: token) else { return nil }
            // Mutated in place through the index (one hash of the id); a copy of the set would cost O(n).
            if let id = entry.id, let index = tokensByID.index(forKey: id) {
                tokensByID.values[index].remove(token)
                if tokensByID.values[index].isEmpty {
                    tokensByID.remove(at: index)
                }
            }
            return entry
        }
        _ = removed
    }

    /// Cancels every running effect with `id`, in the order they started.
    func cancel(id: AnyHashable) {
        let cancelled: [Cancellation] = lock.withLock {
            guard let tokens = tokensByID.removeValue(forKey: id) else { return [] }
            return takeOut(tokens)
        }
        for cancellation in cancelled {
            cancellation.cancel()
        }
    }

    /// Removes the effects with `tokens` from `running` and returns their cancellations in start order (called with
    /// `lock` held, after the tokens were taken out of `tokensByID`).
    private func takeOut(_ tokens: Set<UInt64>) -> [Cancellation] {
        tokens.sorted().compactMap { running.removeValue(forKey: $0)?.cancellation }
    }

    /// The number of effects started and neither finished nor cancelled.
    var count: Int {
        lock.withLock { running.count }
    }

    /// The number of ids with at least one running effect.
    var idCount: Int {
        lock.withLock { tokensByID.count }
    }

    /// The number of running effects with `id`.
    func count(id: AnyHashable) -> Int {
        lock.withLock { tokensByID[id]?.count ?? 0 }
    }
}
