import Sluice

/// What Debounce.md's blocks use without declaring it.
extension DebounceSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let snapshotWriter = DocExample.client
}
