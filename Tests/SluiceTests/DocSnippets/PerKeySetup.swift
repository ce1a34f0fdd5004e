import Sluice

/// What PerKey.md's blocks use without declaring it: where the service broadcasts, and a credit service.
extension PerKeySnippets {
    typealias Recorder = DocExample.Recorder

    /// The service's connection to its clients.
    struct Hub: Sendable {
        func broadcast(_ message: String) {}
    }

    /// A remote credit service.
    struct CreditService: Sendable {
        func limit(of bidder: Int) async throws -> Int { 1_000 }
    }

    static let hub = Hub()
    static let credit = CreditService()
}
