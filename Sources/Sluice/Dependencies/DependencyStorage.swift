/// What a ``StoreDependencies`` value holds: the keys set, in the order they were first set, and, in a test
/// context, the test values and the action whose work is reading.
///
/// Immutable, so a container is one reference (copying it is one retain) and `Sendable` without a lock; setting a key
/// makes a new storage. A linear scan of `entries` beats hashing for the handful of keys that a store sets: each
/// step is a load and a compare, and a hit is a load through an unchecked downcast.
@usableFromInline
final class DependencyStorage: Sendable {
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline
        let id: ObjectIdentifier
        @usableFromInline
        let box: any AnyObject & Sendable

        init(id: ObjectIdentifier, box: any AnyObject & Sendable) {
            self.id = id
            self.box = box
        }
    }

    @usableFromInline
    let entries: ContiguousArray<Entry>
    /// `nil` in a live context.
    @usableFromInline
    let testContext: DependencyTestContext?
    /// The action whose side effect is running, in a test context only.
    @usableFromInline
    let action: (any Sendable)?

    /// The storage of every empty live container: creating one allocates nothing.
    static let emptyLive = DependencyStorage(entries: [], testContext: nil, action: nil)

    init(entries: ContiguousArray<Entry>, testContext: DependencyTestContext?, action: (any Sendable)?) {
        self.entries = entries
        self.testContext = testContext
        self.action = action
    }

    /// The value set for `key`, if any.
    @inlinable
    func value<Key: StoreDependencyKey>(ifSet key: Key.Type) -> Key.Value? {
        let id = ObjectIdentifier(key)
        var index = 0
        let count = entries.count
        while index < count {
            if entries[index].id == id {
                return unsafeDowncast(entries[index].box, to: DependencyBox<Key.Value>.self).value
            }
            index += 1
        }
        return nil
    }

    /// A storage with `box` set for the key `id`.
    @usableFromInline
    func setting(_ box: any AnyObject & Sendable, for id: ObjectIdentifier) -> DependencyStorage {
        var entries = self.entries
        let entry = Entry(id: id, box: box)
        if let index = entries.firstIndex(where: { $0.id == id }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
        return DependencyStorage(entries: entries, testContext: testContext, action: action)
    }
}
