import Sluice

/// What Delay.md's blocks use without declaring it.
extension DelaySnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction
}
