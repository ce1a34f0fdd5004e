extension Middlewares {
    /// Runs a side effect at most once per `interval` for each key: a throttle of its own for every auction,
    /// customer or order that `key` extracts from the action.
    ///
    /// Each key behaves exactly as
    /// ``throttle(_:leading:trailing:runs:on:_:)-(Duration,_,_,_,_,SideEffect<State,Action>)`` behaves for the
    /// whole store: its own windows, its own trailing run, its runs one at a time and in the order of its actions.
    /// Keys do not affect each other: an action of one auction never drops, delays or supersedes a run of another.
    ///
    /// ```swift
    /// // At most one "price changed" broadcast a second per auction, the newest price last.
    /// let broadcast = Middlewares.throttle(.seconds(1), trailing: true, by: \AuctionAction.auctionID, priceChanged)
    /// ```
    ///
    /// A key is held only while it matters: from its first action until its window ended with nothing pending, so
    /// the memory follows the active keys. At ``Store/shutdown(timeout:)``, every key's pending trailing run runs.
    ///
    /// - Parameters:
    ///   - interval: The length of a window, as for the store-wide form.
    ///   - leading: Whether the action that opens a key's window runs at once.
    ///   - trailing: Whether the newest action of a key's window runs when the window ends.
    ///   - placement: Where a leading run happens: on `scheduler` (the default) or inside `dispatch`.
    ///   - scheduler: Where the runs happen and what time it is; by default the store's scheduler if its
    ///     dependencies set one, else a serial queue of this modifier.
    ///   - key: The key of an action. An action whose key is `nil` is not counted: the effect does not run for it
    ///     and no key's window sees it, as if a ``filter(_:_:)->SideEffect<State,Action>`` had rejected it.
    ///   - effect: The effect to throttle; only the actions it accepts count.
    @inlinable
    public static func throttle<State, Action, Key: Hashable & Sendable>(
        _ interval: Duration,
        leading: Bool = true,
        trailing: Bool = false,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        by key: @escaping @Sendable (Action) -> Key?,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        if !leading && !trailing {
            usageError("Middlewares.throttle: leading: false and trailing: false would never run the effect.")
        }
        return effect.timed(by: key, interval, "Middlewares.throttle", runs: placement, on: scheduler) {
            ThrottleStateMachine(interval: $0, leading: leading, trailing: trailing)
        }
    }

    /// Runs `run` at most once per `interval` for each key; see
    /// ``throttle(_:leading:trailing:runs:on:by:_:)-(_,_,_,_,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func throttle<State, Action, Key: Hashable & Sendable>(
        _ interval: Duration,
        leading: Bool = true,
        trailing: Bool = false,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        by key: @escaping @Sendable (Action) -> Key?,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        throttle(
            interval,
            leading: leading,
            trailing: trailing,
            runs: placement,
            on: scheduler,
            by: key,
            SideEffect(run)
        )
    }

    /// Runs a side effect once with the last action of a key after `interval` of quiet for that key, and, with
    /// `maxWait`, at least once every `maxWait` while that key's actions keep coming.
    ///
    /// Each key behaves exactly as ``debounce(_:maxWait:runs:on:_:)-(Duration,_,_,_,SideEffect<State,Action>)``
    /// behaves for the whole store; an action of one key never restarts another key's quiet time.
    ///
    /// ```swift
    /// // "Auction quiet" once an auction had no bid for 30 seconds.
    /// let quiet = Middlewares.debounce(.seconds(30), by: \AuctionAction.auctionID, announceQuiet)
    /// ```
    ///
    /// A key is held from its first action until its run happened (with `maxWait`, until its burst is over too).
    /// At ``Store/shutdown(timeout:)``, every key's pending run runs.
    ///
    /// - Parameters:
    ///   - interval: The quiet time, as for the store-wide form.
    ///   - maxWait: The longest a key's waiting run is put off; `nil` (the default) for no limit.
    ///   - placement: Where a run that an action decides happens (a zero `interval`, a late `maxWait`).
    ///   - scheduler: Where the runs happen and what time it is; by default the store's scheduler if its
    ///     dependencies set one, else a serial queue of this modifier.
    ///   - key: The key of an action; an action whose key is `nil` is not counted (the effect does not run for it).
    ///   - effect: The effect to debounce; only the actions it accepts count.
    @inlinable
    public static func debounce<State, Action, Key: Hashable & Sendable>(
        _ interval: Duration,
        maxWait: Duration? = nil,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        by key: @escaping @Sendable (Action) -> Key?,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        let maxWaitNanoseconds = checkedMaxWait(maxWait, interval: interval)
        return effect.timed(by: key, interval, "Middlewares.debounce", runs: placement, on: scheduler) {
            DebounceStateMachine(interval: $0, maxWait: maxWaitNanoseconds)
        }
    }

    /// Runs `run` once with the last action of a key after `interval` of quiet for that key; see
    /// ``debounce(_:maxWait:runs:on:by:_:)-(_,_,_,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func debounce<State, Action, Key: Hashable & Sendable>(
        _ interval: Duration,
        maxWait: Duration? = nil,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        by key: @escaping @Sendable (Action) -> Key?,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        debounce(interval, maxWait: maxWait, runs: placement, on: scheduler, by: key, SideEffect(run))
    }

    /// Runs a side effect for every action that has a key, `interval` later, in order for each key.
    ///
    /// Each key behaves exactly as ``delay(_:runs:on:_:)-(Duration,_,_,SideEffect<State,Action>)`` behaves for
    /// the whole store: its runs happen one at a time, in the order of its actions. Runs of different keys are
    /// independent, and may happen at the same time on different threads of a concurrent scheduler.
    ///
    /// A key is held while it has runs waiting. At ``Store/shutdown(timeout:)``, every key's waiting runs run.
    ///
    /// - Parameters:
    ///   - interval: How much later, as for the store-wide form.
    ///   - placement: Where the runs of a zero `interval` happen: on `scheduler` (the default) or inside `dispatch`.
    ///   - scheduler: Where the runs happen and what time it is; by default the store's scheduler if its
    ///     dependencies set one, else a serial queue of this modifier.
    ///   - key: The key of an action; an action whose key is `nil` is not counted (the effect does not run for it).
    ///   - effect: The effect to delay.
    @inlinable
    public static func delay<State, Action, Key: Hashable & Sendable>(
        _ interval: Duration,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        by key: @escaping @Sendable (Action) -> Key?,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        effect.timed(by: key, interval, "Middlewares.delay", runs: placement, on: scheduler) {
            DelayStateMachine(interval: $0)
        }
    }

    /// Runs `run` for every action that has a key, `interval` later, in order for each key; see
    /// ``delay(_:runs:on:by:_:)-(_,_,_,_,SideEffect<State,Action>)``.
    @inlinable
    public static func delay<State, Action, Key: Hashable & Sendable>(
        _ interval: Duration,
        runs placement: RunPlacement = .onScheduler,
        on scheduler: any EffectScheduler = .storeSchedulerOrOwnQueue,
        by key: @escaping @Sendable (Action) -> Key?,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        delay(interval, runs: placement, on: scheduler, by: key, SideEffect(run))
    }

    /// Runs a side effect so that each run supersedes the previous run of the same key.
    ///
    /// Each key behaves exactly as ``takeLatest(_:)-(SideEffect<State,Action>)`` behaves for the whole store: an
    /// action cancels the previous run of its own key (its `api.dispatch` becomes a no-op, its task is cancelled),
    /// then the effect runs for it. Runs of other keys go on.
    ///
    /// ```swift
    /// // The latest credit-limit lookup of each customer wins; customers do not cancel each other's.
    /// let lookups = Middlewares.takeLatest(by: \AuctionAction.bidderID, creditLookup)
    /// ```
    ///
    /// A key is held while its latest run is under way: until its synchronous call returned and the tasks it
    /// started (an `async` effect's task, `api.start`) ended. A later action of a key that is no longer held
    /// supersedes nothing. So work that a time-based modifier *inside* holds for a finished run (a delayed run, say)
    /// is not cancelled by a later action once the key is forgotten: put the time-based modifier outside
    /// (`delay(…, by: key, takeLatest(by: key, effect))`), or key it too.
    ///
    /// - Parameters:
    ///   - key: The key of an action; an action whose key is `nil` is not counted: it supersedes nothing and the
    ///     effect does not run for it.
    ///   - effect: The effect; only the actions it accepts count.
    @inlinable
    public static func takeLatest<State, Action, Key: Hashable & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        let accepts = effect.accepts
        return SideEffect(accepts: effect.acceptsKeyed(by: key), handlerChecksAcceptance: true) { storeAPI in
            let handler = effect.install(storeAPI)
            let latest = LatestRunsByKey<Key>()
            storeAPI.registerKeys { [weak latest] in latest?.keyCount ?? 0 }
            return { action, api in
                if let accepts, !accepts(action) { return }
                guard let key = key(action) else { return }
                // The run is an entry of the store's ledger, so that the key is forgotten when the run is over.
                let work = api.core.work
                let serial = latest.nextSerial()
                let token = work.beginRun(in: api.cancellation?.run) { [weak latest] in
                    latest?.finish(key, serial: serial)
                }
                let run = Cancellation(parent: api.runCancellation, run: token)
                latest.replace(key, with: run, serial: serial)?.cancel()
                handler(action, api.cancellable(by: run))
                work.endRun(token)
            }
        }
    }

    /// Runs `run` for each action so that each run supersedes the previous run of the same key; see
    /// ``takeLatest(by:_:)-(_,SideEffect<State,Action>)``.
    public static func takeLatest<State, Action, Key: Hashable & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) async -> Void
    ) -> SideEffect<State, Action> {
        takeLatest(by: key, SideEffect(run))
    }

    /// Runs `run` for each action so that each run supersedes the previous run of the same key; see
    /// ``takeLatest(by:_:)-(_,SideEffect<State,Action>)``.
    public static func takeLatest<State, Action, Key: Hashable & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        takeLatest(by: key, SideEffect(run))
    }

    /// Runs a side effect for an action only when no run of the same key is in progress: an action of a key whose
    /// run is in progress is ignored.
    ///
    /// Each key behaves exactly as ``takeLeading(_:)-(SideEffect<State,Action>)`` behaves for the whole store: a
    /// run is in progress until its synchronous call returned and the tasks it started ended. Keys do not block each
    /// other: a refresh of one auction in progress ignores that auction's refresh requests only.
    ///
    /// ```swift
    /// // One settlement at a time per auction; a second "settle" while one runs is ignored.
    /// let settle = Middlewares.takeLeading(by: \AuctionAction.auctionID, settlement)
    /// ```
    ///
    /// A key is held only while its run is in progress.
    ///
    /// - Parameters:
    ///   - key: The key of an action; an action whose key is `nil` is not counted (the effect does not run for it).
    ///   - effect: The effect; only the actions it accepts count.
    @inlinable
    public static func takeLeading<State, Action, Key: Hashable & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ effect: SideEffect<State, Action>
    ) -> SideEffect<State, Action> {
        let accepts = effect.accepts
        return SideEffect(accepts: effect.acceptsKeyed(by: key), handlerChecksAcceptance: true) { storeAPI in
            let handler = effect.install(storeAPI)
            let leading = LeadingRunsByKey<Key>()
            storeAPI.registerKeys { [weak leading] in leading?.keyCount ?? 0 }
            return { action, api in
                if let accepts, !accepts(action) { return }
                guard let key = key(action), leading.tryStart(key) else { return }
                // The run is an entry of the store's ledger, under way until its call returned and the tasks
                // started in it ended.
                let work = api.core.work
                let token = work.beginRun(in: api.cancellation?.run) { leading.finish(key) }
                let run = Cancellation(parent: api.runCancellation, run: token)
                leading.started(key, run)
                handler(action, api.cancellable(by: run))
                work.endRun(token)
            }
        }
    }

    /// Runs `run` for an action only when no run of the same key is in progress; see
    /// ``takeLeading(by:_:)-(_,SideEffect<State,Action>)``.
    public static func takeLeading<State, Action, Key: Hashable & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) async throws -> Void
    ) -> SideEffect<State, Action> {
        takeLeading(by: key, SideEffect(run))
    }

    /// Runs `run` for an action only when no run of the same key is in progress; see
    /// ``takeLeading(by:_:)-(_,SideEffect<State,Action>)``.
    public static func takeLeading<State, Action, Key: Hashable & Sendable>(
        by key: @escaping @Sendable (Action) -> Key?,
        _ run: @escaping @Sendable (Action, MiddlewareAPI<State, Action>) -> Void
    ) -> SideEffect<State, Action> {
        takeLeading(by: key, SideEffect(run))
    }
}

extension Store {
    /// The number of keys that the store's modifiers applied per key (`throttle(…, by:)`, `takeLatest(by:)`, …)
    /// hold now (for tests).
    package var perKeyModifierKeyCount: Int {
        core.work.perKeyModifierKeyCount
    }
}
