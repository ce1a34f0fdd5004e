// swift-tools-version: 6.2
import PackageDescription

// The PostgreSQL journal for Sluice: a separate package, so that the library itself keeps no dependencies.

// SwiftPM names a path dependency after its directory, and a clone of Sluice may live in a directory of any name.
let sluicePackage = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "sluice")
let sluice = Target.Dependency.product(name: "Sluice", package: sluicePackage)
let sluiceJournal = Target.Dependency.product(name: "SluiceJournal", package: sluicePackage)

let package = Package(
    name: "sluice-postgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SluicePostgres", targets: ["SluicePostgres"])
    ],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
    ],
    targets: [
        .target(
            name: "SluicePostgres",
            dependencies: [
                sluice,
                sluiceJournal,
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The ledger domain that the writer process, the benchmark and the tests share (not a product).
        .target(
            name: "SluicePostgresLedger",
            dependencies: [sluice]
        ),
        // The writer process that the crash and zombie tests start, kill, stop and resume.
        .executableTarget(
            name: "SluicePostgresWriter",
            dependencies: ["SluicePostgres", "SluicePostgresLedger", sluice, sluiceJournal]
        ),
        // Not a test: measures acknowledgements per second, follower lag and takeover time (see its main.swift).
        .executableTarget(
            name: "SluicePostgresBench",
            dependencies: [
                "SluicePostgres",
                "SluicePostgresLedger",
                sluice,
                sluiceJournal,
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(
            name: "SluicePostgresTests",
            dependencies: [
                "SluicePostgres",
                "SluicePostgresLedger",
                sluice,
                sluiceJournal,
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
