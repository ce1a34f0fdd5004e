import Sluice

/// What TestingWithTestScheduler.md's blocks use without declaring it: the order service of GettingStarted.md.
extension TestingWithTestSchedulerSnippets {
    typealias OrderState = DocExample.OrderState
    typealias OrderAction = DocExample.OrderAction

    static let orders = DocExample.orders
    /// The middleware of WritingMiddleware.md.
    static let dropDuplicates = Middleware<OrderState, OrderAction> { api in
        { next in
            { action in
                if case .place(let id) = action, api.state.pending.contains(id) { return }
                next(action)
            }
        }
    }

    struct SearchState: Sendable {
        var text = ""
    }

    enum SearchAction: Sendable {
        case type(String)
    }

    static let searchReducer = Reducer<SearchState, SearchAction>(mutating: { state, action in
        if case .type(let text) = action { state.text = text }
    })
}
