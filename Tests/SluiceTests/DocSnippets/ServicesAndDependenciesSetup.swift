import Foundation
import Sluice

// What ServicesAndDependencies.md's blocks use without declaring it. The article's declaration block (fenced
// `swift not-compiled`, since an extension cannot be declared inside the function that holds the snippets) is
// copied here verbatim, between the markers; `ServicesArticleTests` checks that the two match.

// BEGIN ServicesAndDependencies.md declaration
protocol PaymentGateway: Sendable {
    func charge(_ cents: Int, orderID: Int) async throws -> String
}

enum PaymentGatewayKey: StoreDependencyKey {
    static var liveValue: any PaymentGateway {
        get throws { try StripeGateway.fromEnvironment() }
    }
    static let testValue: any PaymentGateway = AcceptingGateway()
}

extension StoreDependencies {
    var paymentGateway: any PaymentGateway {
        get { self[PaymentGatewayKey.self] }
        set { self[PaymentGatewayKey.self] = newValue }
    }
}
// END ServicesAndDependencies.md declaration

struct PaymentDeclined: Error {}

/// The live gateway of the article (a stand-in: it charges nothing).
struct StripeGateway: PaymentGateway {
    struct MissingAPIKey: Error {}

    let apiKey: String

    static func fromEnvironment() throws -> StripeGateway {
        guard let key = ProcessInfo.processInfo.environment["STRIPE_API_KEY"] else { throw MissingAPIKey() }
        return StripeGateway(apiKey: key)
    }

    func charge(_ cents: Int, orderID: Int) async throws -> String {
        "ch_\(orderID)_\(cents)"
    }
}

/// The test value: accepts every charge.
struct AcceptingGateway: PaymentGateway {
    func charge(_ cents: Int, orderID: Int) async throws -> String {
        "test-receipt-\(orderID)"
    }
}

enum OrderStatus: Sendable, Equatable {
    case pending, paid, failed
}

struct Shop: Sendable, Equatable {
    var orders: [Int: OrderStatus] = [:]
}

enum ShopAction: Sendable {
    case checkout(orderID: Int, cents: Int)
    case paid(orderID: Int, receipt: String)
    case paymentFailed(orderID: Int)
    case expire(orderID: Int)
}

let shopReducer = Reducer<Shop, ShopAction>(mutating: { state, action in
    switch action {
    case .checkout(let orderID, _): state.orders[orderID] = .pending
    case .paid(let orderID, _): state.orders[orderID] = .paid
    case .paymentFailed(let orderID), .expire(let orderID): state.orders[orderID] = .failed
    }
})

extension ServicesAndDependenciesSnippets {
    typealias Recorder = DocExample.Recorder

    static let apiKey = "sk_test_123"
}
