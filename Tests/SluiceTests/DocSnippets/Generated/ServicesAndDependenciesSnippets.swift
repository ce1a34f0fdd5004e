// swift-format-ignore-file
// Generated from Sources/Sluice/Sluice.docc/ServicesAndDependencies.md by scripts/update-doc-snippets.sh: do not edit (see DocSnippetTests.swift).
// After changing a Swift block there, run: bash scripts/update-doc-snippets.sh

import Foundation
import Sluice
import SluiceTesting
import Testing

/// The Swift blocks of Sources/Sluice/Sluice.docc/ServicesAndDependencies.md, in order (compiled; run only where a test calls `snippets()`).
enum ServicesAndDependenciesSnippets {
    static func snippets() async throws {
        // Sources/Sluice/Sluice.docc/ServicesAndDependencies.md:79
        func theAuditUsesTheTestValues() {
            let lines = Recorder<String>()
            let audit = SideEffect<Shop, ShopAction> { action, api in
                lines.append("\(action) as \(api.dependencies.makeID()) at \(api.dependencies.date.now.timeIntervalSince1970)")
            }
            let scheduler = TestScheduler()
            let store = Store<Shop, ShopAction>(
                initialState: Shop(),
                reducer: shopReducer,
                middleware: [Middleware(audit), Middleware(Middlewares.delay(.seconds(5), on: scheduler, audit))],
                dependencies: .test { $0.date = .constant(Date(timeIntervalSince1970: 0)) }  // makeID counts from 0
            )
            store.dispatch(.checkout(orderID: 7, cents: 1_250))
            scheduler.advance(by: .seconds(5))
            #expect(
                lines.values == [
                    "checkout(orderID: 7, cents: 1250) as 00000000-0000-0000-0000-000000000000 at 0.0",
                    "checkout(orderID: 7, cents: 1250) as 00000000-0000-0000-0000-000000000001 at 0.0",
                ]
            )
        }
        theAuditUsesTheTestValues()

        // Sources/Sluice/Sluice.docc/ServicesAndDependencies.md:109
        @Sendable func charge(_ cents: Int, for orderID: Int) async throws -> String {
            try await StoreDependencies.current.paymentGateway.charge(cents, orderID: orderID)
        }

        let checkout = SideEffect<Shop, ShopAction> { action, api in
            guard case .checkout(let orderID, let cents) = action else { return }
            do {
                let receipt = try await charge(cents, for: orderID)
                api.dispatch(.paid(orderID: orderID, receipt: receipt))
            } catch {
                api.dispatch(.paymentFailed(orderID: orderID))
            }
        }

        let expireUnpaid = Middlewares.delay(.seconds(30)) { (action: ShopAction, api: MiddlewareAPI<Shop, ShopAction>) in
            if case .checkout(let orderID, _) = action, api.state.orders[orderID] == .pending {
                api.dispatch(.expire(orderID: orderID))
            }
        }

        let store = Store<Shop, ShopAction>(
            initialState: Shop(),
            reducer: shopReducer,
            middleware: [Middleware(checkout), Middleware(expireUnpaid)],
            dependencies: StoreDependencies { $0.paymentGateway = StripeGateway(apiKey: apiKey) }
        )
        _ = checkout
        _ = expireUnpaid
        _ = store

        // Sources/Sluice/Sluice.docc/ServicesAndDependencies.md:148
        struct DecliningGateway: PaymentGateway {
            func charge(_ cents: Int, orderID: Int) async throws -> String {
                throw PaymentDeclined()
            }
        }

        func anUnpaidOrderExpires() async {
            let scheduler = TestScheduler()
            let store = Store<Shop, ShopAction>(
                initialState: Shop(),
                reducer: shopReducer,
                middleware: [Middleware(checkout), Middleware(expireUnpaid)],
                dependencies: .test {
                    $0.paymentGateway = DecliningGateway()
                    $0.scheduler = scheduler
                }
            )
            store.dispatch(.checkout(orderID: 7, cents: 1_250))
            for await status in store.values(of: \.orders[7]) where status == .failed {
                break
            }
            scheduler.advance(by: .seconds(30))
            #expect(store.state.orders[7] == .failed)
        }
        await anUnpaidOrderExpires()

        // Sources/Sluice/Sluice.docc/ServicesAndDependencies.md:178
        func aDeclinedCardFailsTheOrder() async {
            let store = TestStore(
                initialState: Shop(),
                reducer: shopReducer,
                middleware: [Middleware(checkout)],
                dependencies: .test { $0.paymentGateway = DecliningGateway() }
            )
            store.send(.checkout(orderID: 7, cents: 1_250)) { $0.orders[7] = .pending }
            await store.receive({ if case .paymentFailed(orderID: 7) = $0 { true } else { false } }, timeout: .seconds(30)) {
                $0.orders[7] = .failed
            }
            await store.finish()
        }
        await aDeclinedCardFailsTheOrder()

        // Sources/Sluice/Sluice.docc/ServicesAndDependencies.md:218
        struct RetryingGateway: PaymentGateway {
            let base: any PaymentGateway
            func charge(_ cents: Int, orderID: Int) async throws -> String {
                do {
                    return try await base.charge(cents, orderID: orderID)
                } catch {
                    return try await base.charge(cents, orderID: orderID)
                }
            }
        }

        let receipt = try await store.run { _ in
            try await withStoreDependencies {
                $0.paymentGateway = RetryingGateway(base: $0.paymentGateway)
            } operation: {
                try await charge(2_000, for: 8)
            }
        }
        _ = receipt
    }
}
