// swift-tools-version: 6.2
import PackageDescription

// The Sluice benchmark suite: `swift package benchmark` in this directory runs every area (see README.md).
// A separate package, so that the library itself keeps no dependencies.

// SwiftPM names a path dependency after its directory, and a clone of Sluice may live in a directory of any name.
let sluicePackage = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "sluice")

let package = Package(
    name: "sluice-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        // The trait list replaces the default traits, which on Linux with Swift 6.3 also enable `RuntimeInterposer`:
        // its package (ordo-one/swift-runtime-interposer) fails to resolve there. `MallocInterposer` is what
        // counts heap allocations (`mallocCountTotal`).
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // What the areas share: the counter state and reducer, thread helpers, the common configuration.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Sluice", package: sluicePackage),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The order service of the `ServiceChain` area and of `DispatchProfile service`: on a store with the chain
        // a service writes, and on a `Mutex`-guarded struct (the floor).
        .target(
            name: "ServiceModel",
            dependencies: [.product(name: "Sluice", package: sluicePackage)],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // What the `Host` area and `HostRun` share: a discarding journal storage and a host over it.
        .target(
            name: "HostSupport",
            dependencies: [
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
                .product(name: "SluiceHost", package: sluicePackage),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Not a harness benchmark: a million ids through a store host, and activation latency (see its main.swift).
        .executableTarget(
            name: "HostRun",
            dependencies: [
                "HostSupport",
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
                .product(name: "SluiceHost", package: sluicePackage),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Not a benchmark: times the recovery of a large journal once (see its main.swift).
        .executableTarget(
            name: "JournalRecoveryTime",
            dependencies: [
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Not a benchmark: the large-dictionary recoveries of the `Journal` area, one phase at a time, for a profiler.
        .executableTarget(
            name: "SnapshotProfile",
            dependencies: [
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Not a harness benchmark: the latency of `dispatch` from 4 threads next to a slow throttled side effect.
        .executableTarget(
            name: "SnapshotLatency",
            dependencies: [.product(name: "Sluice", package: sluicePackage)],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Not a benchmark: a plain executable to count the instructions of a dispatch with valgrind's callgrind.
        .executableTarget(
            name: "DispatchProfile",
            dependencies: [
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
                "ServiceModel",
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

// The areas that measure the journal.
let journalAreas = ["Journal", "Durable"]

// One executable target per area, at `Benchmarks/<Area>/<Area>.swift`. (`DispatchPath`, not `Dispatch`: a module
// of that name would hide the Dispatch library.)
for area in [
    "Floors", "DispatchPath", "Subscribers", "LargeState", "Concurrency", "Modifiers", "ChildReducers", "Journal",
    "Dependencies", "ServiceChain", "Durable", "Host",
] {
    package.targets.append(
        .executableTarget(
            name: area,
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Sluice", package: sluicePackage),
                "BenchmarkSupport",
                "ServiceModel",
            ] + (journalAreas.contains(area) ? [.product(name: "SluiceJournal", package: sluicePackage)] : [])
                + (area == "Host" ? ["HostSupport", .product(name: "SluiceHost", package: sluicePackage)] : []),
            path: "Benchmarks/\(area)",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    )
}

// `TestScheduler` at scale: the one area that measures the testing library rather than a dispatch.
package.targets.append(
    .executableTarget(
        name: "VirtualTime",
        dependencies: [
            .product(name: "Benchmark", package: "benchmark"),
            .product(name: "SluiceTesting", package: sluicePackage),
        ],
        path: "Benchmarks/VirtualTime",
        swiftSettings: [.swiftLanguageMode(.v6)],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
)
