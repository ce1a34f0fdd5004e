// swift-tools-version: 6.2
import PackageDescription

// An order service on Hummingbird 2 running a Sluice store: see README.md. A separate package, so that the library
// itself keeps no dependencies.

// SwiftPM names a path dependency after its directory, and a clone of Sluice may live in a directory of any name.
let sluicePackage = String(
    Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "sluice"
)

let package = Package(
    name: "order-service",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // Sluice's own swift-log and swift-metrics bridges.
        .package(path: "../../Integrations/SluiceServer"),
    ],
    targets: [
        // The domain, the two backends, the routes and the service.
        .target(
            name: "OrderServiceCore",
            dependencies: [
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
                .product(name: "SluiceLogging", package: "SluiceServer"),
                .product(name: "SluiceMetrics", package: "SluiceServer"),
                .product(name: "SluiceLifecycle", package: "SluiceServer"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `swift run -c release OrderService --port 8080`
        .executableTarget(
            name: "OrderService",
            dependencies: ["OrderServiceCore"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "OrderServiceTests",
            dependencies: [
                "OrderServiceCore",
                // Built for the test that starts the server as a process and stops it with SIGTERM.
                "OrderService",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
                .product(name: "SluiceMetrics", package: "SluiceServer"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
