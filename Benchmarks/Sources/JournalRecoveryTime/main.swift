// Not a benchmark of the suite: times the recovery of a large journal once, in a release build.
//
//     swift run -c release --package-path Benchmarks JournalRecoveryTime 1000000
//
// Writes N actions to a new journal (durability `.none`, then one sync), then times `Store.recover(from:...)`
// (open, checksums, decoding, the reducer) and, for comparison, a loop that decodes the same JSON payloads from
// memory and calls the reducer.

import Dispatch
import Foundation
import Sluice

struct Tally: Codable, Sendable {
    var count = 0
    var sum = 0
}

enum TallyAction: Codable, Sendable {
    case add(Int)
}

let reducer = Reducer<Tally, TallyAction>(mutating: { state, action in
    switch action {
    case .add(let value):
        state.count += 1
        state.sum &+= value
    }
})

func seconds(since start: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let count = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
let directory = NSTemporaryDirectory() + "sluice-recovery-time-\(getpid())"
try? FileManager.default.removeItem(atPath: directory)
defer { try? FileManager.default.removeItem(atPath: directory) }

var start = DispatchTime.now().uptimeNanoseconds
do {
    let journal = try Journal(directory: directory)
    let store = try Store<Tally, TallyAction>(
        recoveringFrom: journal,
        durability: .none,
        initialState: Tally(),
        reducer: reducer
    )
    for value in 0..<count {
        store.dispatch(.add(value % 1000))
    }
    journal.close()
}
print("wrote \(count) actions in \(seconds(since: start)) s")

start = DispatchTime.now().uptimeNanoseconds
let journal = try Journal(directory: directory)
print("opened the journal (lock, scan of the last segment) in \(seconds(since: start)) s")
let (state, recovery) = try Store<Tally, TallyAction>.recover(from: journal, initialState: Tally(), reducer: reducer)
let recoverySeconds = seconds(since: start)
journal.close()
precondition(state.count == count && recovery.replayedActions == count)
print("recovered \(recovery.replayedActions) actions in \(recoverySeconds) s")

let encoder = JSONEncoder()
let payloads = try (0..<count).map { try encoder.encode(TallyAction.add($0 % 1000)) }
let decoder = JSONDecoder()
var loopState = Tally()
start = DispatchTime.now().uptimeNanoseconds
for payload in payloads {
    reducer.reduce(into: &loopState, try decoder.decode(TallyAction.self, from: payload))
}
let loopSeconds = seconds(since: start)
precondition(loopState.count == count)
print("decode-and-reduce loop over the same actions in memory: \(loopSeconds) s")
print("replay rate / loop rate: \(loopSeconds / recoverySeconds)")
