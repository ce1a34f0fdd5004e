import Foundation
import Testing

@testable import Sluice

/// `Middlewares.logging(level:...records:)`: the fields of a record, the time a dispatch waited for the store, and
/// the level check that comes before any work.
@Suite struct LogRecordTests {
    /// A store with the record middleware first and an action cost of `cost` fake nanoseconds after it.
    static func makeStore(
        cost: UInt64 = 1_500,
        _ makeLogging: (@escaping @Sendable () -> UInt64) -> Middleware<TestState, TestAction>
    ) -> Store<TestState, TestAction> {
        let clock = LoggingTests.FakeClock()
        return Store<TestState, TestAction>(
            initialState: TestState(),
            reducer: testReducer,
            middleware: [makeLogging({ clock.now }), LoggingTests.costs(cost, on: clock)]
        )
    }

    @Test func aRecordCarriesTheLevelActionDurationAndChanges() throws {
        let records = Locked<[Middlewares.LogRecord<TestAction>]>([])
        let store = Self.makeStore { clock in
            Middlewares.logging(level: .notice, diff: true, records: { records.append($0) }, clock: clock)
        }
        store.dispatch(.add(3))
        store.dispatch(.noop)
        let logged = records.current
        try #require(logged.count == 2)
        let first = logged[0]
        #expect(first.level == .notice)
        #expect(first.action == .add(3))
        #expect(first.duration == .nanoseconds(1_500))
        #expect(first.waited == .zero)
        #expect(first.changes?.map(\.path) == ["count"])
        #expect(first.changes?.map(\.before) == ["0"])
        #expect(first.changes?.map(\.after) == ["3"])
        #expect(first.changes?.map(\.isComparedInFull) == [true])
        #expect(first.omittedChanges == 0)
        #expect(first.actionDescription == "add(3)")
        #expect(first.durationText == "1.5µs")
        #expect(first.line == "add(3) in 1.5µs | count: 0 -> 3")
        // An action that changed nothing has an empty list, not `nil`.
        #expect(logged[1].changes == [])
        #expect(logged[1].line == "noop in 1.5µs | no change")
    }

    @Test func withoutTheDiffARecordHasNoChanges() throws {
        let records = Locked<[Middlewares.LogRecord<TestAction>]>([])
        let store = Self.makeStore { clock in
            Middlewares.logging(records: { records.append($0) }, clock: clock)
        }
        store.dispatch(.record("a\nb"))
        let record = try #require(records.current.first)
        #expect(record.level == .info)
        #expect(record.changes == nil)
        #expect(record.actionDescription == #"record("a\nb")"#)
        #expect(record.line == #"record("a\nb") in 1.5µs"#)
    }

    @Test func changesBeyondTheLimitAreCountedAndCollectionsNameTheirElements() throws {
        struct Wide: Sendable, Equatable {
            var a = 0
            var b = 0
            var c = 0
            var tags = [1, 2]
        }
        let records = Locked<[Middlewares.LogRecord<Int>]>([])
        let store = Store<Wide, Int>(
            initialState: Wide(),
            reducer: Reducer(mutating: { state, action in
                if action > 0 {
                    state.a += action
                    state.b += action
                    state.c += action
                }
                state.tags[0] += 1
            }),
            middleware: [Middlewares.logging(diff: true, maxChanges: 3, records: { records.append($0) })]
        )
        store.dispatch(1)
        let record = try #require(records.current.first)
        #expect(record.changes?.map(\.description) == ["a: 0 -> 1", "b: 0 -> 1", "c: 0 -> 1"])
        #expect(record.omittedChanges == 1)
        store.dispatch(-1)
        #expect(records.current.last?.changes?.count == 1)
        let tagsOnly = records.current.last?.changes?.last
        #expect(tagsOnly?.path == "tags[0]")
        #expect(tagsOnly?.description == "tags[0]: 2 -> 3")
    }

