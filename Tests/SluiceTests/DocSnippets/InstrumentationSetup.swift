import Sluice

/// What Instrumentation.md's blocks use without declaring it: the order service of GettingStarted.md.
extension InstrumentationSnippets {
    typealias OrderState = DocExample.OrderState
    typealias OrderAction = DocExample.OrderAction

    static let orders = DocExample.orders
    static let minimumLevel = Middlewares.LogLevel.info
}
