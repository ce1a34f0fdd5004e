import Sluice

/// What WritingMiddleware.md's blocks use without declaring it: the order service of GettingStarted.md.
extension WritingMiddlewareSnippets {
    typealias OrderState = DocExample.OrderState
    typealias OrderAction = DocExample.OrderAction

    static let orders = DocExample.orders
}
