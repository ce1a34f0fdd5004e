// Not a harness benchmark: the latency of `dispatch` from 4 threads while a throttled side effect takes 10 ms of CPU
// (a snapshot being encoded) once a second, against the same store without that work (Benchmarks/README.md, "A slow
// side effect and the pipeline"):
//
//     swift build -c release --package-path Benchmarks --product SnapshotLatency
//     Benchmarks/.build/release/SnapshotLatency in-dispatch 5
//
// Arguments: the placement of the snapshot's runs (`none`: a pass-through middleware in its place, `in-dispatch`:
// `runs: .inDispatch`, `on-scheduler`: `runs: .onScheduler`, `default`: the default placement), the seconds to run
// (5), the interval between two dispatches of one thread in microseconds (100), and what the snapshot's 10 ms are
// (`cpu`, the default: computing, as encoding is; `io`: sleeping, as a write waiting for the disk is, which takes no
// CPU from the dispatching threads).
//
// Each of the 4 threads dispatches on a fixed timetable, one action every interval, and a dispatch's latency counts
// from its slot in the timetable, not from when the thread got to it: a dispatch that waited 10 ms for the pipeline
// makes the ones behind it late too, as requests queued behind a blocked one would be (the correction for
// coordinated omission of wrk2). Prints the median, p99, p99.9 and the maximum, in microseconds.

import Dispatch
import Sluice

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Counter: Sendable {
    var count = 0
}

let reducer = Reducer<Counter, Int>(mutating: { state, action in state.count &+= action })

let passThrough = Middleware<Counter, Int> { _ in
    { next in
        { action in next(action) }
    }
}

func nowNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Sleeps until `deadline` on the monotonic clock (returns at once if it has passed).
func sleep(until deadline: UInt64) {
    var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
}

/// 10 ms of CPU work, as encoding a large state would take.
@inline(never)
func encodeSnapshot(_ state: Counter) -> Int {
    let end = nowNanoseconds() + 10_000_000
    var checksum = state.count
    while nowNanoseconds() < end {
        for index in 0..<1_000 {
            checksum = checksum &* 31 &+ index
        }
    }
    return checksum
}

/// What a thread runs; a class so that a C thread entry point can take it.
final class ThreadWork: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

func startThread(_ work: ThreadWork) -> pthread_t {
    #if canImport(Glibc)
    var handle = pthread_t()
    #else
    var handle: pthread_t?
    #endif
    let context = Unmanaged.passRetained(work).toOpaque()
    let error = pthread_create(
        &handle,
        nil,
        { context in
            Unmanaged<ThreadWork>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        },
        context
    )
    precondition(error == 0, "pthread_create failed: \(error)")
    #if canImport(Glibc)
    return handle
    #else
    return handle!
    #endif
}

/// The latencies that one thread measured, in nanoseconds.
final class Latencies: @unchecked Sendable {
    // @unchecked: each instance is written by one thread, and read after `pthread_join` of that thread.
    var values: [UInt64] = []
}

let arguments = CommandLine.arguments
let placement = arguments.count > 1 ? arguments[1] : "in-dispatch"
let seconds = arguments.count > 2 ? UInt64(arguments[2]) ?? 5 : 5
let interval = (arguments.count > 3 ? UInt64(arguments[3]) ?? 100 : 100) * 1_000
let waitsForIO = arguments.count > 4 && arguments[4] == "io"

let snapshots = SideEffect<Counter, Int> { _, api in
    if waitsForIO {
        sleep(until: nowNanoseconds() + 10_000_000)
    } else {
        let checksum = encodeSnapshot(api.state)
        withExtendedLifetime(checksum) {}
    }
}
let middleware: Middleware<Counter, Int>
switch placement {
case "none": middleware = passThrough
case "in-dispatch": middleware = Middleware(Middlewares.throttle(.seconds(1), runs: .inDispatch, snapshots))
case "on-scheduler": middleware = Middleware(Middlewares.throttle(.seconds(1), runs: .onScheduler, snapshots))
case "default": middleware = Middleware(Middlewares.throttle(.seconds(1), snapshots))
default:
    print("unknown placement \(placement)")
    exit(1)
}
let store = Store(initialState: Counter(), reducer: reducer, middleware: [middleware])

let threads = 4
let start = nowNanoseconds() + 50_000_000
let end = start + seconds * 1_000_000_000
let latencies = (0..<threads).map { _ in Latencies() }
let handles = (0..<threads).map { index in
    startThread(
        ThreadWork {
            let recorded = latencies[index]
            recorded.values.reserveCapacity(Int(seconds * 1_000_000_000 / interval) + 1)
            // The threads' timetables are offset by a fraction of the interval, so they do not all fire together.
            var slot = start + UInt64(index) * interval / UInt64(threads)
            while slot < end {
                sleep(until: slot)
                store.dispatch(1)
                recorded.values.append(nowNanoseconds() - slot)
                slot += interval
            }
        }
    )
}
for handle in handles {
    pthread_join(handle, nil)
}
let all = latencies.flatMap(\.values).sorted()
func percentile(_ fraction: Double) -> Double {
    Double(all[min(all.count - 1, Int(Double(all.count) * fraction))]) / 1_000
}
func format(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}
print(
    "\(placement) (\(waitsForIO ? "io" : "cpu")): \(all.count) dispatches, latency (µs) p50 \(format(percentile(0.5))) p99 \(format(percentile(0.99))) "
        + "p99.9 \(format(percentile(0.999))) max \(format(Double(all.last ?? 0) / 1_000)), count \(store.state.count)"
)
