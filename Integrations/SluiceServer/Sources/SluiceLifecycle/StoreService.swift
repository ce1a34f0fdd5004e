public import Logging
public import ServiceLifecycle
public import Sluice
public import SluiceJournal

/// A swift-service-lifecycle `Service` that owns a store, and its journal's writer when it journals: it runs until
/// graceful shutdown, then stops the store in order and reports what it did.
///
/// ```swift
/// let journal = try Journal(directory: "/var/lib/orders")
/// let store = try Store<Orders, OrderAction>(
///     recoveringFrom: journal,
///     durability: .groupCommit(interval: .milliseconds(2)),
///     initialState: Orders(),
///     reducer: ordersReducer
/// )
/// let group = ServiceGroup(
///     services: [StoreService(store: store, journal: journal, label: "orders", logger: logger), server],
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// While it runs, the service runs the journal's writer (``SluiceJournal/Journal/run()``), which `.groupCommit` needs. On
/// graceful shutdown (or when its task is cancelled, or when the journal's writer fails) it:
///
/// 1. stops the store with ``Sluice/Store/shutdown(timeout:)``: new actions are refused, the runs that
///    time-based modifiers owe run now, and the running effects are awaited up to `shutdownTimeout`, then
///    cancelled;
/// 2. saves a final snapshot (``SluiceJournal/Journal/snapshot(_:reducerVersion:)-(Store<State,Action>,_)``), so that the
///    next start replays nothing;
/// 3. closes the journal (``SluiceJournal/Journal/close()``): writes and syncs what is pending, and releases the
///    directory;
/// 4. logs what it did, at `info` (`notice` when it had to cancel work, `error` when a step failed), with the
///    figures as metadata, and hands them to `onStopped`.
///
/// Put it before the services that dispatch to the store (an HTTP server) in the group: a service group shuts
/// its services down in reverse order, so the server stops taking requests before the store stops taking actions.
/// A service whose task is cancelled rather than shut down gracefully cancels the running effects at once.
///
/// - Throws: From ``run()``, the error that stopped the journal's writer, after the store was stopped.
public struct StoreService<State: Sendable, Action: Sendable>: Service {
    private let store: Store<State, Action>
    private let journal: Journal?
    private let saveSnapshot: (@Sendable () throws(JournalError) -> UInt64)?
    private let label: String
    private let shutdownTimeout: Duration
    private let logger: Logger
    private let onStopped: @Sendable (StoreServiceReport) -> Void

    /// Creates the service of a store without a journal.
    ///
    /// - Parameters:
    ///   - store: The store to stop on graceful shutdown.
    ///   - label: Names the store in the log entries (metadata `sluice.store`).
    ///   - shutdownTimeout: How long to wait for the store's running effects before cancelling them; not
    ///     negative.
    ///   - logger: Receives what the service did.
    ///   - onStopped: Receives the same figures once the store is stopped, before ``run()`` returns.
    public init(
        store: Store<State, Action>,
        label: String = "store",
        shutdownTimeout: Duration = .seconds(10),
        logger: Logger,
        onStopped: @escaping @Sendable (StoreServiceReport) -> Void = { _ in }
    ) {
        self.store = store
        self.journal = nil
        self.saveSnapshot = nil
        self.label = label
        self.shutdownTimeout = shutdownTimeout
        self.logger = logger
        self.onStopped = onStopped
    }

    /// Creates the service of a store that journals to `journal`: the service also runs the journal's writer,
    /// saves a final snapshot and closes the journal.
    ///
    /// - Parameters:
    ///   - store: The store to stop on graceful shutdown; it must journal to `journal`.
    ///   - journal: The store's journal. Do not run its writer elsewhere: the service runs it.
    ///   - reducerVersion: The version of the reducer, stored with the final snapshot.
    ///   - label: Names the store in the log entries (metadata `sluice.store`).
    ///   - shutdownTimeout: How long to wait for the store's running effects before cancelling them; not
    ///     negative.
    ///   - logger: Receives what the service did.
    ///   - onStopped: Receives the same figures once the journal is closed, before ``run()`` returns.
    public init(
        store: Store<State, Action>,
        journal: Journal,
        reducerVersion: Int = 0,
        label: String = "store",
        shutdownTimeout: Duration = .seconds(10),
        logger: Logger,
        onStopped: @escaping @Sendable (StoreServiceReport) -> Void = { _ in }
    ) where State: Encodable {
        self.store = store
        self.journal = journal
        self.saveSnapshot = { () throws(JournalError) in
            try journal.snapshot(store, reducerVersion: reducerVersion)
        }
        self.label = label
        self.shutdownTimeout = shutdownTimeout
        self.logger = logger
        self.onStopped = onStopped
    }

    /// What ended the running phase.
    private enum Event: Sendable {
        case shutdownRequested
        case writerStopped(JournalError?)
    }

