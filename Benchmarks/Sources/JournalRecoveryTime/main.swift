// Not a benchmark of the suite: times the recovery of a large journal once, in a release build.
//
//     swift run -c release --package-path Benchmarks JournalRecoveryTime 1000000
//
// Times the journal's payload encoding against JSONEncoder / JSONDecoder (N actions each way, in memory; an
// `.add(Int)`, then a realistic action, a bid), writes N `.add(Int)` actions to a new journal (durability `.none`,
// then one sync), then times `Store.recover(from:...)` (open, checksums, decoding, the reducer) and, for comparison,
// a loop that decodes the same payloads from memory with the journal's decoder and calls the reducer.

import Dispatch
import Foundation
import Sluice
import SluiceJournal

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

/// A realistic action beside `.add(Int)`: the shape of the `Journal` area's bid (Benchmarks/Journal/Journal.swift),
/// an enum case whose payload is a struct of several fields, two of them strings.
struct Bid: Codable {
    var auctionID: Int
    var bidder: String
    var amount: Int
    var currency: String
    var placedAt: Date
}

enum HouseAction: Codable {
    case bid(Bid)
}

func perAction(_ seconds: Double) -> String {
    String(Int((seconds * 1e9 / Double(count)).rounded())) + " ns"
}

/// Encodes and decodes `actions` with `JSONEncoder` / `JSONDecoder` and with the journal's coder, prints the time
/// per action and the bytes, and returns the journal's payloads.
func compareEncodings<Action: Codable>(of name: String, _ actions: [Action]) throws -> [[UInt8]] {
    var start = DispatchTime.now().uptimeNanoseconds
    let jsonEncoder = JSONEncoder()
    let json = try actions.map { try jsonEncoder.encode($0) }
    let jsonEncode = seconds(since: start)
    start = DispatchTime.now().uptimeNanoseconds
    let payloadCoder = JournalPayloadCoder()
    let payloads = try actions.map { try payloadCoder.encode($0) }
    let binaryEncode = seconds(since: start)
    start = DispatchTime.now().uptimeNanoseconds
    let jsonDecoder = JSONDecoder()
    var decoded = 0
    for payload in json {
        _ = try jsonDecoder.decode(Action.self, from: payload)
        decoded += 1
    }
    let jsonDecode = seconds(since: start)
    start = DispatchTime.now().uptimeNanoseconds
    var payloadDecoder = JournalPayloadCoder()
    for payload in payloads {
        _ = try payload.withUnsafeBytes { try payloadDecoder.decode(Action.self, from: $0) }
        decoded -= 1
    }
    let binaryDecode = seconds(since: start)
    precondition(decoded == 0)
    print(
        """
        encoding \(count) \(name) actions: JSONEncoder \(perAction(jsonEncode)) per action, \
        \(json.reduce(0) { $0 + $1.count } / count) bytes; journal binary \(perAction(binaryEncode)), \
        \(payloads.reduce(0) { $0 + $1.count } / count) bytes
        decoding: JSONDecoder \(perAction(jsonDecode)) per action; journal binary \(perAction(binaryDecode))
        """
    )
    return payloads
}

let actions = (0..<count).map { TallyAction.add($0 % 1000) }
let payloads = try compareEncodings(of: ".add(Int)", actions)
_ = try compareEncodings(
    of: "bid",
    (0..<count).map { index in
        HouseAction.bid(
            Bid(
                auctionID: index % 50,
                bidder: "Ada Lovelace",
                amount: 100_000 + index % 1_000,
                currency: "EUR",
                placedAt: Date(timeIntervalSinceReferenceDate: 786_000_000 + Double(index) / 4)
            )
        )
    }
)

var start = DispatchTime.now().uptimeNanoseconds
do {
    let journal = try Journal(directory: directory)
    let store = try Store<Tally, TallyAction>(
        recoveringFrom: journal,
        durability: .none,
        initialState: Tally(),
        reducer: reducer
    )
    for action in actions {
        store.dispatch(action)
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

var loopDecoder = JournalPayloadCoder()
var loopState = Tally()
start = DispatchTime.now().uptimeNanoseconds
for payload in payloads {
    let action = try payload.withUnsafeBytes { try loopDecoder.decode(TallyAction.self, from: $0) }
    reducer.reduce(into: &loopState, action)
}
let loopSeconds = seconds(since: start)
precondition(loopState.count == count)
print("decode-and-reduce loop over the same actions in memory: \(loopSeconds) s")
print("replay rate / loop rate: \(loopSeconds / recoverySeconds)")
