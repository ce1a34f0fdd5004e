import Foundation

/// How long a test waits for async work that should end at once before it fails: a hang guard, not a pause.
///
/// `receive(_:timeout:)` and `finish(timeout:)` return as soon as the work is done, so this bound costs nothing when
/// the code works; it only decides how long a regression takes to fail. It leaves room for a slow, loaded 2-core
/// machine, where a ready task can wait more than 30 s for a thread of the pool while other suites keep it busy;
/// under the thread sanitizer, which slows every thread several times over and keeps both cores busy for minutes
/// (a ready task waited more than 180 s there), it is ten minutes.
let hangGuard: Duration = isThreadSanitized ? .seconds(600) : .seconds(60)

/// Whether this process runs under the thread sanitizer (its runtime is linked in).
let isThreadSanitized: Bool = {
    #if canImport(Darwin)
    dlsym(UnsafeMutableRawPointer(bitPattern: -2), "__tsan_init") != nil
    #else
    dlsym(nil, "__tsan_init") != nil
    #endif
}()
