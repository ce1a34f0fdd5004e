import Sluice

/// What Filter.md's blocks use without declaring it.
extension FilterSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let auditMiddleware = Middleware<AppState, AppAction> { _ in { next in next } }
    static let saveEffect = DocExample.sideEffect
    static let report = DocExample.sideEffect
    static let isOrder = DocExample.isOrder
}
