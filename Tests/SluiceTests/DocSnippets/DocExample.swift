import Foundation
import Sluice

/// The application that the documents' fragments talk about without declaring it, declared once for the hidden
/// setup of their snippets (see DocSnippetTests.swift). It runs only where the documents whose snippets run use it.
enum DocExample {
    // GettingStarted.md's order service, which WritingMiddleware.md and TestingWithTestScheduler.md continue.
    struct OrderState: Sendable, Equatable {
        var pending: [Int] = []
        var shipped = 0
    }

    enum OrderAction: Sendable {
        case place(id: Int)
        case ship(id: Int)
    }

    static let orders = Reducer<OrderState, OrderAction>(mutating: { state, action in
        switch action {
        case .place(let id):
            state.pending.append(id)
        case .ship(let id):
            if let index = state.pending.firstIndex(of: id) {
                state.pending.remove(at: index)
                state.shipped += 1
            }
        }
    })

    // The app of the articles on effects, on consuming state and on the modifiers.
    struct CartState: Sendable, Equatable {
        var items: [String] = []
        var total = 0
    }

    enum CartAction: Sendable {
        case clear
        case restoreSaved
    }

    struct Session: Sendable {
        var userID = 1
    }

    struct User: Sendable {
        var id: Int
    }

    struct Profile: Sendable {}

    struct Metrics: Sendable {
        var actions = 0
    }

    struct AppState: Sendable {
        var count = 0
        var cart = CartState()
        var orders: [Int] = []
        var session = Session()
        var metrics = Metrics()
    }

    enum AppAction: Sendable {
        case increment
        case cart(CartAction)
        case userLoaded(User)
        case status(String)
        case searchResults([String])
        case loaded(Profile, [Int])
        case orderPlaced(Int)
        case confirm(Int)
        case quoteRequested(String)
        case quoteReceived(String, Double)
        case grantAdmin

        var isAdminAction: Bool {
            if case .grantAdmin = self { true } else { false }
        }

        var changesOrders: Bool {
            if case .orderPlaced = self { true } else { false }
        }
    }

    static let appReducer = Reducer<AppState, AppAction>(mutating: { state, action in
        state.metrics.actions += 1
        switch action {
        case .increment: state.count += 1
        case .orderPlaced(let id): state.orders.append(id)
        case .cart(.clear): state.cart = CartState()
        default: break
        }
    })

    /// A remote service.
    struct Client: Sendable {
        func fetchUser(_ id: Int) async throws -> User { User(id: id) }
        func status() async throws -> String { "ok" }
        func profile() async throws -> Profile { Profile() }
        func orders() async throws -> [Int] { [] }
        func search(_ query: String) async throws -> [String] { [query] }
        func fetch(_ symbol: String) async -> Double { 1 }
        func report(_ metrics: Metrics) {}
        func write(_ state: AppState) throws {}
    }

    static let client = Client()
    static let isOrder: @Sendable (AppAction) -> Bool = { $0.changesOrders }
    static let sideEffect = SideEffect<AppState, AppAction> { _, _ in }

    /// The `Recorder` of TestingWithTestScheduler.md, which ServicesAndDependencies.md uses too: a lock-guarded array.
    final class Recorder<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()  // @unchecked: `storage` is only used with `lock` held.
        private var storage: [Value] = []

        func append(_ value: Value) {
            lock.withLock { storage.append(value) }
        }

        var values: [Value] {
            lock.withLock { storage }
        }
    }
}
