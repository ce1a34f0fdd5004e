import Sluice

/// What Effects.md's blocks use without declaring it.
extension EffectsSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let store = Store<AppState, AppAction>(initialState: AppState(), reducer: DocExample.appReducer)
    static let client = DocExample.client
    static let appReducer = DocExample.appReducer
    static let searchClient = DocExample.client
}
