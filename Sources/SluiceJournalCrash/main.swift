// A process for the journal's crash test: dispatches actions forever and prints the sequence number of each
// action once it is acknowledged (durable), until the test kills it with SIGKILL.
//
//     sluice-journal-crash DIR every|group
//
// It resumes from DIR each time, so a series of kills exercises recovery after recovery. Every 1,000 actions it
// takes a snapshot, which also compacts the journal.

import Sluice
import SluiceJournal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct CrashState: Codable, Equatable, Sendable {
    var count = 0
    var sum = 0
    var digest: UInt64 = 0
}

enum CrashAction: Codable, Sendable {
    case add(Int)
}

let crashReducer = Reducer<CrashState, CrashAction>(mutating: { state, action in
    switch action {
    case .add(let value):
        state.count += 1
        state.sum += value
        state.digest = state.digest &* 31 &+ UInt64(value)
    }
})

/// The value of the action with this sequence number, so that the test can compute the expected state.
func value(for sequence: Int) -> Int {
    sequence % 997
}

func acknowledge(_ sequence: UInt64) {
    // One write(2) per line: what reached the pipe survives the SIGKILL.
    let line = Array("\(sequence)\n".utf8)
    _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func fail(_ message: String) {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, arguments[2] == "every" || arguments[2] == "group" else {
    fail("usage: sluice-journal-crash DIR every|group")
    exit(2)
}
let grouped = arguments[2] == "group"
do {
    let journal = try Journal(directory: arguments[1])
    let store = try Store<CrashState, CrashAction>(
        recoveringFrom: journal,
        durability: grouped ? .groupCommit(interval: .zero) : .everyAction,
        initialState: CrashState(),
        reducer: crashReducer
    )
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await journal.run() }
        while true {
            // A burst of ten actions, then the acknowledgement of each once durable.
            var sequences: [UInt64] = []
            for _ in 0..<10 {
                store.dispatch(.add(value(for: store.state.count + 1)))
                let sequence = journal.lastSequence
                if grouped {
                    sequences.append(sequence)
                } else {
                    acknowledge(sequence)
                }
                if sequence % 1000 == 0 {
                    try journal.snapshot(store)
                }
            }
            if let last = sequences.last {
                try await journal.durable(through: last)
                sequences.forEach(acknowledge)
            }
        }
    }
} catch {
    fail("sluice-journal-crash: \(error)")
    exit(1)
}
