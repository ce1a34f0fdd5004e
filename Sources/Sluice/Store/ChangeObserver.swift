/// A subscriber that skips repeats: the one type behind every `subscribe(to:)`, `subscribe(to:by:)` and scoped
/// `subscribe`. It keeps the *key* that the previous notification saw (the value itself, when the value is its own
/// key), and calls its observer with the value only when the key changed.
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
    @usableFromInline
    let key: KeyPathReader<Value, Key>
    @usableFromInline
    let observer: @Sendable (Value) -> Void
    // `@exclusivity(unchecked)`: access is already serialized (see above); the dynamic check cost more than the
    // comparison.
    @usableFromInline @exclusivity(unchecked)
    var last: Key

    @usableFromInline
    init(
        read: KeyPathReader<State, Value>,
        key: KeyPathReader<Value, Key>,
        initial state: borrowing State,
        observer: @escaping @Sendable (Value) -> Void
    ) {
        self.read = read
        self.key = key
        self.observer = observer
        last = withUnsafePointer(to: state) { state in read.withPointer(in: state) { key($0.pointee) } }
    }

    /// Calls the observer if the key differs from the last one it saw; reads the key in place, and produces the
    /// value only for the observer.
    @inlinable
    func notify(_ state: State) {
        let current = withUnsafePointer(to: state) { state in read.withPointer(in: state) { key($0.pointee) } }
        if current != last {
            last = current
            observer(read(state))
        }
    }
}
