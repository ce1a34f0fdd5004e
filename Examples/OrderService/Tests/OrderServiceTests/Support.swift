import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Prometheus
import SluiceMetrics
import Testing

@testable import OrderServiceCore

/// A logger that writes nothing.
let quietLogger = Logger(label: "OrderServiceTests", factory: { _ in SwiftLogNoOpLogHandler() })

/// The application for `backend`, listening on a free loopback port (for `.live`).
func testApplication(
    _ backend: some OrderBackend,
    registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
    maxBodyBytes: Int = 4_096
) -> Application<RouterResponder<BasicRequestContext>> {
    var options = ServiceOptions()
    options.port = 0
    options.maxBodyBytes = maxBodyBytes
    return makeApplication(backend: backend, registry: registry, options: options, logger: quietLogger)
}

/// Both backends, as the routes see them.
enum BackendKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sluice, mutex

    func make(_ state: ShopState = ShopState(), registry: PrometheusCollectorRegistry? = nil) -> any OrderBackend {
        let metrics = registry.map {
            StoreMetrics(actionCases: ShopAction.caseNames, factory: PrometheusMetricsFactory(registry: $0))
        }
        switch self {
        case .sluice:
            return SluiceBackend(
                initialState: state,
                instrumentation: metrics?.instrumentation(caseName: { $0.caseName }),
                logger: quietLogger
            )
        case .mutex:
            return MutexBackend(initialState: state, metrics: metrics, logger: quietLogger)
        }
    }

    var testDescription: String { rawValue }
}

func decode<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer?) throws -> T {
    try JSONDecoder().decode(type, from: Data((buffer ?? ByteBuffer()).readableBytesView))
}

func orderBody(customer: String = "ann", sku: String = "apple", quantity: Int = 1) -> ByteBuffer {
    ByteBuffer(string: #"{"customer":"\#(customer)","sku":"\#(sku)","quantity":\#(quantity)}"#)
}
