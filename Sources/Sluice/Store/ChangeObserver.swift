/// A subscriber that skips repeats: the one type behind every `subscribe(to:)`, `subscribe(to:by:)` and scoped
/// `subscribe`. It keeps the *key* that the previous notification saw, and calls its observer with the value only
/// when the key changed. When the value is its own key (`subscribe(to:)`, a scoped `subscribe`), `key` is `nil` and
/// ``notifyOfValueChanges(_:)`` compares the value directly, sparing every action a second key path read.
///
/// One object, so that the notification closure captures a single reference. Keeping only a key, never the value,
/// is what leaves a large collection uniquely referenced under `subscribe(to:by:)` (see <doc:LargeStates>).
///
/// `@unchecked Sendable`: `last` is read and written only by notifications, which the store runs one at a time
/// (each on the thread that owns the dispatch pipeline, which is handed over under the store's lock).
@usableFromInline
final class ChangeObserver<State, Value, Key: Equatable>: @unchecked Sendable {
    @usableFromInline
    let read: KeyPathReader<State, Value>
    /// Reads the key inside the value; `nil` when the value is its own key (`Key == Value`).
    @usableFromInline
    let key: KeyPathReader<Value, Key>?
    @usableFromInline
    let observer: @Sendable (Value) -> Void
    // `@exclusivity(unchecked)`: access is already serialized (see above); the dynamic check cost more than the
    // comparison.
    @usableFromInline @exclusivity(unchecked)
    var last: Key

    @usableFromInline
    convenience init(
        read: KeyPathReader<State, Value>,
        key: KeyPathReader<Value, Key>,
        initial state: borrowing State,
        observer: @escaping @Sendable (Value) -> Void
    ) {
        self.init(
            read: read,
            key: key,
            last: withUnsafePointer(to: state) { state in read.withPointer(in: state) { key($0.pointee) } },
            observer: observer
        )
    }

    @usableFromInline
    init(
        read: KeyPathReader<State, Value>,
        key: KeyPathReader<Value, Key>?,
        last: Key,
        observer: @escaping @Sendable (Value) -> Void
    ) {
        self.read = read
        self.key = key
        self.last = last
        self.observer = observer
    }

    /// Calls the observer if the key differs from the last one it saw; reads the key in place, and produces the
    /// value only for the observer. For an observer made with a key reader.
    @inlinable
    func notify(_ state: UnsafePointer<State>) {
        guard let key else { preconditionFailure("Sluice: a change observer without a key reader") }
        let current = read.withPointer(in: state) { value in key.withPointer(in: value) { $0.pointee } }
        if current != last {
            last = current
            observer(read.withPointer(in: state) { $0.pointee })
        }
    }
}

extension ChangeObserver where Key == Value {
    /// An observer of the value itself: the value is its own key.
    @usableFromInline
    convenience init(
        read: KeyPathReader<State, Value>,
        initial state: borrowing State,
        observer: @escaping @Sendable (Value) -> Void
    ) {
        self.init(read: read, key: nil, last: read(state), observer: observer)
    }

    /// Calls the observer if the value differs from the last one it saw.
    @inlinable
    func notifyOfValueChanges(_ state: UnsafePointer<State>) {
        let value = read.withPointer(in: state) { $0.pointee }
        if value != last {
            last = value
            observer(value)
        }
    }
}
