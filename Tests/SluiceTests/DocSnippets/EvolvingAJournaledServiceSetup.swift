import Foundation

/// What EvolvingAJournaledService.md's blocks use without declaring it: one directory that the three versions of
/// the walk share (`articleSnippetsRun` removes it).
extension EvolvingAJournaledServiceSnippets {
    static let dataDirectory = FileManager.default.temporaryDirectory
        .appendingPathComponent("sluice-evolving-\(UUID().uuidString)").path
}
