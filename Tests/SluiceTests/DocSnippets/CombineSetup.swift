import Sluice

/// What Combine.md's blocks use without declaring it.
extension CombineSnippets {
    typealias AppState = DocExample.AppState
    typealias AppAction = DocExample.AppAction

    static let appReducer = DocExample.appReducer
    static let logToFile = DocExample.sideEffect
    static let notifyWarehouse = DocExample.sideEffect
    static let isOrder = DocExample.isOrder
}
