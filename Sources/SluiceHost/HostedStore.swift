public import Sluice
import SluiceJournal

/// One active store of a ``StoreHost``, with the journal it records to.
@usableFromInline
final class HostedStore<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    let store: Store<State, Action>
    let journal: Journal
    /// The sequence number that the journal's newest snapshot covered at activation: passivation writes a snapshot
    /// only when the journal holds actions after it, so that a store activated only to be read costs no write.
    let snapshotSequence: UInt64
    /// The group-commit writer (`journal.run()`), for a journal with `.groupCommit` durability.
    let writer: Task<Void, Never>?

    init(store: Store<State, Action>, journal: Journal, durability: JournalDurability) {
        self.store = store
        self.journal = journal
        snapshotSequence = journal.recovery?.snapshotSequence ?? 0
        if case .groupCommit = durability {
            writer = Task { try? await journal.run() }
        } else {
            writer = nil
        }
    }
}
