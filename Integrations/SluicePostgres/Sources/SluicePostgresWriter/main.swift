// A writer process for the crash and zombie tests: takes the stream of a store over (waiting for the current
// writer to go), recovers the store, then dispatches `add(sequence % 997)` one at a time and prints each
// acknowledged sequence number on its own line, after the action committed.
//
//   SluicePostgresWriter <host:port,host:port> <store id> <writer name> <lease ms> <acquire wait ms> <actions>
//
// Lines: `epoch <n>` after the takeover, `recovered <n>` after recovery, one sequence number per acknowledged
// action, `fenced <error>` (exit status 3) when a newer writer took the stream over.
import Foundation
import Sluice
import SluiceJournal
import SluicePostgres
import SluicePostgresLedger

/// One whole line per write: a line the kill cuts short is never half-printed from a buffer.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let lease = Int(arguments[4]), let wait = Int(arguments[5]), let actions = Int(arguments[6])
else {
    FileHandle.standardError.write(Data("usage: see main.swift\n".utf8))
    exit(2)
}
let endpoints = arguments[1].split(separator: ",").map { part in
    let pieces = part.split(separator: ":")
    return PostgresEndpoint(host: String(pieces[0]), port: Int(pieces[1]) ?? 5432)
}
let configuration = PostgresJournalConfiguration(
    endpoints: endpoints,
    storeID: arguments[2],
    writerName: arguments[3],
    lease: .milliseconds(lease),
    acquireWait: .milliseconds(wait)
)
let storage: PostgresJournalStorage
do {
    storage = try PostgresJournalStorage(configuration: configuration)
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
do {
    let journal = try Journal(storage: storage)
    emit("epoch \(storage.epoch)")
    let store = try Store<Ledger, LedgerAction>(
        recoveringFrom: journal,
        durability: .groupCommit(interval: .zero),
        initialState: Ledger(),
        reducer: ledgerReducer
    )
    emit("recovered \(journal.lastSequence)")
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await journal.run() }
        for _ in 0..<actions {
            let sequence = journal.lastSequence + 1
            try await store.dispatch(.add(Int(sequence % 997)), durableIn: journal)
            emit("\(sequence)")
        }
        group.cancelAll()
    }
    journal.close()
    exit(0)
} catch {
    emit("fenced \(storage.stopReason.map { "\($0)" } ?? "\(error)")")
    exit(3)
}
