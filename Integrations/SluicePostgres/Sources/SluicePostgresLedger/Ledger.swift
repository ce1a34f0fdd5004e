// The domain that the writer process (`SluicePostgresWriter`), the benchmark (`SluicePostgresBench`) and the tests
// share: a ledger that counts and sums the values added to it. Not part of the `SluicePostgres` product.
public import Sluice

/// A count of the actions and the sum of their values.
public struct Ledger: Codable, Equatable, Sendable {
    public var count: Int
    public var sum: Int

    public init(count: Int = 0, sum: Int = 0) {
        self.count = count
        self.sum = sum
    }
}

/// The ledger's one action.
public enum LedgerAction: Codable, Sendable {
    case add(Int)
}

/// Adds a value: the count grows by one and the sum by the value.
public let ledgerReducer = Reducer<Ledger, LedgerAction>(mutating: { state, action in
    switch action {
    case .add(let value):
        state.count += 1
        state.sum += value
    }
})
