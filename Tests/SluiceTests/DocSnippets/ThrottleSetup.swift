import Sluice

/// What Throttle.md's blocks use without declaring it.
extension ThrottleSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let appReducer = DocExample.appReducer
    static let metrics = DocExample.client
}
