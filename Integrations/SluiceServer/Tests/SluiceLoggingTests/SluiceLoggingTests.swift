import Logging
import Sluice
import SluiceLogging
import Synchronization
import Testing

/// An in-memory swift-log backend: keeps every entry, at a level the test sets.
final class MemoryLogHandlerBox: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    let entries = Mutex<[Entry]>([])
    let level: Mutex<Logger.Level>
    /// Called for each entry before it is kept; a test makes it block or misbehave.
    let onLog: @Sendable () -> Void

    init(level: Logger.Level, onLog: @escaping @Sendable () -> Void = {}) {
        self.level = Mutex(level)
        self.onLog = onLog
    }

    var logger: Logger {
        Logger(label: "test") { _ in MemoryLogHandler(box: self) }
    }

    var recorded: [Entry] { entries.withLock { $0 } }
}

struct MemoryLogHandler: LogHandler {
    let box: MemoryLogHandlerBox
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { box.level.withLock { $0 } }
        set { box.level.withLock { $0 = newValue } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        box.onLog()
        let entry = MemoryLogHandlerBox.Entry(
            level: event.level,
            message: event.message.description,
            metadata: metadata.merging(event.metadata ?? [:]) { _, new in new }
        )
        box.entries.withLock { $0.append(entry) }
    }
}

struct Counter: Sendable, Equatable {
    var value = 0
    var note = ""
}

enum CounterAction: Sendable {
    case add(Int)
    case note(String)
}

let counterReducer = Reducer<Counter, CounterAction>(mutating: { state, action in
    switch action {
    case .add(let amount): state.value += amount
    case .note(let text): state.note = text
    }
})

/// Counts how often the action's description is made, to show that a disabled level makes none.
struct CountedAction: Sendable, CustomStringConvertible {
    static let descriptions = Atomic<Int>(0)
    var description: String {
        Self.descriptions.add(1, ordering: .relaxed)
        return "counted"
    }
}

@Suite struct SluiceLoggingTests {
    @Test func levelsMapOneToOne() {
        for level in Middlewares.LogLevel.allCases {
            #expect(Middlewares.LogLevel(Logger.Level(level)) == level)
            #expect(Logger.Level(level).rawValue == "\(level)")
        }
    }

