/// Decides whether this process may activate the store of an id: the hook a placement policy plugs into a
/// ``StoreHost``.
///
/// The host asks ``acquire(_:)`` before it opens an id's journal, and calls ``release(_:)`` once the store of that
/// id is passivated and its journal closed. A policy that places ids over several processes (by a hash of the id
/// over the live members, or by a directory table) refuses the ids that another process owns; the request then
/// fails with ``StoreHostError/notOwned(id:reason:)``, which names the owner if the policy's error does. The journal's
/// storage keeps every write fenced: a refusal here saves a request the round trip, but two processes that both
/// believe they own an id are still stopped by the storage (see SluiceJournal's `JournalStorage.acquire()`).
///
/// ```swift
/// struct EvenIDs: StoreOwnership {
///     func acquire(_ id: Int) throws {
///         if id % 2 != 0 { throw NotMine(id: id) }
///     }
///     func release(_ id: Int) {}
/// }
/// ```
public protocol StoreOwnership<ID>: Sendable {
    /// The type of the ids that the host addresses its stores by.
    associatedtype ID: Hashable & Sendable

    /// Called before the store of `id` is activated in this process, on the thread of the request that activates it;
    /// throws when this process may not activate it.
    func acquire(_ id: ID) throws

    /// Called after the store of `id` was passivated (its journal closed), or after its activation failed once
    /// ``acquire(_:)`` had returned.
    func release(_ id: ID)
}
