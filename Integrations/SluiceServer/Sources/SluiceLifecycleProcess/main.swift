// The process that the lifecycle test starts and stops with SIGTERM (not a product): a journaled store run by a
// `StoreService` in a `ServiceGroup` that shuts down gracefully on SIGTERM.
//
//   SluiceLifecycleProcess <journal directory> <actions>
//
// Dispatches <actions> actions, prints `ready <last sequence>`, runs until SIGTERM, then prints
// `stopped snapshot=<sequence> unwritten=<count> cancelled=<count>` and exits with 0.

import Logging
import ServiceLifecycle
import Sluice
import SluiceJournal
import SluiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Tally: Codable, Sendable {
    var total = 0
}

enum TallyAction: Codable, Sendable {
    case add(Int)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let actions = Int(arguments[2]) else {
    say("usage: SluiceLifecycleProcess <journal directory> <actions>")
    exit(2)
}

/// Writes `text` and a newline to standard output in one unbuffered write, so that the test reads it at once.
@Sendable func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

let logger = Logger(label: "sluice-lifecycle-process")
let journal = try Journal(directory: arguments[1])
let store = try Store<Tally, TallyAction>(
    recoveringFrom: journal,
    durability: .groupCommit(interval: .milliseconds(1)),
    initialState: Tally(),
    reducer: Reducer(mutating: { state, action in
        switch action {
        case .add(let amount): state.total += amount
        }
    })
)
let service = StoreService(store: store, journal: journal, label: "tally", logger: logger) { report in
    say(
        "stopped snapshot=\(report.snapshotSequence.map(String.init) ?? "none")"
            + " unwritten=\(report.unwrittenActions ?? 0) cancelled=\(report.shutdown.cancelledTasks)"
    )
}
/// Says `ready` once the group runs its services, which is after it trapped SIGTERM: a SIGTERM sent after that
/// line shuts the group down gracefully instead of ending the process.
struct ReadyService: Service {
    let journal: Journal

    func run() async throws {
        say("ready \(journal.lastSequence)")
        try? await gracefulShutdown()
    }
}

for _ in 0..<actions { store.dispatch(.add(1)) }
let group = ServiceGroup(
    services: [service, ReadyService(journal: journal)],
    gracefulShutdownSignals: [.sigterm],
    logger: logger
)
try await group.run()
