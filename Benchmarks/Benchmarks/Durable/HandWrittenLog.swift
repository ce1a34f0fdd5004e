import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The floor of the area: the write-ahead log a service developer writes by hand for durable acknowledgements.
///
/// A producer changes the state, appends its record (a sequence number and the value, 16 bytes; no checksum) to a
/// buffer and registers its continuation, all under one `Mutex`, and wakes the writer when the buffer was empty.
/// The writer, a thread of its own, takes the buffer and its waiters under the same `Mutex`, writes the buffer,
/// `fdatasync`s the file, then resumes the waiters of that batch. What arrives while it syncs is the next batch.
final class HandWrittenLog: Sendable {
    private struct State: ~Copyable {
        var tally = Tally()
        var nextSequence: UInt64 = 1
        var buffer: [UInt8] = []
        var waiters: [CheckedContinuation<Void, any Error>] = []
        var isStopped = false
    }

    private let state = Mutex(State())
    private let file: Int32
    /// Signalled when the buffer stops being empty, and to stop.
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    init(path: String) throws {
        file = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard file >= 0 else { throw POSIXError(.EIO) }
        let thread = Thread { [self] in
            writeUntilStopped()
            stopped.signal()
        }
        thread.start()
    }

    /// Applies `value` and returns once its record is on stable storage.
    func append(_ value: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let wasEmpty = state.withLock { state in
                state.tally.count &+= value
                let sequence = state.nextSequence
                state.nextSequence += 1
                let wasEmpty = state.buffer.isEmpty
                withUnsafeBytes(of: sequence.littleEndian) { state.buffer.append(contentsOf: $0) }
                withUnsafeBytes(of: Int64(value).littleEndian) { state.buffer.append(contentsOf: $0) }
                state.waiters.append(continuation)
                return wasEmpty
            }
            if wasEmpty {
                wakeUp.signal()
            }
        }
    }

    /// Writes what is pending, stops the writer and closes the file.
    func stop() {
        state.withLock { $0.isStopped = true }
        wakeUp.signal()
        stopped.wait()
        close(file)
    }

    private func writeUntilStopped() {
        // Swapped with the shared ones, so that neither side allocates once both have grown.
        var batch: [UInt8] = []
        var waiters: [CheckedContinuation<Void, any Error>] = []
        while true {
            wakeUp.wait()
            let isStopped = state.withLock { state in
                swap(&batch, &state.buffer)
                swap(&waiters, &state.waiters)
                return state.isStopped
            }
            if !batch.isEmpty {
                let synced = batch.withUnsafeBytes { writeAll($0) } && fdatasync(file) == 0
                for waiter in waiters {
                    if synced {
                        waiter.resume()
                    } else {
                        waiter.resume(throwing: POSIXError(.EIO))
                    }
                }
                batch.removeAll(keepingCapacity: true)
                waiters.removeAll(keepingCapacity: true)
            }
            if isStopped { return }
        }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(file, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}
