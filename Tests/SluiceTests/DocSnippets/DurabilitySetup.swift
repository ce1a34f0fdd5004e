import Foundation
import Sluice

/// What the blocks of the journal's articles (Durability.md, and SluiceJournal.md, the journal catalog's landing page)
/// use without declaring it: a counter journaled in a directory of its own.
protocol JournaledCounterSetup {}

extension JournaledCounterSetup {
    typealias Counter = JournaledCounter
    typealias CounterAction = JournaledCounterAction

    static var counterReducer: Reducer<Counter, CounterAction> { journaledCounterReducer }

    static var dataDirectory: String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sluice-journal-\(UUID().uuidString)").path
    }
}

extension DurabilitySnippets: JournaledCounterSetup {}
extension SluiceJournalSnippets: JournaledCounterSetup {}

struct JournaledCounter: Codable, Sendable {
    var count = 0
}

enum JournaledCounterAction: Codable, Sendable {
    case add(Int)
}

let journaledCounterReducer = Reducer<JournaledCounter, JournaledCounterAction>(mutating: { state, action in
    switch action {
    case .add(let amount): state.count += amount
    }
})