    /// Runs the journal's writer until graceful shutdown or cancellation, then stops the store, saves the final
    /// snapshot and closes the journal (see ``StoreService``).
    ///
    /// - Throws: The error that stopped the journal's writer, if one did.
    public func run() async throws {
        let writerError: JournalError? = await withTaskGroup(of: Event.self) { group in
            if let journal {
                group.addTask {
                    do throws(JournalError) {
                        try await journal.run()
                        return .writerStopped(nil)
                    } catch {
                        return .writerStopped(error)
                    }
                }
            }
            group.addTask {
                // Throws only when the task is cancelled: the store is stopped then too.
                try? await gracefulShutdown()
                return .shutdownRequested
            }
            var writerError: JournalError?
            if case .writerStopped(let error) = await group.next() {
                writerError = error
                if let error {
                    logger.error(
                        "journal writer failed; stopping the store",
                        metadata: ["sluice.store": .string(label), "sluice.error": .string("\(error)")]
                    )
                }
            }
            await stop(writerError: writerError)
            // The journal is closed: its writer returns. The graceful-shutdown waiter is cancelled if still waiting.
            group.cancelAll()
            while let event = await group.next() {
                if case .writerStopped(let error?) = event, writerError == nil { writerError = error }
            }
            return writerError
        }
        if let writerError { throw writerError }
    }

    /// Stops the store, saves the snapshot, closes the journal, and reports.
    private func stop(writerError: JournalError?) async {
        let started = ContinuousClock.now
        let shutdown = await store.shutdown(timeout: shutdownTimeout)
        var report = StoreServiceReport(shutdown: shutdown, timeout: shutdownTimeout)
        if let saveSnapshot, let journal {
            do throws(JournalError) {
                report.snapshotSequence = try saveSnapshot()
            } catch {
                report.snapshotError = error
            }
            journal.close()
            report.lastSequence = journal.lastSequence
            report.durableThrough = journal.durableThrough
        }
        report.duration = ContinuousClock.now - started
        report.writerError = writerError
        log(report)
        onStopped(report)
    }

    private func log(_ report: StoreServiceReport) {
        var metadata: Logger.Metadata = [
            "sluice.store": .string(label),
            "sluice.flushed_runs": .stringConvertible(report.shutdown.flushedRuns),
            "sluice.finished_tasks": .stringConvertible(report.shutdown.finishedTasks),
            "sluice.cancelled_tasks": .stringConvertible(report.shutdown.cancelledTasks),
            "sluice.refused_dispatches": .stringConvertible(report.shutdown.refusedDispatches),
            "sluice.shutdown_duration": .string("\(report.duration)"),
        ]
        if let sequence = report.snapshotSequence {
            metadata["sluice.snapshot_sequence"] = .stringConvertible(sequence)
        }
        if let last = report.lastSequence, let durable = report.durableThrough {
            metadata["sluice.last_sequence"] = .stringConvertible(last)
            metadata["sluice.durable_through"] = .stringConvertible(durable)
        }
        if report.shutdown.cancelledTasks > 0 {
            logger.notice(
                """
                store shutdown timed out after \(report.timeout): cancelled \(report.shutdown.cancelledTasks) \
                running effect or async side-effect task(s) that had not finished
                """,
                metadata: metadata
            )
        }
        if let error = report.snapshotError {
            logger.error(
                "final snapshot failed: \(error)",
                metadata: metadata
            )
        }
        if let unwritten = report.unwrittenActions, unwritten > 0 {
            logger.error(
                "journal closed with \(unwritten) recorded action(s) not on stable storage",
                metadata: metadata
            )
        }
        logger.info("store stopped", metadata: metadata)
    }
}

/// What a ``StoreService`` did when it stopped its store.
public struct StoreServiceReport: Sendable {
    /// What ``Sluice/Store/shutdown(timeout:)`` did: the owed runs it ran, the tasks that finished, the tasks it
    /// cancelled at the timeout, the dispatches it refused.
    public var shutdown: ShutdownReport
    /// The timeout given to the store's shutdown.
    public var timeout: Duration
    /// The time from the start of the store's shutdown to the journal closed.
    public var duration: Duration = .zero
    /// The sequence number that the final snapshot covers; `nil` without a journal, or when it failed.
    public var snapshotSequence: UInt64?
    /// Why the final snapshot failed, when it did.
    public var snapshotError: JournalError?
    /// The journal's last sequence number once closed; `nil` without a journal.
    public var lastSequence: UInt64?
    /// The sequence number through which the journal was on stable storage once closed; `nil` without a journal.
    public var durableThrough: UInt64?
    /// The error that stopped the journal's writer before shutdown, if one did.
    public var writerError: JournalError?

    /// Creates a report of a store's shutdown, with nothing about a journal yet.
    ///
    /// - Parameters:
    ///   - shutdown: What the store's shutdown did.
    ///   - timeout: The timeout that it was given.
    public init(shutdown: ShutdownReport, timeout: Duration) {
        self.shutdown = shutdown
        self.timeout = timeout
    }

    /// The recorded actions that the closed journal does not hold on stable storage (lost with the process);
    /// `nil` without a journal.
    public var unwrittenActions: UInt64? {
        guard let lastSequence, let durableThrough else { return nil }
        return lastSequence > durableThrough ? lastSequence - durableThrough : 0
    }

    /// Whether the shutdown abandoned work: cancelled running tasks, or left recorded actions unwritten.
    public var abandonedWork: Bool {
        shutdown.cancelledTasks > 0 || (unwrittenActions ?? 0) > 0
    }
}
