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
    /// Which slots hold the elements; the slots before them are cleared.
    @usableFromInline
    var indices = QueueIndices()

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { indices.isEmpty }

    @inlinable
    var count: Int { indices.count }

    /// The elements, oldest first.
    @inlinable
    var elements: [Element] {
        slots[indices.occupied].map { $0.unsafelyUnwrapped }
    }

    /// Appends `element` behind every element appended before it.
    @inlinable
    mutating func append(_ element: consuming Element) {
        let slot = indices.appendSlot()
        if slot < slots.count {
            slots[slot] = element
        } else {
            slots.append(element)
        }
    }

    /// Removes and returns the oldest element; the queue must not be empty.
    @inlinable
    mutating func removeFirst() -> Element {
        let element = slots[indices.takeHeadSlot()].take().unsafelyUnwrapped
        if _slowPath(indices.head > 64 && indices.head * 2 > indices.tail) {
            moveToFront()
        }
        return element
    }

    /// Moves the elements to the first slots, the cleared ones behind them; out of line, as it is rare.
    @usableFromInline @inline(never)
    mutating func moveToFront() {
        for offset in 0..<count {
            slots.swapAt(offset, indices.head + offset)
        }
        indices.tail = count
        indices.head = 0
    }

    /// Removes every element and returns them, oldest first, so that the caller can release them where it chooses
    /// (outside a lock); keeps the storage.
    @inlinable
    mutating func removeAll() -> [Element] {
        if isEmpty {
            return []
        }
        let removed = elements
        for slot in indices.occupied {
            slots[slot] = nil
        }
        indices.reset()
        return removed
    }
}

/// Which slots of a queue's storage hold its actions, oldest first: `head..<tail`. Both go back to 0 whenever the
/// queue empties, so that the queue reuses its storage from the start and `isEmpty` is one test.
@usableFromInline
struct QueueIndices {
    @usableFromInline
    var head = 0
    @usableFromInline
    var tail = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { tail == 0 }

    @inlinable
    var count: Int { tail - head }

    @inlinable
    var occupied: Range<Int> { head..<tail }

    /// The slot for a new action, after the others.
    @inlinable
    mutating func appendSlot() -> Int {
        tail += 1
        return tail - 1
    }

    /// The slot of the oldest action, which the caller takes out; the queue must not be empty.
    @inlinable
    mutating func takeHeadSlot() -> Int {
        let slot = head
        head += 1
        if head == tail {
            reset()
        }
        return slot
    }

    @inlinable
    mutating func reset() {
        head = 0
        tail = 0
    }
}
