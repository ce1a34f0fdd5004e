public import Foundation
public import Sluice
import SluiceJournal

/// The price service that the demo's quote lookup calls: a dependency of the store, so a test replaces it.
public protocol PriceService: Sendable {
    /// The price of `sku` for request `requestID`, in cents.
    func price(of sku: String, requestID: Int) async throws -> Int
}

/// The demo's stand-in for a remote price service: 2 ms of latency, then a price made from the request id.
public struct SimulatedPriceService: PriceService {
    public init() {}

    public func price(of sku: String, requestID: Int) async throws -> Int {
        try await Task.sleep(for: .milliseconds(2))
        return 100 + requestID % 900
    }
}

/// Where the demo's snapshot writer puts the state: a dependency of the store.
public struct SnapshotStore: Sendable {
    /// The snapshot file.
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    /// Writes `state` as JSON, atomically.
    public func write(_ state: ServiceState) throws {
        try writeSnapshot(state, to: url)
    }
}

private enum PriceServiceKey: StoreDependencyKey {
    static let liveValue: any PriceService = SimulatedPriceService()
}

private enum SnapshotStoreKey: StoreDependencyKey {
    static let liveValue = SnapshotStore(
        url: FileManager.default.temporaryDirectory.appendingPathComponent("sluice-demo/state.json")
    )
}

extension StoreDependencies {
    /// The price service of the quote lookup.
    public var priceService: any PriceService {
        get { self[PriceServiceKey.self] }
        set { self[PriceServiceKey.self] = newValue }
    }

    /// Where the snapshot writer writes.
    public var snapshotStore: SnapshotStore {
        get { self[SnapshotStoreKey.self] }
        set { self[SnapshotStoreKey.self] = newValue }
    }
}
