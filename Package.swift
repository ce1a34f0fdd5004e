// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "sluice",
    // Observation (the `Observable` conformance of `Store`) needs these on Apple platforms.
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "Sluice", targets: ["Sluice"]),
        // The journal: durable actions, snapshots, recovery after a crash, and replay of a recorded journal.
        .library(name: "SluiceJournal", targets: ["SluiceJournal"]),
        // Many stores in one process, addressed by id: activated on first use, passivated when idle.
        .library(name: "SluiceHost", targets: ["SluiceHost"]),
        .library(name: "SluiceTesting", targets: ["SluiceTesting"]),
        // The generic `replay` command, a product of its own: a service's executable calls it with its reducer.
        .library(name: "SluiceReplay", targets: ["SluiceReplay"]),
        .executable(name: "sluice-demo", targets: ["SluiceDemo"]),
        .executable(name: "sluice-demo-replay", targets: ["SluiceDemoReplay"]),
        .executable(name: "sluice-journal-crash", targets: ["SluiceJournalCrash"]),
        .executable(name: "sluice-replay-bench", targets: ["SluiceReplayBench"]),
    ],
    targets: [
        .target(name: "CSluiceSupport"),
        .target(name: "Sluice", dependencies: ["CSluiceSupport"]),
        .target(name: "SluiceJournal", dependencies: ["Sluice", "CSluiceSupport"]),
        .target(name: "SluiceHost", dependencies: ["Sluice", "SluiceJournal"]),
        .target(name: "SluiceTesting", dependencies: ["Sluice", "SluiceJournal"]),
        .target(name: "SluiceReplay", dependencies: ["Sluice", "SluiceJournal"]),
        .target(name: "SluiceDemoKit", dependencies: ["Sluice", "SluiceJournal"]),
        .executableTarget(name: "SluiceDemo", dependencies: ["SluiceDemoKit"]),
        .executableTarget(name: "SluiceDemoReplay", dependencies: ["SluiceDemoKit", "SluiceReplay"]),
        // Times a replay against a recovery on a journal of the demo's domain (Benchmarks/README.md).
        .executableTarget(name: "SluiceReplayBench", dependencies: ["SluiceDemoKit", "Sluice", "SluiceJournal"]),
        // The journal's crash test launches this process and kills it.
        .executableTarget(name: "SluiceJournalCrash", dependencies: ["Sluice", "SluiceJournal"]),
        .testTarget(
            name: "SluiceTests",
            dependencies: [
                "Sluice", "SluiceJournal", "SluiceHost", "SluiceTesting", "SluiceReplay", "SluiceJournalCrash",
            ]
        ),
        .testTarget(name: "SluiceTestingTests", dependencies: ["Sluice", "SluiceTesting"]),
        // The demo's crash test launches `sluice-demo` and kills it. `Fixtures` holds a journal the demo wrote, which
        // the tests read from the source tree (the replay gate).
        .testTarget(
            name: "SluiceDemoTests",
            dependencies: ["SluiceDemoKit", "Sluice", "SluiceJournal", "SluiceDemo", "SluiceReplay", "SluiceTesting"],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where [.executable, .test, .regular].contains(target.type) {
    var settings = target.swiftSettings ?? []
    // Require `any` for existential types (SE-0335).
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // Only members of modules that a file imports are visible (SE-0444).
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // Imports are internal unless marked otherwise (SE-0409).
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
