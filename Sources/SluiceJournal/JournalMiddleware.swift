public import Sluice

extension Middlewares {
    /// Records each action that reaches the reducer in `journal`, in the order the reducer sees them.
    ///
    /// Put it **last** in the middleware array: it must see exactly the actions the reducer sees, after every
    /// other middleware transformed, swallowed or re-dispatched them. The store serializes its actions, so the
    /// journal's order is the reducer's order, also under concurrent dispatches.
    ///
    /// ```swift
    /// let store = Store<Counter, CounterAction>(
    ///     initialState: Counter(),
    ///     reducer: counterReducer,
    ///     middleware: [Middlewares.logging(), Middlewares.journal(journal, durability: .everyAction)]
    /// )
    /// ```
    ///
    /// A journal that holds actions must be resumed with
    /// ``Sluice/Store/init(recoveringFrom:durability:reducerVersion:migrations:initialState:reducer:middleware:dependencies:onEffectError:instrumentation:)``,
    /// which adds this middleware itself; attaching a non-empty journal here, or one journal to two stores, stops
    /// the program with a message. Once the journal has stopped after a write error, this middleware drops every
    /// action.
    ///
    /// - Parameters:
    ///   - journal: The journal to record to.
    ///   - durability: When an action is on stable storage; see ``JournalDurability``.
    public static func journal<State, Action: Encodable>(
        _ journal: Journal,
        durability: JournalDurability
    ) -> Middleware<State, Action> {
        if case .groupCommit(let interval) = durability, interval < .zero {
            usageError("Middlewares.journal: the group commit interval must not be negative, got \(interval).")
        }
        return Middleware { api in
            let buffer = journal.attach(durability, actionType: Action.self, inReducer: false)
            journal.report(to: api.core.work)
            journal.detach(when: api.storeLifetime)
            return { next in
                { action in
                    journal.withGate {
                        if journal.record(action, durability: durability, buffer: buffer) {
                            next(action)
                        }
                    }
                }
            }
        }
    }
}
