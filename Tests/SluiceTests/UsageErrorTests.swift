import Foundation
import Sluice
import SluiceJournal
import Testing

/// Every usage error that the documentation says "stops the program with a message" does so, and says what was
/// wrong, in every build configuration: `.ci/run` runs this suite in a release build too, where `precondition`
/// messages are compiled out (`swift test -c release --package-path Tests/ReleaseUsageErrors`, a package whose
/// sources are links to this file and the support it uses).
@Suite struct UsageErrorTests {
    private typealias Effect = SideEffect<TestState, TestAction>

    @Test func negativeThrottleInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.throttle(.milliseconds(-1), SideEffect<TestState, TestAction> { _, _ in })
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.throttle: the interval must not be negative, got -0.001 seconds."
        )
    }

    @Test func negativeDebounceInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.debounce(.seconds(-2), SideEffect<TestState, TestAction> { _, _ in })
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.debounce: the interval must not be negative, got -2.0 seconds."
        )
    }

    @Test func negativeDelayInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.delay(.microseconds(-5), SideEffect<TestState, TestAction> { _, _ in })
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.delay: the interval must not be negative, got -5e-06 seconds."
        )
    }

    @Test func negativeDebounceMaxWait() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.debounce(
                .seconds(1),
                maxWait: .milliseconds(-5),
                SideEffect<TestState, TestAction> { _, _ in }
            )
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.debounce: maxWait must not be negative, got -0.005 seconds."
        )
    }

    @Test func debounceMaxWaitShorterThanTheInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.debounce(
                .seconds(1),
                maxWait: .milliseconds(500),
                SideEffect<TestState, TestAction> { _, _ in }
            )
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.debounce: maxWait must not be shorter than the interval, got maxWait "
                + "0.5 seconds for interval 1.0 seconds."
        )
    }

    @Test func throttleNeitherLeadingNorTrailing() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.throttle(
                .seconds(1),
                leading: false,
                trailing: false,
                SideEffect<TestState, TestAction> { _, _ in }
            )
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.throttle: leading: false and trailing: false would never run the effect."
        )
    }

    @Test func negativeShutdownTimeout() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let store = Store(initialState: TestState(), reducer: testReducer)
            _ = await store.shutdown(timeout: .milliseconds(-1))
        }
        expectMessage(
            result,
            "Sluice usage error: Store.shutdown: the timeout must not be negative, got -0.001 seconds."
        )
    }

    @Test func loggingMaxChangesBelowOne() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: Middleware<TestState, TestAction> = Middlewares.logging(maxChanges: 0)
        }
        expectMessage(result, "Sluice usage error: Middlewares.logging: maxChanges must be at least 1, got 0.")
    }

    @Test func loggingMaxLineLengthBelowOne() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: Middleware<TestState, TestAction> = Middlewares.logging(maxLineLength: 0)
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.logging: maxLineLength must be at least 1 (or nil for no limit), got 0."
        )
    }

    @Test func samplingEveryZero() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.LogSampling.every(0)
        }
        expectMessage(result, "Sluice usage error: Middlewares.LogSampling.every: n must be at least 1, got 0.")
    }

    @Test func samplingRateOutOfRange() async {
        let tooLarge = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.LogSampling.rate(1.5)
        }
        expectMessage(
            tooLarge,
            "Sluice usage error: Middlewares.LogSampling.rate: fraction must be greater than 0 and at most 1, got 1.5."
        )
        let zero = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.LogSampling.rate(0)
        }
        expectMessage(
            zero,
            "Sluice usage error: Middlewares.LogSampling.rate: fraction must be greater than 0 and at most 1, got 0.0."
        )
        let notANumber = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Middlewares.LogSampling.rate(.nan)
        }
        expectMessage(
            notANumber,
            "Sluice usage error: Middlewares.LogSampling.rate: fraction must be greater than 0 and at most 1, got nan."
        )
    }

    @Test func streamIteratorUsedByTwoTasksAtOnce() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // A copy of an iterator continues the same iteration; two tasks call `next()` on it until one of them
            // calls while the other waits (nothing is dispatched, so after the first value every call waits).
            struct Shared: @unchecked Sendable { let iterator: StateStream<Int>.Iterator }
            let store = Store(initialState: 0, reducer: Reducer<Int, Int>(mutating: { $0 += $1 }))
            let shared = Shared(iterator: store.states.makeAsyncIterator())
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        var iterator = shared.iterator
                        while await iterator.next() != nil {}
                    }
                }
            }
        }
        expectMessage(result, "Sluice usage error: StateStream: an iterator was used by two tasks at once.")
    }

    @Test func journalWithActionsAttachedWithoutRecovery() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = NSTemporaryDirectory() + "sluice-usage-\(UUID().uuidString)"
            try writeLedger([1, 2, 3], to: directory)
            let journal = try Journal(directory: directory)
            _ = Store<LedgerState, LedgerAction>(
                initialState: LedgerState(),
                reducer: ledgerReducer,
                middleware: [Middlewares.journal(journal, durability: .everyAction)]
            )
        }
        expectMessage(
            result,
            """
            Sluice usage error: Middlewares.journal: the journal holds 3 recorded actions; create the store with \
            Store(recoveringFrom:durability:initialState:reducer:middleware:) to resume from them.
            """
        )
    }

    @Test func journalAttachedToTwoStores() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = NSTemporaryDirectory() + "sluice-usage-\(UUID().uuidString)"
            let journal = try Journal(directory: directory)
            let middleware: Middleware<LedgerState, LedgerAction> = Middlewares.journal(journal, durability: .none)
            _ = Store(initialState: LedgerState(), reducer: ledgerReducer, middleware: [middleware])
            _ = Store(initialState: LedgerState(), reducer: ledgerReducer, middleware: [middleware])
        }
        expectMessage(result, "Sluice usage error: Middlewares.journal: this journal is already attached to a store.")
    }

    @Test func negativeGroupCommitInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let journal = try Journal(directory: NSTemporaryDirectory() + "sluice-usage-\(UUID().uuidString)")
            let _: Middleware<LedgerState, LedgerAction> = Middlewares.journal(
                journal,
                durability: .groupCommit(interval: .milliseconds(-1))
            )
        }
        expectMessage(
            result,
            "Sluice usage error: Middlewares.journal: the group commit interval must not be negative, got -0.001 seconds."
        )
    }
}

