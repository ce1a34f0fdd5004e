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
    /// The slot after the newest element. Both go back to 0 whenever the queue empties, so that `isEmpty` is one
    /// test and the queue reuses its slots from the start.
    @usableFromInline
    var tail = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { tail == 0 }

    @inlinable
    var count: Int { tail - head }

    /// The elements, oldest first.
    @inlinable
    var elements: [Element] {
        slots[head..<tail].map { $0.unsafelyUnwrapped }
    }

    /// Appends `element` behind every element appended before it.
    @inlinable
    mutating func append(_ element: consuming Element) {
        if tail < slots.count {
            slots[tail] = element
        } else {
            slots.append(element)
        }
        tail += 1
    }

    /// Removes and returns the oldest element; the queue must not be empty.
    @inlinable
    mutating func removeFirst() -> Element {
        let element = slots[head].take().unsafelyUnwrapped
        head += 1
        if head == tail {
            head = 0
            tail = 0
        } else if _slowPath(head > 64 && head * 2 > tail) {
            moveToFront()
        }
        return element
    }

    /// Moves the elements to the first slots, the cleared ones behind them; out of line, as it is rare.
    @usableFromInline @inline(never)
    mutating func moveToFront() {
        for offset in 0..<count {
            slots.swapAt(offset, head + offset)
        }
        tail = count
        head = 0
    }

    /// Removes every element and returns them, oldest first, so that the caller can release them where it chooses
    /// (outside a lock); keeps the storage.
    @inlinable
    mutating func removeAll() -> [Element] {
        if isEmpty {
            return []
        }
        let removed = elements
        for slot in head..<tail {
            slots[slot] = nil
        }
        head = 0
        tail = 0
        return removed
    }
}
