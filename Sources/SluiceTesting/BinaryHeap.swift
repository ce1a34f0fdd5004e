/// A binary min-heap: the smallest element first, in O(log n) per insertion and removal.
///
/// ``TestScheduler`` keeps its pending work in one, ordered by deadline and then by the order of scheduling, so
/// that running n pieces of work costs O(n log n) instead of a scan of everything pending per piece.
package struct BinaryHeap<Element: Comparable> {
    private var storage: [Element] = []

    /// An empty heap.
    package init() {}

    /// The number of elements.
    package var count: Int { storage.count }

    /// Whether the heap has no element.
    package var isEmpty: Bool { storage.isEmpty }

    /// The smallest element, without removing it.
    package var min: Element? { storage.first }

    /// Every element, in no particular order.
    package var unordered: [Element] { storage }

    /// Adds `element`.
    package mutating func insert(_ element: Element) {
        storage.append(element)
        siftUp(from: storage.count - 1)
    }

    /// Removes and returns the smallest element, or `nil` if the heap is empty.
    package mutating func removeMin() -> Element? {
        guard !storage.isEmpty else { return nil }
        if storage.count == 1 { return storage.removeLast() }
        storage.swapAt(0, storage.count - 1)
        let smallest = storage.removeLast()
        siftDown(from: 0)
        return smallest
    }

    private mutating func siftUp(from start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { return }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        let count = storage.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            let right = left + 1
            let smaller = right < count && storage[right] < storage[left] ? right : left
            guard storage[smaller] < storage[parent] else { return }
            storage.swapAt(smaller, parent)
            parent = smaller
        }
    }
}

extension BinaryHeap: Sendable where Element: Sendable {}