    @Test func writesTheActionAsMessageAndTheRestAsMetadata() {
        let box = MemoryLogHandlerBox(level: .debug)
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: counterReducer,
            middleware: [Middlewares.logging(to: box.logger, level: .info, store: "counter", diff: true)]
        )
        store.dispatch(.add(2))
        store.dispatch(.note("a\nb"))
        let entries = box.recorded
        try? #require(entries.count == 2)
        #expect(entries[0].level == .info)
        #expect(entries[0].message == "add(2)")
        #expect(entries[0].metadata[SluiceLogMetadataKey.store] == "counter")
        #expect(entries[0].metadata[SluiceLogMetadataKey.changes] == .array(["value: 0 -> 2"]))
        #expect(entries[0].metadata[SluiceLogMetadataKey.duration] != nil)
        #expect(entries[0].metadata[SluiceLogMetadataKey.omittedChanges] == nil)
        // One entry per action: control characters are escaped, the string quoted.
        #expect(entries[1].message == #"note("a\nb")"#)
    }

    @Test func diffingWritesTheChangesOfThePartsItPicks() {
        let box = MemoryLogHandlerBox(level: .debug)
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: counterReducer,
            middleware: [
                Middlewares.logging(
                    to: box.logger,
                    level: .info,
                    store: "counter",
                    diffing: { state, _ in (value: state.value, length: state.note.count) }
                )
            ]
        )
        store.dispatch(.add(2))
        store.dispatch(.note("abc"))
        let entries = box.recorded
        try? #require(entries.count == 2)
        #expect(entries[0].message == "add(2)")
        #expect(entries[0].metadata[SluiceLogMetadataKey.changes] == .array(["value: 0 -> 2"]))
        #expect(entries[0].metadata[SluiceLogMetadataKey.store] == "counter")
        #expect(entries[1].metadata[SluiceLogMetadataKey.changes] == .array(["length: 0 -> 3"]))
    }

    @Test func diffingAtADisabledLevelPicksNothing() {
        let box = MemoryLogHandlerBox(level: .warning)
        let picks = Mutex(0)
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: counterReducer,
            middleware: [
                Middlewares.logging(
                    to: box.logger,
                    level: .debug,
                    diffing: { state, _ in
                        picks.withLock { $0 += 1 }
                        return state.value
                    }
                )
            ]
        )
        store.dispatch(.add(1))
        #expect(store.state.value == 1)
        #expect(box.recorded.isEmpty)
        #expect(picks.withLock { $0 } == 0)
        box.level.withLock { $0 = .debug }
        store.dispatch(.add(1))
        #expect(picks.withLock { $0 } == 2)
        #expect(box.recorded.first?.metadata[SluiceLogMetadataKey.changes] == .array(["value: 1 -> 2"]))
    }

    @Test func withoutDiffOrLabelWritesNeither() {
        let box = MemoryLogHandlerBox(level: .trace)
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: counterReducer,
            middleware: [Middlewares.logging(to: box.logger)]
        )
        store.dispatch(.add(1))
        let entry = box.recorded.first
        #expect(entry?.level == .debug)
        #expect(entry?.metadata[SluiceLogMetadataKey.changes] == nil)
        #expect(entry?.metadata[SluiceLogMetadataKey.store] == nil)
        #expect(entry?.metadata[SluiceLogMetadataKey.waited] == nil)
    }

    @Test func aDisabledLevelDoesNoWork() {
        let box = MemoryLogHandlerBox(level: .warning)
        let before = CountedAction.descriptions.load(ordering: .relaxed)
        let store = Store<Int, CountedAction>(
            initialState: 0,
            reducer: Reducer(mutating: { state, _ in state += 1 }),
            middleware: [Middlewares.logging(to: box.logger, level: .debug, diff: true)]
        )
        for _ in 0..<100 { store.dispatch(CountedAction()) }
        #expect(store.state == 100)
        #expect(box.recorded.isEmpty)
        #expect(CountedAction.descriptions.load(ordering: .relaxed) == before)
        // The handler's level is read for each action: raising it lets the next action through.
        box.level.withLock { $0 = .debug }
        store.dispatch(CountedAction())
        #expect(box.recorded.map(\.message) == ["counted"])
    }

    @Test func samplingAndIncludeChooseTheActions() {
        let box = MemoryLogHandlerBox(level: .trace)
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: counterReducer,
            middleware: [
                Middlewares.logging(
                    to: box.logger,
                    sampling: .every(2),
                    include: { action in if case .add = action { true } else { false } }
                )
            ]
        )
        for amount in 1...4 { store.dispatch(.add(amount)) }
        store.dispatch(.note("x"))
        #expect(box.recorded.count == 2)
        #expect(store.state.value == 10)
    }

    @Test func aHandlerThatDispatchesIntoTheStoreDoesNotBreakDispatch() {
        // The handler reaches back into the store: the dispatch is queued behind the logged one, not deadlocked.
        let storeBox = Mutex<Store<Counter, CounterAction>?>(nil)
        let box = MemoryLogHandlerBox(level: .trace) {
            if let store = storeBox.withLock({ $0 }), store.state.value < 3 {
                store.dispatch(.add(1))
            }
        }
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: counterReducer,
            middleware: [Middlewares.logging(to: box.logger)]
        )
        storeBox.withLock { $0 = store }
        store.dispatch(.add(1))
        #expect(store.state.value == 3)
        #expect(box.recorded.count == 3)
        storeBox.withLock { $0 = nil }
    }

    @Test func aSlowHandlerDelaysButDoesNotBreakConcurrentDispatches() async {
        let box = MemoryLogHandlerBox(level: .trace) { usleepMilliseconds(2) }
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: counterReducer,
            middleware: [Middlewares.logging(to: box.logger)]
        )
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<5 { store.dispatch(.add(1)) } }
            }
        }
        #expect(store.state.value == 40)
        #expect(box.recorded.count == 40)
    }
}

/// Blocks the calling thread, like a log handler that writes synchronously to a slow sink.
func usleepMilliseconds(_ milliseconds: Int) {
    let deadline = ContinuousClock.now + .milliseconds(milliseconds)
    while ContinuousClock.now < deadline {}
}
