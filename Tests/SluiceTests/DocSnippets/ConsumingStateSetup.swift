import Sluice

/// What ConsumingState.md's blocks use without declaring it.
extension ConsumingStateSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let store = Store<AppState, AppAction>(initialState: AppState(), reducer: DocExample.appReducer)

    static func scheduleRender() {}
    static func draw(_ count: Int) {}
    static func render(_ cart: DocExample.CartState) {}
    static func show(_ total: Int) {}
}
