import Foundation
import Sluice
import Testing

/// An element with a large array, reserved so that appends never reallocate: a change of the buffer's address is
/// a copy-on-write copy of the element.
private struct Order: Identifiable, Sendable, Equatable {
    let id: Int
    var quantity = 0
    var log: [Int] = []

    init(id: Int, reserve: Int = 0) {
        self.id = id
        log.reserveCapacity(reserve)
    }

    var logAddress: UInt {
        log.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}

private enum OrderAction: Sendable, Equatable {
    case add(Int)
}

private let orderReducer = Reducer<Order, OrderAction>(mutating: { order, action in
    switch action {
    case .add(let count):
        order.quantity += count
        order.log.append(count)
    }
})

private struct ChildShop: Sendable {
    var byID: [Int: Order] = [:]
    var list: [Order] = []
    var current: Order?
}

private enum ChildShopAction: Sendable, Equatable {
    case byID(Int, OrderAction)
    case list(Int, OrderAction)
    case current(OrderAction)
    case other
}

/// How the tests give `forEach` and `ifLet` the child's action: a closure, or an `ActionExtractor` type. The two
/// forms must behave the same in every test.
enum ExtractionForm: CaseIterable, Sendable {
    case closure
    case extractor
}

private struct ByIDActions: ActionExtractor {
    func extract(from action: ChildShopAction) -> (Int, OrderAction)? {
        if case .byID(let id, let local) = action { (id, local) } else { nil }
    }
}

private struct ListActions: ActionExtractor {
    func extract(from action: ChildShopAction) -> (Int, OrderAction)? {
        if case .list(let id, let local) = action { (id, local) } else { nil }
    }
}

private struct CurrentActions: ActionExtractor {
    func extract(from action: ChildShopAction) -> OrderAction? {
        if case .current(let local) = action { local } else { nil }
    }
}

/// Line `number` of this file, to check the line that an unmatched action reports.
private func sourceLine(_ number: Int, file: String = #filePath) -> String {
    let lines = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(
        separator: "\n",
        omittingEmptySubsequences: false
    )
    return lines.indices.contains(number - 1) ? String(lines[number - 1]) : ""
}

/// The address of a dictionary's storage object: it changes when the dictionary is copied (a copy is allocated
/// while the original is still alive), and stays when it is changed in place.
private func storageAddress<Key, Value>(_ dictionary: [Key: Value]) -> UInt {
    unsafeBitCast(dictionary, to: UInt.self)
}

private func arrayAddress<Element>(_ array: [Element]) -> UInt {
    array.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
}

@Suite struct ChildReducerTests {
    private func shopReducer(
        _ form: ExtractionForm,
        _ unmatched: Locked<[UnmatchedChildAction]>? = nil
    ) -> Reducer<ChildShop, ChildShopAction> {
        var report = UnmatchedChildAction.debugReport
        if let unmatched {
            report = { unmatched.append($0) }
        }
        switch form {
        case .closure:
            return combineReducers(
                .forEach(
                    \.byID,
                    action: { action in if case .byID(let id, let local) = action { (id, local) } else { nil } },
                    element: orderReducer,
                    ifMissing: report
                ),
                .forEach(
                    \.list,
                    action: { action in if case .list(let id, let local) = action { (id, local) } else { nil } },
                    element: orderReducer,
                    ifMissing: report
                ),
                .ifLet(
                    \.current,
                    action: { action in if case .current(let local) = action { local } else { nil } },
                    then: orderReducer,
                    ifMissing: report
                )
            )
        case .extractor:
            return combineReducers(
                .forEach(\.byID, action: ByIDActions(), element: orderReducer, ifMissing: report),
                .forEach(\.list, action: ListActions(), element: orderReducer, ifMissing: report),
                .ifLet(\.current, action: CurrentActions(), then: orderReducer, ifMissing: report)
            )
        }
    }

