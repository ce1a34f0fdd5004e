// The swift-metrics recipe of the DocC article "Logging and Metrics in a Service" (LoggingAndMetrics.md), verbatim:
// the article's block is not compiled in the library's tests, so it is compiled here. (The service itself uses
// `DispatchMetrics`, which makes its metrics once with an explicit factory instead of one per action.)

import Metrics
import Sluice

extension StoreInstrumentation {
    /// Reports each action to swift-metrics: its duration by case name, how often and how long dispatches waited
    /// for the store, and the queue depth.
    static func metrics(prefix: String = "sluice") -> StoreInstrumentation {
        let waits = Counter(label: "\(prefix)_dispatch_waits_total")
        let waited = Timer(label: "\(prefix)_dispatch_wait_seconds")
        let depth = Recorder(label: "\(prefix)_queue_depth")
        return StoreInstrumentation { measurement in
            Timer(label: "\(prefix)_dispatch_seconds", dimensions: [("action", measurement.actionCaseName)])
                .recordNanoseconds(measurement.durationNanoseconds)
            depth.record(measurement.queueDepth)
            if measurement.waited > .zero {
                waits.increment()
                waited.recordNanoseconds(measurement.waitedNanoseconds)
            }
        }
    }
}
