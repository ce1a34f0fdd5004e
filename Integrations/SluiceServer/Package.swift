// swift-tools-version: 6.2
import PackageDescription

// Sluice for Swift servers: swift-log, swift-metrics, swift-service-lifecycle and swift-distributed-tracing. A
// separate package, so that the library itself keeps no dependencies; one product per concern, so that a service
// pulls in only the libraries it uses.

// SwiftPM names a path dependency after its directory, and a clone of Sluice may live in a directory of any name.
let sluicePackage = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "sluice")
let sluice = Target.Dependency.product(name: "Sluice", package: sluicePackage)
let sluiceJournal = Target.Dependency.product(name: "SluiceJournal", package: sluicePackage)

let package = Package(
    name: "sluice-server",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SluiceLogging", targets: ["SluiceLogging"]),
        .library(name: "SluiceMetrics", targets: ["SluiceMetrics"]),
        .library(name: "SluiceLifecycle", targets: ["SluiceLifecycle"]),
        .library(name: "SluiceTracing", targets: ["SluiceTracing"]),
    ],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "SluiceLogging",
            dependencies: [sluice, .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "SluiceLoggingTests",
            dependencies: ["SluiceLogging", sluice, .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "SluiceMetrics",
            dependencies: [sluice, .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .testTarget(
            name: "SluiceMetricsTests",
            dependencies: ["SluiceMetrics", sluice, .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .target(
            name: "SluiceLifecycle",
            dependencies: [
                sluice,
                sluiceJournal,
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The process that the lifecycle test starts and stops with SIGTERM (see its main.swift).
        .executableTarget(
            name: "SluiceLifecycleProcess",
            dependencies: [
                "SluiceLifecycle",
                sluice,
                sluiceJournal,
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "SluiceLifecycleTests",
            dependencies: [
                "SluiceLifecycle",
                "SluiceLifecycleProcess",
                sluice,
                sluiceJournal,
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "SluiceTracing",
            dependencies: [sluice, sluiceJournal, .product(name: "Tracing", package: "swift-distributed-tracing")]
        ),
        .testTarget(
            name: "SluiceTracingTests",
            dependencies: [
                "SluiceTracing",
                sluice,
                sluiceJournal,
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The README's samples, compiled.
        .testTarget(
            name: "SluiceServerReadmeTests",
            dependencies: [
                "SluiceLogging",
                "SluiceMetrics",
                "SluiceLifecycle",
                "SluiceTracing",
                sluice,
                sluiceJournal,
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Not a test: the cost per dispatch of each bridge (`swift run -c release SluiceServerBench`).
        .executableTarget(
            name: "SluiceServerBench",
            dependencies: [
                "SluiceLogging",
                "SluiceMetrics",
                "SluiceTracing",
                sluice,
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