    private func shop(orders: Int, reserve: Int = 0) -> ChildShop {
        var shop = ChildShop()
        for id in 0..<orders {
            shop.byID[id] = Order(id: id, reserve: reserve)
            shop.list.append(Order(id: id, reserve: reserve))
        }
        shop.current = Order(id: -1, reserve: reserve)
        return shop
    }

    @Test(arguments: ExtractionForm.allCases)
    func forEachDictionaryChangesOnlyTheAddressedElement(form: ExtractionForm) {
        let store = Store(initialState: shop(orders: 3), reducer: shopReducer(form))
        store.dispatch(.byID(1, .add(5)))
        store.dispatch(.byID(1, .add(2)))
        #expect(store.state.byID[1]?.quantity == 7)
        #expect(store.state.byID[1]?.log == [5, 2])
        #expect(store.state.byID[0]?.quantity == 0)
        #expect(store.state.byID[2]?.quantity == 0)
        #expect(store.state.list.allSatisfy { $0.quantity == 0 })
    }

    @Test(arguments: ExtractionForm.allCases)
    func forEachArrayChangesTheElementWithTheID(form: ExtractionForm) {
        var initial = shop(orders: 3)
        initial.list.reverse()  // ids 2, 1, 0: the element is found by id, not by position
        let store = Store(initialState: initial, reducer: shopReducer(form))
        store.dispatch(.list(0, .add(4)))
        #expect(store.state.list.map(\.quantity) == [0, 0, 4])
        #expect(store.state.list.map(\.id) == [2, 1, 0])
        #expect(store.state.byID.values.allSatisfy { $0.quantity == 0 })
    }

    @Test(arguments: ExtractionForm.allCases)
    func ifLetChangesTheUnwrappedPart(form: ExtractionForm) {
        let store = Store(initialState: shop(orders: 1), reducer: shopReducer(form))
        store.dispatch(.current(.add(3)))
        #expect(store.state.current?.quantity == 3)
        #expect(store.state.current?.id == -1)
    }

    @Test(arguments: ExtractionForm.allCases)
    func actionsThatTheExtractRejectsAreSkippedWithoutAReport(form: ExtractionForm) {
        let unmatched = Locked<[UnmatchedChildAction]>([])
        let store = Store(initialState: ChildShop(), reducer: shopReducer(form, unmatched))
        store.dispatch(.other)
        #expect(unmatched.current.isEmpty)
    }

    @Test(arguments: ExtractionForm.allCases)
    func anActionForAMissingKeyIsIgnoredAndReported(form: ExtractionForm) {
        let unmatched = Locked<[UnmatchedChildAction]>([])
        let store = Store(initialState: shop(orders: 2), reducer: shopReducer(form, unmatched))
        store.dispatch(.byID(9, .add(1)))
        store.dispatch(.list(8, .add(1)))
        #expect(store.state.byID.values.allSatisfy { $0.quantity == 0 })
        #expect(store.state.list.allSatisfy { $0.quantity == 0 })
        let reports = unmatched.current
        #expect(reports.map(\.reason) == [.missingElement, .missingElement])
        #expect(reports.map { $0.key as? Int } == [9, 8])
        #expect(reports.map { $0.action as? ChildShopAction } == [.byID(9, .add(1)), .list(8, .add(1))])
        #expect(reports.allSatisfy { $0.fileID == "SluiceTests/ChildReducerTests.swift" })
        // The line of each `forEach` call in `shopReducer`, in either form: not a line of the library.
        #expect(reports.map { sourceLine($0.line).contains(".forEach(") } == [true, true])
        #expect(reports.map(\.line) == reports.map(\.line).sorted() && Set(reports.map(\.line)).count == 2)
        #expect(reports.first?.description.hasPrefix("Sluice: forEach at SluiceTests/ChildReducerTests.swift:") == true)
        #expect(
            reports.first?.description.hasSuffix(
                "add(1)): no element with key 9"
            ) == true
        )
    }

