import Sluice

/// What TakeLeading.md's blocks use without declaring it.
extension TakeLeadingSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let quoteService = DocExample.client
}
