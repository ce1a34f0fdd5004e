import Sluice

/// What Shutdown.md's blocks use without declaring it.
extension ShutdownSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let store = Store<AppState, AppAction>(initialState: AppState(), reducer: DocExample.appReducer)
}
