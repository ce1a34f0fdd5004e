// swift-tools-version: 6.2
// The usage-error tests of Sluice, in a release build: `precondition` messages are compiled out there, and every
// usage error that the documentation says "stops the program with a message" must still say what was wrong.
//
//   swift test -c release --package-path Tests/ReleaseUsageErrors
//
// A package of its own so that a release build compiles Sluice and these few files only, not the whole test suite
// (`.ci/run` runs it). Its sources are links to the root package's test files (UsageErrorTests.swift and the support
// it uses), so the tests exist once; the debug build of the root package runs them too.
import PackageDescription

let sluicePackage = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "sluice")

let package = Package(
    name: "sluice-release-usage-errors",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    dependencies: [
        .package(path: "../..")
    ],
    targets: [
        .testTarget(
            name: "UsageErrorTests",
            dependencies: [
                .product(name: "Sluice", package: sluicePackage),
                .product(name: "SluiceJournal", package: sluicePackage),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
