/// A first-in, first-out queue that keeps its storage, for the queues the store fills and empties on every busy
/// dispatch (the pipeline's queue of re-entrant actions, a time-based modifier's runs).
///
/// - A taken slot is cleared at once, so the queue keeps nothing alive that it handed out.
/// - When it empties, it starts again at the front of the same storage, so steady-state use does not allocate.
/// - A queue that never empties (a producer that keeps up with its consumer) moves its elements to the front once
///   more than half of the storage, and more than 64 slots, lie before them, so its storage stays bounded by about
///   twice its longest length.
///
/// A value type, so that the pure state machines that hold one are copied whole, as their tests explore them.
@usableFromInline
struct FIFO<Element> {
    @usableFromInline
    var slots: [Element?] = []
    /// The slot of the oldest element; the slots before it are cleared.
    @usableFromInline
    var head = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { head == slots.count }

    @inlinable
    var count: Int { slots.count - head }

    /// The elements, oldest first.
    @inlinable
    var elements: [Element] {
        slots[head...].map { $0.unsafelyUnwrapped }
    }

    /// Appends `element` behind every element appended before it.
    @inlinable
    mutating func append(_ element: consuming Element) {
        slots.append(element)
    }

    /// Removes and returns the oldest element; the queue must not be empty.
    @inlinable
    mutating func removeFirst() -> Element {
        let element = slots[head].take().unsafelyUnwrapped
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if _slowPath(head > 64 && head * 2 > slots.count) {
            slots.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes every element and returns them, oldest first, so that the caller can release them where it chooses
    /// (outside a lock); keeps the storage.
    @inlinable
    mutating func removeAll() -> [Element] {
        if isEmpty {
            return []
        }
        let removed = elements
        slots.removeAll(keepingCapacity: true)
        head = 0
        return removed
    }
}
