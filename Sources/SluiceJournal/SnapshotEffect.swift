public import Sluice

extension Middlewares {
    /// A side effect that saves the store's state in `journal` once the actions pause: a debounced
    /// ``Journal/snapshot(_:reducerVersion:)-(MiddlewareAPI<State,Action>,_)`` that runs on the modifier's
    /// scheduler, never inside a dispatch, so that encoding a large state holds up no request.
    ///
    /// ```swift
    /// let store = try Store<Counter, CounterAction>(
    ///     recoveringFrom: journal,
    ///     durability: .groupCommit(interval: .milliseconds(2)),
    ///     initialState: Counter(),
    ///     reducer: counterReducer,
    ///     middleware: [Middleware(Middlewares.snapshot(to: journal, debounce: .seconds(5), maxWait: .seconds(60)))]
    /// )
    /// ```
    ///
    /// A snapshot shortens recovery to the actions after it, and lets the journal remove the segments that no
    /// recovery needs. `maxWait` bounds the time between two snapshots under steady load (see
    /// `debounce(_:maxWait:runs:on:_:)`). A snapshot that fails with an error
    /// that stops the journal reaches `onError` and the store's error channel as every journal error does; one that
    /// cannot be encoded reaches the store's error channel as an `EffectFailure` from
    /// `EffectFailure.Source.journal`; after ``Journal/close()`` (during shutdown) nothing is saved.
    ///
    /// - Parameters:
    ///   - journal: The journal that the store records to.
    ///   - interval: How long the actions must pause before a snapshot is taken.
    ///   - maxWait: The longest time a snapshot waits under steady load; `nil` (the default) for no limit.
    ///   - reducerVersion: The version of the reducer, stored with each snapshot.
    public static func snapshot<State: Encodable & Sendable, Action: Sendable>(
        to journal: Journal,
        debounce interval: Duration,
        maxWait: Duration? = nil,
        reducerVersion: Int = 0
    ) -> SideEffect<State, Action> {
        debounce(
            interval,
            maxWait: maxWait,
            runs: .onScheduler,
            SideEffect<State, Action> { _, api in
                do throws(JournalError) {
                    try journal.snapshot(api, reducerVersion: reducerVersion)
                } catch {
                    if case .unencodable = error {
                        api.core.work.report(error, wasCancelled: false) {
                            EffectFailure(error: error, source: .journal)
                        }
                    }
                }
            }
        )
    }
}
