import CSluiceSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` on a new thread of its own, outside Swift's cooperative pool and Dispatch's pools.
///
/// For work that blocks for long (the journal's writer waits for pending actions and for `fsync`) and must make
/// progress while every thread of those pools is blocked waiting for it.
package func startThread(_ body: @escaping @Sendable () -> Void) {
    guard tryStartThread(body) else {
        fatalError("Sluice: could not start a thread (pthread_create failed)")
    }
}

/// Runs `body` on a new thread of its own, as ``startThread(_:)`` does; `false` if no thread could be started (for
/// work that the caller can do itself instead).
package func tryStartThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    #if canImport(Darwin)
    var thread: pthread_t?
    #else
    var thread = pthread_t()
    #endif
    let result = pthread_create(
        &thread,
        nil,
        { context in
            #if canImport(Darwin)
            let body = Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue()
            #else
            let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
            #endif
            body.run()
            return nil
        },
        context
    )
    guard result == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        return false
    }
    #if canImport(Darwin)
    pthread_detach(thread!)
    #else
    pthread_detach(thread)
    #endif
    return true
}

/// The closure a thread started by ``startThread(_:)`` runs, passed through `pthread_create`'s context pointer.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}
