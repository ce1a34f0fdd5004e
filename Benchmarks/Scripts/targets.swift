// Reads the text output of `swift package benchmark` (standard input) and prints the dispatch targets of
// Benchmarks/README.md as a Markdown table, each measure computed from the medians (p50) of that one run.
//
//     cd Benchmarks
//     swift package benchmark --no-progress | tee run.txt
//     swift Scripts/targets.swift < run.txt

import Foundation

struct Result {
    var wallClockNanoseconds: Double?
    var mallocs: Double?
    var blockedThreads: Double?
}

/// Nanoseconds per unit named in a row label such as `Time (wall clock) (ns) *`.
func nanoseconds(unitIn label: String) -> Double {
    if label.contains("(μs)") || label.contains("(us)") { return 1e3 }
    if label.contains("(ms)") { return 1e6 }
    if label.contains("(s)") { return 1e9 }
    return 1
}

/// The value scale in a row label such as `Malloc (total) (K) *`.
func scale(in label: String) -> Double {
    if label.contains("(K)") { return 1e3 }
    if label.contains("(M)") { return 1e6 }
    if label.contains("(G)") { return 1e9 }
    return 1
}

var results: [String: Result] = [:]
var target = ""
var benchmark = ""
var previous = ""
while let line = readLine() {
    defer { previous = line }
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    if trimmed.isEmpty || trimmed.hasPrefix("╒") || trimmed.hasPrefix("╞") || trimmed.hasPrefix("├")
        || trimmed.hasPrefix("╘") || trimmed.hasPrefix("=")
    {
        continue
    }
    if previous.hasPrefix("=") && !previous.isEmpty && previous.allSatisfy({ $0 == "=" }) {
        target = trimmed
        continue
    }
    if trimmed.hasPrefix("│") {
        let cells = trimmed.split(separator: "│").map { $0.trimmingCharacters(in: .whitespaces) }
        // Metric, p0, p25, p50, p75, p90, p99, p100, samples.
        guard cells.count >= 4, let median = Double(cells[3]) else { continue }
        let label = cells[0]
        let key = "\(target):\(benchmark)"
        if label.hasPrefix("Time (wall clock)") {
            results[key, default: Result()].wallClockNanoseconds = median * nanoseconds(unitIn: label)
        } else if label.hasPrefix("Malloc (total)") {
            results[key, default: Result()].mallocs = median * scale(in: label)
        } else if label.hasPrefix("Blocked-threads") {
            results[key, default: Result()].blockedThreads = median * scale(in: label)
        }
        continue
    }
    benchmark = trimmed
}

func time(_ key: String) -> Double? {
    results[key]?.wallClockNanoseconds
}

func format(_ value: Double?, _ unit: String = "", digits: Int = 1) -> String {
    guard let value else { return "not measured" }
    return String(format: "%.\(digits)f", value) + unit
}

func row(_ measure: String, _ target: String, _ measured: String, _ met: Bool?) {
    let verdict = met.map { $0 ? "met" : "**missed**" } ?? "n/a"
    print("| \(measure) | \(target) | \(measured) | \(verdict) |")
}

print("| measure | target | measured (medians, one run) | |")
print("|---|---|---|---|")

let floor = time("Floors:Reducer-in-pthread_mutex_t")
let plain = time("DispatchPath:0-middleware")
if let floor, let plain {
    let ratio = plain / floor
    row(
        "dispatch, no middleware, no subscribers",
        "<= 2x the pthread_mutex_t-guarded reducer call",
        "\(format(plain, " ns")) = \(format(ratio, "x", digits: 2)) of \(format(floor, " ns"))",
        ratio <= 2
    )
}

if let plain, let one = time("DispatchPath:1-middleware"), let ten = time("DispatchPath:10-middleware") {
    let marginal = (ten - one) / 9
    let average = (ten - plain) / 10
    row(
        "each pass-through middleware",
        "<= 3 ns added",
        "\(format(marginal, " ns")) each after the first ((t10 - t1) / 9); the first adds \(format(one - plain, " ns"))"
            + " (pipeline hand-off); \(format(average, " ns")) on average over 10",
        marginal <= 3
    )
}

if let plain, let one = time("Subscribers:1-whole-state-subscriber"),
    let thousand = time("Subscribers:1000-whole-state-subscribers")
{
    let marginal = (thousand - one) / 999
    row(
        "each whole-state subscriber notified",
        "<= 10 ns",
        "\(format(marginal, " ns")) each ((t1000 - t1) / 999); the first adds \(format(one - plain, " ns"))"
            + " (pipeline hand-off)",
        marginal <= 10
    )
}

