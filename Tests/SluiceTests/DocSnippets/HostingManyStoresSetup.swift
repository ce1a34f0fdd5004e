import Foundation
import Sluice

/// What HostingManyStores.md's blocks use without declaring it.
extension HostingManyStoresSnippets {
    struct Cart: Codable, Sendable {
        var customer: String
        var items: [String: Int] = [:]
        var quantity = 0
        var checkedOut = false
    }

    enum CartAction: Codable, Sendable {
        case add(item: String, quantity: Int)
        case checkOut
    }

    static let cartReducer = Reducer<Cart, CartAction>(mutating: { state, action in
        switch action {
        case .add(let item, let quantity):
            state.items[item, default: 0] += quantity
            state.quantity += quantity
        case .checkOut:
            state.checkedOut = true
        }
    })

    /// Where a service would forward a request for an id that another process owns.
    static func forwardToOwner(_ id: String) {}

    static var dataDirectory: String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-host-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
        return path.path
    }
}