extension UsageErrorTests {
    @Test func missingTestValueWithoutAHandler() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = StoreDependencies.test()[DependencyWithoutTestValue.self]
        }
        expectMessage(
            result,
            "Sluice usage error: StoreDependencies: DependencyWithoutTestValue has no test value and was read in a "
                + "test context. Declare a `testValue` for DependencyWithoutTestValue, or set this dependency in the "
                + "test's dependencies."
        )
    }

    @Test func liveValueThatCannotBeBuilt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = StoreDependencies()[DependencyThatCannotBeBuilt.self]
        }
        expectMessage(
            result,
            "Sluice usage error: StoreDependencies: the live value of DependencyThatCannotBeBuilt could not be "
                + "built: no API key in the environment."
        )
    }

    @Test func testValueThatCannotBeBuilt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = StoreDependencies.test()[DependencyThatCannotBeBuilt.self]
        }
        expectMessage(
            result,
            "Sluice usage error: StoreDependencies: the test value of DependencyThatCannotBeBuilt could not be "
                + "built: no API key in the environment."
        )
    }

    /// A store whose dependencies hold a key that cannot be built is created, and works, until the key is read.
    @Test func aBrokenLiveValueDoesNotStopStoreCreation() {
        let store = Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            dependencies: StoreDependencies()
        )
        store.dispatch(.increment)
        #expect(store.state.count == 1)
    }
}

enum DependencyWithoutTestValue: StoreDependencyKey {
    static let liveValue = 1
}

enum DependencyThatCannotBeBuilt: StoreDependencyKey {
    static var liveValue: Int { get throws { throw BrokenConfiguration() } }
    static var testValue: Int { get throws { throw BrokenConfiguration() } }
}

/// Checks that the process's standard error holds `message`.
func expectMessage(
    _ result: ExitTest.Result?,
    _ message: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let standardError = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(standardError.contains(message), "standard error: \(standardError)", sourceLocation: sourceLocation)
}
