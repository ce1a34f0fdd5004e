import Testing

@testable import Sluice

/// The one queue type behind the pipeline's queue of re-entrant actions and a time-based modifier's runs.
@Suite struct FIFOTests {
    @Test func takesElementsInTheOrderTheyCame() {
        var fifo = FIFO<Int>()
        for value in 1...5 {
            fifo.append(value)
        }
        #expect(fifo.count == 5)
        #expect(fifo.removeFirst() == 1)
        #expect(fifo.removeFirst() == 2)
        fifo.append(6)
        #expect(fifo.elements == [3, 4, 5, 6])
        #expect(fifo.removeAll() == [3, 4, 5, 6])
        #expect(fifo.isEmpty)
        #expect(fifo.removeAll() == [])
    }

    @Test func keepsNothingAliveThatItHandedOut() {
        final class Payload {}
        var fifo = FIFO<Payload>()
        weak var first: Payload?
        do {
            let payload = Payload()
            first = payload
            fifo.append(payload)
            fifo.append(Payload())
        }
        _ = fifo.removeFirst()
        // The second element is still queued; the first one's slot was cleared when it was taken.
        #expect(first == nil)
        #expect(fifo.count == 1)
    }

    @Test func reusesItsStorageOnceEmpty() {
        var fifo = FIFO<Int>()
        for value in 0..<100 {
            fifo.append(value)
        }
        let capacity = fifo.slots.capacity
        for _ in 0..<100 {
            _ = fifo.removeFirst()
        }
        #expect(fifo.indices.head == 0)
        for value in 0..<100 {
            fifo.append(value)
        }
        #expect(fifo.slots.capacity == capacity)
    }

    @Test func aQueueThatNeverEmptiesStaysBounded() {
        // A consumer that keeps up with its producer: the queue holds between 1 and 10 elements for 100,000 steps,
        // never empty, so only moving its elements to the front keeps the storage from growing with every step.
        var fifo = FIFO<Int>()
        var next = 0
        var expected = 0
        for _ in 0..<10 {
            fifo.append(next)
            next += 1
        }
        var longest = 0
        var outOfOrder = 0
        for step in 0..<100_000 {
            if step % 2 == 0 || fifo.count == 1 {
                fifo.append(next)
                next += 1
            }
            if fifo.count > 1 {
                if fifo.removeFirst() != expected {
                    outOfOrder += 1
                }
                expected += 1
            }
            longest = max(longest, fifo.slots.count)
        }
        #expect(outOfOrder == 0)
        #expect(longest <= 2 * 10 + 65)
        #expect(fifo.elements == Array(expected..<next))
    }
}
