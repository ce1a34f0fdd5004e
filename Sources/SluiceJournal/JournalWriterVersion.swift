/// The reducer version that wrote a log's records from a sequence number on.
///
/// A storage keeps one each time a store with another `reducerVersion` starts writing
/// (``JournalStorage/recordWriterVersion(_:)``), so that recovery knows which action adapters of
/// ``JournalMigrations`` apply to a record.
public struct JournalWriterVersion: Sendable, Equatable {
    /// The first record that this version wrote.
    public var firstSequence: UInt64
    /// The reducer version.
    public var reducerVersion: Int

    /// Creates a writer version.
    public init(firstSequence: UInt64, reducerVersion: Int) {
        self.firstSequence = firstSequence
        self.reducerVersion = reducerVersion
    }
}

// The defaults are documented with the requirements (a second symbol at the same path would need a hash to link).
extension JournalStorage {
    /// No versions kept: each record counts as written by the version of the nearest snapshot before it.
    @_documentation(visibility: internal)
    public func writerVersions() throws(JournalError) -> [JournalWriterVersion] {
        []
    }

    /// Keeps nothing (see ``writerVersions()``).
    @_documentation(visibility: internal)
    public func recordWriterVersion(_ version: JournalWriterVersion) throws(JournalError) {}
}

/// Which reducer version wrote each record of a log: the storage's writer versions, and for the records before
/// the first of them (a journal written before versions were kept, or by a storage that keeps none) the version
/// of the nearest snapshot before the record (the oldest snapshot's for records before every snapshot), else 0.
struct WriterVersionMap {
    /// Version changes, ascending by first sequence.
    let ranges: [JournalWriterVersion]

    init(kept: [JournalWriterVersion], snapshots: [JournalSnapshotVersion]) {
        let firstKept = kept.map(\.firstSequence).min() ?? .max
        // A snapshot at sequence S says what wrote the records after S (until the next change).
        var inferred = snapshots.filter { $0.sequence < firstKept }.sorted { $0.sequence < $1.sequence }.map {
            JournalWriterVersion(firstSequence: $0.sequence + 1, reducerVersion: $0.version)
        }
        if let oldest = inferred.first, oldest.firstSequence > 1 {
            inferred.insert(JournalWriterVersion(firstSequence: 1, reducerVersion: oldest.reducerVersion), at: 0)
        }
        var ranges = (inferred + kept.sorted { $0.firstSequence < $1.firstSequence }).filter { $0.firstSequence > 0 }
        if ranges.first?.firstSequence != 1 {
            ranges.insert(JournalWriterVersion(firstSequence: 1, reducerVersion: 0), at: 0)
        }
        self.ranges = ranges
    }

    /// The version that wrote the record `sequence`.
    func version(of sequence: UInt64) -> Int {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].firstSequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? 0 : ranges[low - 1].reducerVersion
    }

    /// The first sequence from which every record was written by a version in `direct` (read without adapters):
    /// records from there on take the fast path.
    func directFrom(_ direct: (Int) -> Bool) -> UInt64 {
        guard let lastAdapted = ranges.lastIndex(where: { !direct($0.reducerVersion) }) else { return 0 }
        let next = ranges.index(after: lastAdapted)
        return next < ranges.endIndex ? ranges[next].firstSequence : .max
    }
}