    @Test(arguments: ExtractionForm.allCases)
    func anActionForANilPartIsIgnoredAndReported(form: ExtractionForm) {
        let unmatched = Locked<[UnmatchedChildAction]>([])
        let store = Store(initialState: ChildShop(), reducer: shopReducer(form, unmatched))
        store.dispatch(.current(.add(1)))
        #expect(store.state.current == nil)
        let reports = unmatched.current
        #expect(reports.count == 1)
        #expect(reports.first?.reason == .nilState)
        #expect(reports.first?.key == nil)
        #expect(reports.first?.fileID == "SluiceTests/ChildReducerTests.swift")
        #expect(reports.first.map { sourceLine($0.line).contains(".ifLet(") } == true)
        #expect(reports.first?.description.hasSuffix("the state is nil") == true)
    }

    @Test(arguments: ExtractionForm.allCases)
    func theDefaultHandlerNeverStopsTheProgram(form: ExtractionForm) {
        // Writes a line to standard error in this debug build; the state stays as it was.
        let store = Store(initialState: ChildShop(), reducer: shopReducer(form))
        store.dispatch(.byID(1, .add(1)))
        store.dispatch(.list(1, .add(1)))
        store.dispatch(.current(.add(1)))
        #expect(store.state.byID.isEmpty && store.state.list.isEmpty && store.state.current == nil)
    }

    // MARK: - No copies (rule 8)

    @Test(arguments: ExtractionForm.allCases)
    func forEachDictionaryCopiesNeitherTheDictionaryNorTheElement(form: ExtractionForm) {
        let store = Store(initialState: shop(orders: 1_000, reserve: 100), reducer: shopReducer(form))
        let dictionary = storageAddress(store.state.byID)
        let element = store.state.byID[500]!.logAddress
        for count in 0..<50 {
            store.dispatch(.byID(500, .add(count)))
            #expect(storageAddress(store.state.byID) == dictionary)
            #expect(store.state.byID[500]!.logAddress == element)
        }
        #expect(store.state.byID[500]!.log.count == 50)
    }

    @Test(arguments: ExtractionForm.allCases)
    func forEachArrayCopiesNeitherTheArrayNorTheElement(form: ExtractionForm) {
        let store = Store(initialState: shop(orders: 1_000, reserve: 100), reducer: shopReducer(form))
        let array = arrayAddress(store.state.list)
        let element = store.state.list[500].logAddress
        for count in 0..<50 {
            store.dispatch(.list(500, .add(count)))
            #expect(arrayAddress(store.state.list) == array)
            #expect(store.state.list[500].logAddress == element)
        }
        #expect(store.state.list[500].log.count == 50)
    }

    @Test(arguments: ExtractionForm.allCases)
    func ifLetDoesNotCopyThePart(form: ExtractionForm) {
        let store = Store(initialState: shop(orders: 0, reserve: 100), reducer: shopReducer(form))
        let element = store.state.current!.logAddress
        for count in 0..<50 {
            store.dispatch(.current(.add(count)))
            #expect(store.state.current!.logAddress == element)
        }
        #expect(store.state.current!.log.count == 50)
    }

    @Test func theAddressCheckSeesACopyOfTheDictionary() {
        // The same check as above, on a reducer that copies the dictionary: it would catch a copy in forEach.
        let copying = Reducer<ChildShop, ChildShopAction>(mutating: { state, action in
            guard case .byID(let id, let local) = action else { return }
            var copy = state.byID
            orderReducer.reduce(into: &copy[id]!, local)
            state.byID = copy
        })
        let store = Store(initialState: shop(orders: 1_000), reducer: copying)
        var seen = Set<UInt>()
        for count in 0..<3 {
            store.dispatch(.byID(1, .add(count)))
            seen.insert(storageAddress(store.state.byID))
        }
        #expect(store.state.byID[1]?.quantity == 3)
        #expect(seen.count > 1)
    }
}
