public import Hummingbird
public import Logging
public import Prometheus
import Sluice
import SluiceLogging
import SluiceMetrics

/// Builds the whole service from its options: the backend (recovered from its journal when there is one), the
/// metrics, the routes, and the Hummingbird application that runs the backend as a service.
///
/// Run it with `app.runService()`: on SIGTERM or SIGINT the server stops taking connections and answers the requests
/// in flight, then the backend shuts down (for Sluice: `store.shutdown`, a final snapshot, the journal closed).
///
/// - Parameters:
///   - options: The command line.
///   - logger: The service's logger.
///   - onRunning: Called with the port once the server listens.
public func makeOrderService(
    options: ServiceOptions,
    logger: Logger,
    onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) throws -> some ApplicationProtocol {
    let registry = PrometheusCollectorRegistry()
    let metrics = StoreMetrics(actionCases: ShopAction.caseNames, factory: PrometheusMetricsFactory(registry: registry))
    switch options.backend {
    case .sluice:
        // SluiceLogging: records at `.debug`, described only when the logger's level lets them through.
        let logging: Middleware<ShopState, ShopAction> = Middlewares.logging(to: logger)
        let instrumentation: StoreInstrumentation<ShopAction> = metrics.instrumentation(caseName: { $0.caseName })
        let backend =
            if let directory = options.dataDirectory {
                try SluiceBackend(
                    recoveringFrom: directory,
                    durability: options.durability,
                    middleware: [logging],
                    instrumentation: instrumentation,
                    logger: logger
                )
            } else {
                SluiceBackend(middleware: [logging], instrumentation: instrumentation, logger: logger)
            }
        return makeApplication(backend: backend, registry: registry, options: options, logger: logger, onRunning)
    case .mutex:
        let backend = MutexBackend(metrics: metrics, logger: logger)
        return makeApplication(backend: backend, registry: registry, options: options, logger: logger, onRunning)
    }
}

/// The Hummingbird application for one backend; the backend runs as a service of it, shut down after the server.
public func makeApplication(
    backend: some OrderBackend,
    registry: PrometheusCollectorRegistry,
    options: ServiceOptions,
    logger: Logger,
    _ onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> Application<RouterResponder<BasicRequestContext>> {
    let router = makeRouter(backend: backend, registry: registry, maxBodyBytes: options.maxBodyBytes)
    return Application(
        router: router,
        configuration: .init(address: .hostname(options.host, port: options.port), serverName: "OrderService"),
        // Hummingbird runs these before its server in one service group, and shuts them down after it.
        services: [backend],
        onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? options.port) },
        logger: logger
    )
}
