import PostgresNIO
import Synchronization

// PostgresNIO drops a statement written to a connection that has closed without ever completing it, and its `query`
// waits for that completion even when its task is cancelled: awaited directly, such a query holds its task for ever,
// and a task group that the task belongs to never ends. A connection can close between any two statements (the
// server ends the session, the network drops it), so the follower never awaits a statement directly: each runs in a
// task of its own that the caller stops waiting for when it is cancelled (`abandoningOnCancel`), and what waits for
// statements also waits for the connection's close and cancels them then (`unlessClosed`, or a task group with a
// `waitUntilClosed` child). A statement left behind stays suspended; that happens only when the connection closed
// while the statement was being sent.

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

    /// Returns when this connection has closed (on either side, for any reason); throws `CancellationError` when the
    /// task is cancelled first.
    func waitUntilClosed() async throws {
        let outcome = FirstOutcome<Void>()
        closeFuture.whenComplete { _ in outcome.decide(.success(())) }
        try await outcome.value()
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