if let plain, let thousand = time("Subscribers:1000-unchanged-key-path-subscribers") {
    let each = (thousand - plain) / 1000
    row(
        "each `subscribe(to:)` subscriber whose value did not change",
        "<= 5 ns",
        "\(format(each, " ns")) each ((t1000 - t0) / 1000)",
        each <= 5
    )
}

for suffix in ["", "-via-withKey"] {
    if let small = time("LargeState:Append-to-1K\(suffix)"), let large = time("LargeState:Append-to-1M\(suffix)") {
        let ratio = large / small
        row(
            "append to a 1,000,000-element array\(suffix.isEmpty ? "" : ", withKey in 10 modules")",
            "<= 1.5x the 1,000-element case",
            "\(format(large, " ns")) / \(format(small, " ns")) = \(format(ratio, "x", digits: 2))",
            ratio <= 1.5
        )
    }
}

for key in ["DispatchPath:0-middleware", "DispatchPath:5-middleware", "Subscribers:10-whole-state-subscribers"] {
    if let mallocs = results[key]?.mallocs {
        // The malloc count is per iteration of 1,000 dispatches.
        row(
            "heap allocations per dispatch, \(key)",
            "0",
            "\(format(mallocs / 1000, digits: 3)) (\(format(mallocs, digits: 0)) per 1,000)",
            mallocs == 0
        )
    }
}

if let one = time("Concurrency:1-thread"), let four = time("Concurrency:4-threads") {
    let ratio = one / four
    row(
        "4 threads dispatching together",
        "total throughput >= half of one thread's",
        "\(format(four, " ns")) per dispatch vs \(format(one, " ns")): \(format(ratio, "x", digits: 2)) of one thread's",
        ratio >= 0.5
    )
}

if let plain {
    let oneMiddleware = time("DispatchPath:1-middleware")
    for (name, key) in [("filter", "Modifiers:Skipped-by-filter"), ("throttle", "Modifiers:Dropped-by-throttle")] {
        guard let skipped = time(key) else {
            row("action skipped by \(name)", "<= 30 ns above a plain dispatch", "not measured", nil)
            continue
        }
        let modifierOnly =
            oneMiddleware.map { ", \(format(skipped - $0, " ns")) above 1 pass-through middleware" } ?? ""
        row(
            "action skipped by \(name)",
            "<= 30 ns above a plain dispatch",
            "\(format(skipped, " ns")): \(format(skipped - plain, " ns")) above a dispatch without middleware"
                + modifierOnly,
            skipped - plain <= 30
        )
    }
}

// Issue 11: the pipeline's entry, contention and `send`.

if let plain, let one = time("DispatchPath:1-middleware") {
    row(
        "the first pass-through middleware (pipeline entry), `1-middleware - 0-middleware`",
        "<= +12 ns",
        "\(format(one, " ns")) - \(format(plain, " ns")) = +\(format(one - plain, " ns"))",
        one - plain <= 12
    )
}

if let four = time("Concurrency:4-threads"), let floor = time("Concurrency:4-threads-pthread_mutex_t") {
    let ratio = four / floor
    let middleware =
        time("Concurrency:4-threads-1-middleware").map {
            "; through 1 middleware \(format($0 / floor, "x", digits: 2))"
        } ?? ""
    row(
        "4 threads dispatching vs 4 threads on the contended `pthread_mutex_t` floor",
        "<= 1.3x",
        "\(format(four, " ns")) / \(format(floor, " ns")) = \(format(ratio, "x", digits: 2))\(middleware)",
        ratio <= 1.3
    )
}

if let send = time("Concurrency:64-tasks-send"), let mutex = time("Concurrency:64-tasks-Mutex.withLock") {
    // Throughput is the inverse of the time per iteration.
    let ratio = mutex / send
    let blocked = results["Concurrency:64-tasks-send"]?.blockedThreads
    row(
        "64 tasks `await send` vs the same tasks with `Mutex.withLock`",
        ">= 0.9x the throughput, 0 threads blocked",
        "\(format(mutex, " ns")) / \(format(send, " ns")) = \(format(ratio, "x", digits: 2)); blocked: \(format(blocked, digits: 0))",
        ratio >= 0.9 && blocked == 0
    )
}

for key in ["DispatchPath:send-0-middleware", "DispatchPath:send-1-middleware"] {
    if let mallocs = results[key]?.mallocs {
        row("heap allocations per uncontended send, \(key)", "0", "\(format(mallocs / 1000, digits: 3))", mallocs == 0)
    }
}
