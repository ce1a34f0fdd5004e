import Sluice

/// What TakeLatest.md's blocks use without declaring it.
extension TakeLatestSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let quoteService = DocExample.client
}
