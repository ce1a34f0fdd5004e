import Testing

@testable import Sluice

/// The store's ledger keeps its entries in a `Slab`, by tokens that hold a 32-bit serial: a long-lived service
/// wraps the serial after 2^32 entries (about five days at 10,000 effect runs a second).
@Suite struct SlabTests {
    @Test func theSerialThatWrapsNeverMakesATokenOfZero() {
        var slab = Slab<String>(serialForTesting: 0xFFFF_FFFF)
        let first = slab.insert("a")  // slot 0, at the serial whose low 32 bits are 0
        #expect(first != 0)
        #expect(slab[first] == "a")
        #expect(slab.remove(first) == "a")
        #expect(slab.remove(first) == nil)  // removed once: slot 0 is free once
        let second = slab.insert("b")
        let third = slab.insert("c")
        #expect(second != third)
        #expect(slab[second] == "b")
        #expect(slab[third] == "c")
    }

    @Test func aRemovedTokenFindsNothingInItsReusedSlot() {
        var slab = Slab<Int>()
        let old = slab.insert(1)
        slab.remove(old)
        let new = slab.insert(2)  // the same slot, a newer serial
        #expect(slab[old] == nil)
        #expect(slab.remove(old) == nil)
        #expect(slab[new] == 2)
        #expect(slab[0] == nil)
    }
}
