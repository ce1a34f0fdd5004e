import Foundation
import PostgresNIO
import Synchronization

// PostgresNIO drops a statement written to a connection that has closed without ever completing it, and its `query`
// waits for that completion even when its task is cancelled: awaited directly, such a query holds its task for ever,
// and a task group that the task belongs to never ends; waited for with `EventLoopFuture.wait()`, it holds its thread
// for ever. A connection can close between any two statements (the server ends the session, crashes or fails over,
// the network drops it), so neither the follower nor the writer nor its lease keeper awaits a statement directly:
// in async code each runs in a task of its own that the caller stops waiting for when it is cancelled
// (`abandoningOnCancel`), and what waits for statements also waits for the connection's close and cancels them then
// (`unlessClosed`, or a task group with a `waitUntilClosed` child); in blocking code each is waited for together with
// the connection's close and a timeout (`waitUnlessClosed`). A statement left behind stays suspended; that happens
// only when the connection closed while the statement was being sent.

extension PostgresConnection {
    /// Runs `body`, whose statements on this connection each go through ``abandoningOnCancel(_:)``, and returns its
    /// result; throws `PostgresError.connectionClosed` as soon as the connection closes first (`body` is cancelled,
    /// and its statements are not waited for).
    func unlessClosed<Value: Sendable>(
        _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value.self) { group in
            group.addTask { () async throws -> Value in
                try await self.waitUntilClosed()
                throw PostgresError.connectionClosed
            }
            group.addTask(operation: body)
            defer { group.cancelAll() }
            guard let value = try await group.next() else { throw CancellationError() }
            return value
        }
    }

    /// Runs `operation`, a statement on this connection, in a task of its own and returns its result; throws
    /// `CancellationError` as soon as the calling task is cancelled, without waiting for `operation` (which is
    /// cancelled too), and `PostgresError.connectionClosed` without running it when the connection has closed.
    func abandoningOnCancel<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        if isClosed { throw PostgresError.connectionClosed }
        let outcome = FirstOutcome<Value>()
        let running = Task {
            do {
                outcome.decide(.success(try await operation()))
            } catch {
                outcome.decide(.failure(error))
            }
        }
        defer { running.cancel() }
        return try await outcome.value()
    }

    /// Blocks the calling thread (never one of PostgresNIO's event loops) until `future`, a statement on this
    /// connection, completes, and returns its result.
    ///
    /// - Throws: `PostgresError.connectionClosed` as soon as the connection closes before the statement completed
    ///   (its outcome is then unknown); ``StatementTimedOut`` when it did not complete within `timeout`, after
    ///   closing the connection (its outcome is unknown too); the statement's own error.
    func waitUnlessClosed<Value: Sendable>(for future: EventLoopFuture<Value>, timeout: Duration) throws -> Value {
        let outcome = BlockingOutcome<Value>()
        // The statement's callback is registered first: when both have completed, the statement's result wins.
        future.whenComplete { outcome.decide($0) }
        closeFuture.whenComplete { _ in outcome.decide(.failure(PostgresError.connectionClosed)) }
        guard let result = outcome.wait(timeout: timeout) else {
            let closing: EventLoopFuture<Void> = close()
            _ = closing
            throw StatementTimedOut(after: timeout)
        }
        return try result.get()
    }

    /// Returns when this connection has closed (on either side, for any reason); throws `CancellationError` when the
    /// task is cancelled first.
    func waitUntilClosed() async throws {
        let outcome = FirstOutcome<Void>()
        closeFuture.whenComplete { _ in outcome.decide(.success(())) }
        try await outcome.value()
    }
}

/// A statement got no answer within its timeout (``PostgresJournalConfiguration/statementTimeout`` for the writer):
/// its outcome is unknown.
struct StatementTimedOut: Error, CustomStringConvertible {
    var after: Duration

    var description: String { "no answer to the statement within \(after)" }
}

/// The first outcome of a statement or of its connection's close, handed from the event loop to a thread that
/// blocks for it (the semaphore orders the two); later ones are ignored.
private final class BlockingOutcome<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, any Error>?>(nil)
    private let decided = DispatchSemaphore(value: 0)

    /// Records `result` if nothing was decided yet, and wakes the waiting thread.
    func decide(_ result: Result<Value, any Error>) {
        let isFirst = self.result.withLock { current in
            guard current == nil else { return false }
            current = result
            return true
        }
        if isFirst { decided.signal() }
    }

    /// The decided outcome, or `nil` when there is none within `timeout`.
    func wait(timeout: Duration) -> Result<Value, any Error>? {
        let (nanoseconds, overflow) = max(0, timeout.milliseconds).multipliedReportingOverflow(by: 1_000_000)
        let deadline: DispatchTime = overflow ? .distantFuture : .now() + .nanoseconds(Int(nanoseconds))
        guard decided.wait(timeout: deadline) == .success else { return nil }
        return result.withLock { $0 }
    }
}

/// The first outcome of a race (an operation's result, a connection's close) or the cancellation of the task that
/// waits for it, whichever comes first; later ones are ignored.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private enum State {
        case undecided
        case waiting(CheckedContinuation<Value, any Error>)
        case decided(Result<Value, any Error>)
        case resumed
    }

    private let state = Mutex(State.undecided)

    /// Records `result` if nothing was decided yet, and resumes the waiting task with it.
    func decide(_ result: Result<Value, any Error>) {
        let waiting: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .undecided:
                state = .decided(result)
                return nil
            case .waiting(let continuation):
                state = .resumed
                return continuation
            case .decided, .resumed:
                return nil
            }
        }
        waiting?.resume(with: result)
    }

    /// The decided outcome, or `CancellationError` when the task is cancelled before there is one.
    func value() async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let decided: Result<Value, any Error>? = state.withLock { state in
                    switch state {
                    case .undecided:
                        state = .waiting(continuation)
                        return nil
                    case .decided(let result):
                        state = .resumed
                        return result
                    case .waiting, .resumed:
                        preconditionFailure("FirstOutcome.value(): awaited twice")
                    }
                }
                if let decided { continuation.resume(with: decided) }
            }
        } onCancel: {
            decide(.failure(CancellationError()))
        }
    }
}