    /// The waiting dispatch's record says how long it waited, and so does the line of the `String` sink; the
    /// dispatch that did not wait says nothing about waiting.
    @Test func aDispatchThatWaitedForTheStoreSaysSoInItsRecordAndLine() async throws {
        let records = Locked<[Middlewares.LogRecord<TestAction>]>([])
        let lines = Locked<[String]>([])
        let blocked = BlockedStore(
            middleware: Middleware { api in
                let recording: Middleware<TestState, TestAction> = Middlewares.logging(records: { records.append($0) })
                let writing: Middleware<TestState, TestAction> = Middlewares.logging(sink: { lines.append($0) })
                return { next in recording.body(api)(writing.body(api)(next)) }
            }
        )
        blocked.blockOnAnotherThread()
        try await blocked.dispatchOnAnotherThreadAndWaitInLine("T1")
        blocked.unblock()
        try await blocked.waitUntilLogged(2)
        #expect(await records.wait { $0.count == 2 })
        #expect(await lines.wait { $0.count == 2 })
        let byName = Dictionary(uniqueKeysWithValues: records.current.map { ("\($0.action)", $0) })
        let block = try #require(byName[#"record("block")"#])
        let waiting = try #require(byName[#"record("T1")"#])
        #expect(block.waited == .zero)
        #expect(waiting.waited > .zero)
        #expect(!block.line.contains("waited"))
        #expect(waiting.line.hasSuffix(" (waited \(waiting.waitedText))"))
        let waitingLine = try #require(lines.current.first { $0.hasPrefix(#"record("T1")"#) })
        #expect(waitingLine.contains(" (waited "))
        #expect(lines.current.filter { $0.contains("waited") }.count == 1)
        #expect(blocked.store.statistics.longestWait >= waiting.waited)
    }

    /// An action type that counts how often it is described.
    struct Counted: Sendable, CustomStringConvertible {
        var value: Int
        let descriptions: Locked<Int>
        var description: String {
            descriptions.withValue { $0 += 1 }
            return "counted \(value)"
        }
    }

    @Test func belowTheLevelNothingIsMeasuredComparedOrDescribed() {
        let asked = Locked<[Middlewares.LogLevel]>([])
        let included = Locked(0)
        let records = Locked<[Middlewares.LogRecord<Counted>]>([])
        let clockReads = Locked(0)
        let descriptions = Locked(0)
        let store = Store<Int, Counted>(
            initialState: 0,
            reducer: Reducer(mutating: { state, action in state += action.value }),
            middleware: [
                Middlewares.logging(
                    level: .debug,
                    diff: true,
                    include: { _ in
                        included.withValue { $0 += 1 }
                        return true
                    },
                    isEnabled: { level in
                        asked.append(level)
                        return level >= .warning
                    },
                    records: { records.append($0) },
                    clock: {
                        clockReads.withValue { $0 += 1 }
                        return 0
                    }
                )
            ]
        )
        for value in 1...100 {
            store.dispatch(Counted(value: value, descriptions: descriptions))
        }
        #expect(store.state == 5_050)
        #expect(asked.current == Array(repeating: .debug, count: 100))
        #expect(included.current == 0)
        #expect(clockReads.current == 0)
        #expect(records.current.isEmpty)
        #expect(descriptions.current == 0)
    }

    @Test func aRecordIsDescribedOnlyWhenItsTextIsRead() {
        let records = Locked<[Middlewares.LogRecord<Counted>]>([])
        let store = Store<Int, Counted>(
            initialState: 0,
            reducer: Reducer(mutating: { state, action in state += action.value }),
            middleware: [Middlewares.logging(level: .warning, records: { records.append($0) })]
        )
        let descriptions = Locked(0)
        for value in 1...10 {
            store.dispatch(Counted(value: value, descriptions: descriptions))
        }
        #expect(records.current.count == 10)
        #expect(descriptions.current == 0)
        #expect(records.current[2].actionDescription == "counted 3")
        #expect(records.current[2].line == "counted 3 in \(records.current[2].durationText)")
        #expect(descriptions.current == 2)
    }
}
