import Sluice

/// What LoggingAndMetrics.md's blocks use without declaring it: the order service of GettingStarted.md.
extension LoggingAndMetricsSnippets {
    typealias OrderState = DocExample.OrderState
    typealias OrderAction = DocExample.OrderAction

    static let orders = DocExample.orders
    static let minimumLevel = Middlewares.LogLevel.info
}
