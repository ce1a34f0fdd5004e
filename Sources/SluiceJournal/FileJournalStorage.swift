import Sluice

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a journal in a local directory: segment files of checksummed records, snapshot files, a lock file.
///
/// The directory holds:
/// - `lock`: held with `flock(LOCK_EX)` while the journal is open, so that two journals (in one process or in
///   two) never write one log.
/// - `segment-<first sequence>.log`: an 8-byte header, then records. A record is a 16-byte header (payload length
///   as a little-endian `UInt32`, sequence number as a `UInt64`, CRC-32C of those twelve bytes), the payload, and
///   the payload's CRC-32C. A new segment starts when the current one passes ``segmentSize`` and after each
///   snapshot, so that compaction can remove whole files.
/// - `versions`: the reducer versions that wrote the records (``writerVersions()``), a line `<first sequence>
///   <reducer version>` for each change; written like a snapshot, and only once a version other than 0 writes.
/// - `snapshot-<sequence>.snap`: a header, the sequence it covers, the reducer version, the encoded state and a
///   CRC-32C of all of it; written to a temporary file, synced, renamed into place, and the directory synced.
///
/// A record that a crash cut short can only be the last one of the last segment: ``lastSequence()`` truncates it.
/// Any other record that fails its checksum stops reading with ``JournalError/corruptRecord(file:offset:)``.
public final class FileJournalStorage: JournalStorage, Sendable {
    /// The journal's directory.
    public let directory: String
    /// The size in bytes after which appends go to a new segment file.
    public let segmentSize: Int
    /// How long ``acquire()`` waits for a held lock before it refuses.
    public let lockWait: Duration

    /// The open files and positions, behind their lock (reading a segment or a snapshot happens outside it).
    private struct Files: Sendable {
        var lockDescriptor: Int32 = -1
        /// The segment that appends go to; -1 when the next append starts a new segment.
        var segmentDescriptor: Int32 = -1
        var segmentName = ""
        var segmentLength = 0
        var segmentHasRecords = false
        var last: UInt64 = 0
        /// Whether the segment has data that was not synced yet.
        var needsSync = false
    }

    private let files = Locked(Files())

    static let segmentMagic: [UInt8] = Array("SLUICEJ1".utf8)
    static let snapshotMagic: [UInt8] = Array("SLUICES1".utf8)
    static let recordHeaderSize = 16
    static let recordOverhead = 20
    static let largestPayload = 1 << 30

    /// Creates the storage for `directory`, which is created if it does not exist (its parent must).
    ///
    /// - Parameters:
    ///   - directory: The journal's directory.
    ///   - segmentSize: The size after which a new segment file starts; 64 MiB by default.
    ///   - lockWait: How long opening waits for a lock that is held: a lock given up a moment ago can still be
    ///     held by a process forked at that moment, until it calls exec.
    public init(directory: String, segmentSize: Int = 64 << 20, lockWait: Duration = .milliseconds(500)) {
        self.directory = directory
        self.segmentSize = segmentSize
        self.lockWait = lockWait
    }

    deinit {
        files.withLock { closeFiles(&$0) }
    }

    public func acquire() throws(JournalError) {
        try files.withLock { files throws(JournalError) in
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw .io(operation: "mkdir", path: directory, errno: errno)
            }
            let path = directory + "/lock"
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
            // flock locks belong to the open file description: a second open of the same file, in this process or
            // in another, is refused as well. A process that this one forks holds a copy of every descriptor until
            // it calls exec (which closes them, O_CLOEXEC), so a lock given up just then is still held for a moment:
            // wait up to `lockWait` before refusing.
            let deadline = ContinuousClock.now.advanced(by: min(lockWait, .seconds(Int64.max)))
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let error = errno
                if error == EINTR { continue }
                if error == EWOULDBLOCK && ContinuousClock.now < deadline {
                    usleep(1000)
                    continue
                }
                closeDescriptor(descriptor)
                if error == EWOULDBLOCK { throw .locked(directory: directory) }
                throw .io(operation: "flock", path: path, errno: error)
            }
            files.lockDescriptor = descriptor
            // A snapshot is written to a temporary file while the lock is held: one that is here now was left by a
            // write that a crash or a kill cut short, and nothing will ever rename it.
            for leftover in try listFiles(prefix: "snapshot-", suffix: ".snap.tmp", requireSequence: false) {
                unlink(directory + "/" + leftover.name)
            }
        }
    }

    public func lastSequence() throws(JournalError) -> UInt64 {
        try files.withLock { files throws(JournalError) -> UInt64 in
            let segments = try listSegments()
            guard let newest = segments.last else {
                files.last = 0
                return 0
            }
            let path = directory + "/" + newest.name
            let bytes = try readFile(path)
            let end = try withBytes(bytes) { buffer throws(JournalError) in
                try Self.scan(buffer, file: path, first: newest.first, after: 0, isLast: true) {
                    _,
                    _ throws(JournalError) in
                }
            }
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
            if end.length < bytes.count {
                // A torn files.last record (or a torn segment header): cut it off before appending after it.
                if ftruncate(descriptor, off_t(end.length)) != 0 || fsync(descriptor) != 0 {
                    let error = errno
                    closeDescriptor(descriptor)
                    throw .io(operation: "ftruncate", path: path, errno: error)
                }
            }
            if end.length < Self.segmentMagic.count {
                let written = Self.segmentMagic.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written != Self.segmentMagic.count {
                    let error = errno
                    closeDescriptor(descriptor)
                    throw .io(operation: "write", path: path, errno: error)
                }
            }
            lseek(descriptor, 0, SEEK_END)
            files.segmentDescriptor = descriptor
            files.segmentName = newest.name
            files.segmentLength = max(end.length, Self.segmentMagic.count)
            files.segmentHasRecords = end.last >= newest.first
            files.last = end.last
            return files.last
        }
    }

    public func snapshotSequences() throws(JournalError) -> [UInt64] {
        try files.withLock { files throws(JournalError) in
            try listFiles(prefix: "snapshot-", suffix: ".snap").map(\.sequence).sorted(by: >)
        }
    }

    public func readSnapshot(covering sequence: UInt64) throws(JournalError) -> JournalSnapshot {
        let path = directory + "/" + Self.snapshotName(sequence)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { closeDescriptor(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io(operation: "fstat", path: path, errno: errno) }
        // The header, the payload straight into its own array (a snapshot can take hundreds of megabytes: no copy
        // of it out of a buffer of the whole file), then the checksum of both.
        let headerSize = 8 + 8 + 8 + 8
        let size = Int(status.st_size)
        guard size >= headerSize + 4 else { throw .corruptRecord(file: path, offset: 0) }
        let header = try readExactly(headerSize, from: descriptor, path: path)
        guard header.count == headerSize, Array(header[0..<8]) == Self.snapshotMagic else {
            throw .corruptRecord(file: path, offset: 0)
        }
        let (covered, version, length) = header.withUnsafeBytes { buffer in
            (
                UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: 16, as: Int64.self)),
                UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
            )
        }
        guard length <= UInt64(size - headerSize - 4), headerSize + Int(length) + 4 == size else {
            throw .corruptRecord(file: path, offset: 0)
        }
        let payload = try readExactly(Int(length), from: descriptor, path: path)
        let trailer = try readExactly(4, from: descriptor, path: path)
        guard payload.count == Int(length), trailer.count == 4 else { throw .corruptRecord(file: path, offset: 0) }
        let stored = trailer.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        let checksum = header.withUnsafeBytes { header in
            payload.withUnsafeBytes { CRC32C.checksum($0, continuing: CRC32C.checksum(header)) }
        }
        guard checksum == stored, covered == sequence else {
            throw .corruptRecord(file: path, offset: 0)
        }
        return JournalSnapshot(sequence: covered, reducerVersion: Int(version), payload: payload)
    }

    public func readRecords(
        after sequence: UInt64,
        _ body: (_ sequence: UInt64, _ payload: UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError) {
        let segments = try files.withLock { _ throws(JournalError) in try listSegments() }
        guard !segments.isEmpty else { return }
        let wanted = sequence + 1
        guard let start = segments.lastIndex(where: { $0.first <= wanted }) else {
            throw .missingRecords(expected: wanted, file: directory + "/" + segments[0].name)
        }
        var expected = segments[start].first
        for index in start..<segments.count {
            let segment = segments[index]
            let path = directory + "/" + segment.name
            if segment.first != expected {
                throw .missingRecords(expected: expected, file: path)
            }
            let bytes = try readFile(path)
            let end = try withBytes(bytes) { buffer throws(JournalError) in
                try Self.scan(
                    buffer,
                    file: path,
                    first: segment.first,
                    after: sequence,
                    isLast: index == segments.count - 1,
                    body
                )
            }
            expected = end.last + 1
        }
    }

    public func append(_ records: [JournalRecord]) throws(JournalError) {
        guard let first = records.first else { return }
        try files.withLock { files throws(JournalError) in
            if files.segmentDescriptor >= 0 && files.segmentLength >= segmentSize && files.segmentHasRecords {
                closeSegment(&files)
            }
            if files.segmentDescriptor < 0 {
                try startSegment(first: first.sequence, &files)
            }
            let path = directory + "/" + files.segmentName
            var bytes: [UInt8] = []
            bytes.reserveCapacity(records.reduce(0) { $0 + $1.payload.count + Self.recordOverhead })
            var expected = files.last + 1
            for record in records {
                guard record.sequence == expected else {
                    throw .unexpectedSequence(
                        file: path,
                        offset: files.segmentLength + bytes.count,
                        expected: expected,
                        found: record.sequence
                    )
                }
                Self.frame(record, into: &bytes)
                expected += 1
            }
            try withBytes(bytes) { buffer throws(JournalError) in
                var offset = 0
                while offset < buffer.count {
                    let written = write(files.segmentDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        let error = errno
                        // Leave the segment as it was, so that the records already written stay readable.
                        _ = ftruncate(files.segmentDescriptor, off_t(files.segmentLength))
                        throw .io(operation: "write", path: path, errno: error)
                    }
                    offset += written
                }
            }
            files.segmentLength += bytes.count
            files.segmentHasRecords = true
            files.needsSync = true
            files.last = expected - 1
        }
    }

    public func sync() throws(JournalError) {
        try files.withLock { files throws(JournalError) in
            // Nothing written since the files.last sync (a journal opened only to be read, say): no system call.
            guard files.segmentDescriptor >= 0, files.needsSync else { return }
            #if canImport(Darwin)
            let result = fsync(files.segmentDescriptor)
            #else
            // fdatasync also writes the file size, which a reader needs; it skips only the timestamps.
            let result = fdatasync(files.segmentDescriptor)
            #endif
            if result != 0 {
                throw .io(operation: "fsync", path: directory + "/" + files.segmentName, errno: errno)
            }
            files.needsSync = false
        }
    }

    public func writeSnapshot(_ snapshot: JournalSnapshot) throws(JournalError) {
        var bytes = Self.snapshotMagic
        Self.appendInteger(snapshot.sequence, to: &bytes)
        Self.appendInteger(Int64(snapshot.reducerVersion), to: &bytes)
        Self.appendInteger(UInt64(snapshot.payload.count), to: &bytes)
        bytes += snapshot.payload
        Self.appendInteger(CRC32C.checksum(bytes), to: &bytes)
        try replaceDurably(at: directory + "/" + Self.snapshotName(snapshot.sequence), with: bytes)
        // The next record starts a new segment, so that compaction can drop the segments this snapshot covers.
        files.withLock { files in
            if files.segmentHasRecords { closeSegment(&files) }
        }
    }

    public func compact(keepingSnapshots keeping: Int) throws(JournalError) {
        try files.withLock { files throws(JournalError) in
            let snapshots = try listFiles(prefix: "snapshot-", suffix: ".snap").sorted { $0.sequence > $1.sequence }
            guard keeping > 0, snapshots.count >= keeping else { return }
            for old in snapshots.dropFirst(keeping) {
                unlink(directory + "/" + old.name)
            }
            // Records up to the oldest snapshot kept are no longer needed by any recovery.
            let floor = snapshots[keeping - 1].sequence
            let segments = try listSegments()
            for index in segments.indices.dropLast() where segments[index + 1].first - 1 <= floor {
                if segments[index].name != files.segmentName {
                    unlink(directory + "/" + segments[index].name)
                }
            }
            try syncDirectory()
        }
    }

    public func close() {
        files.withLock { closeFiles(&$0) }
    }

    // MARK: - Writer versions

    /// The file that keeps the writer versions: a line `<first sequence> <reducer version>` for each.
    private var versionsPath: String { directory + "/versions" }

    public func writerVersions() throws(JournalError) -> [JournalWriterVersion] {
        let path = versionsPath
        guard access(path, F_OK) == 0 else { return [] }
        let text = String(decoding: try readFile(path), as: UTF8.self)
        var versions: [JournalWriterVersion] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let first = UInt64(fields[0]), let version = Int(fields[1]) else {
                throw .badHeader(file: path)
            }
            versions.append(JournalWriterVersion(firstSequence: first, reducerVersion: version))
        }
        return versions
    }

    public func recordWriterVersion(_ version: JournalWriterVersion) throws(JournalError) {
        try files.withLock { _ throws(JournalError) in
            var versions = try writerVersions().filter { $0.firstSequence < version.firstSequence }
            versions.append(version)
            let text = versions.map { "\($0.firstSequence) \($0.reducerVersion)\n" }.joined()
            try replaceDurably(at: versionsPath, with: Array(text.utf8))
        }
    }

    /// Writes `bytes` to `path` whole or not at all: into `path.tmp`, synced, renamed over `path`, the directory
    /// synced; the temporary file is removed if a step fails.
    private func replaceDurably(at path: String, with bytes: [UInt8]) throws(JournalError) {
        let temporary = path + ".tmp"
        do throws(JournalError) {
            try writeDurably(bytes, to: temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw .io(operation: "rename", path: path, errno: error)
        }
        try syncDirectory()
    }

    // MARK: - Files

    private func closeFiles(_ files: inout Files) {
        closeSegment(&files)
        if files.lockDescriptor >= 0 {
            closeDescriptor(files.lockDescriptor)
            files.lockDescriptor = -1
        }
    }

    private func closeSegment(_ files: inout Files) {
        if files.segmentDescriptor >= 0 {
            if files.needsSync {
                _ = fsync(files.segmentDescriptor)
                files.needsSync = false
            }
            closeDescriptor(files.segmentDescriptor)
            files.segmentDescriptor = -1
        }
    }

    private func startSegment(first: UInt64, _ files: inout Files) throws(JournalError) {
        let name = Self.segmentName(first)
        let path = directory + "/" + name
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        let written = Self.segmentMagic.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == Self.segmentMagic.count, fsync(descriptor) == 0 else {
            let error = errno
            closeDescriptor(descriptor)
            unlink(path)
            throw .io(operation: "write", path: path, errno: error)
        }
        try syncDirectory()
        files.segmentDescriptor = descriptor
        files.segmentName = name
        files.segmentLength = Self.segmentMagic.count
        files.segmentHasRecords = false
    }

    private func writeDurably(_ bytes: [UInt8], to path: String) throws(JournalError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { closeDescriptor(descriptor) }
        try withBytes(bytes) { buffer throws(JournalError) in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw .io(operation: "write", path: path, errno: errno)
                }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
    }

    private func syncDirectory() throws(JournalError) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(operation: "open", path: directory, errno: errno) }
        defer { closeDescriptor(descriptor) }
        guard fsync(descriptor) == 0 else { throw .io(operation: "fsync", path: directory, errno: errno) }
    }

    private func readFile(_ path: String) throws(JournalError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { closeDescriptor(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io(operation: "fstat", path: path, errno: errno) }
        return try readExactly(Int(status.st_size), from: descriptor, path: path)
    }

    /// Reads up to `count` bytes from the descriptor's offset: fewer only at the end of the file. The array is
    /// not zeroed first (the segments and snapshots can take hundreds of megabytes).
    private func readExactly(_ count: Int, from descriptor: Int32, path: String) throws(JournalError) -> [UInt8] {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            while initialized < count {
                let got = read(descriptor, buffer.baseAddress! + initialized, count - initialized)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                if got == 0 { break }
                initialized += got
            }
        }
        if failure != 0 { throw .io(operation: "read", path: path, errno: failure) }
        return bytes
    }

    private func listSegments() throws(JournalError) -> [(first: UInt64, name: String)] {
        let segments = try listFiles(prefix: "segment-", suffix: ".log")
        // Sequences start at 1: a segment named for 0 is no segment this storage wrote.
        if let zero = segments.first(where: { $0.sequence == 0 }) {
            throw .badFileName(file: directory + "/" + zero.name)
        }
        return segments.map { (first: $0.sequence, name: $0.name) }.sorted { $0.first < $1.first }
    }

    /// The largest sequence number a file name may carry. Sequence numbers fit in a signed 64-bit integer (as in a
    /// database's `bigint`), so that one past any of them does not overflow.
    static let largestSequence = UInt64(Int64.max)

    /// The files whose names are `prefix`, a sequence number and `suffix`, with that number.
    ///
    /// - Throws: ``JournalError/badFileName(file:)`` for a name whose number is out of range (above
    ///   ``largestSequence``, or too long to be a number): a file the storage never wrote, which it refuses to guess
    ///   about. Names with no digits there are not the storage's and are ignored, unless `requireSequence` is false,
    ///   which lists every name with the prefix and suffix.
    private func listFiles(
        prefix: String,
        suffix: String,
        requireSequence: Bool = true
    ) throws(JournalError) -> [(sequence: UInt64, name: String)] {
        guard let stream = opendir(directory) else { throw .io(operation: "opendir", path: directory, errno: errno) }
        defer { closedir(stream) }
        var files: [(sequence: UInt64, name: String)] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
            }
            guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count >= prefix.count + suffix.count else {
                continue
            }
            guard requireSequence else {
                files.append((0, name))
                continue
            }
            let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { continue }
            guard let sequence = UInt64(digits), sequence <= Self.largestSequence else {
                throw .badFileName(file: directory + "/" + name)
            }
            files.append((sequence, name))
        }
        return files
    }

    // MARK: - Format

    static func segmentName(_ first: UInt64) -> String {
        "segment-" + padded(first) + ".log"
    }

    static func snapshotName(_ sequence: UInt64) -> String {
        "snapshot-" + padded(sequence) + ".snap"
    }

    private static func padded(_ value: UInt64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    static func appendInteger<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        // Byte by byte: cheaper per integer than `append(contentsOf:)` of the value's raw bytes.
        var shift = 0
        while shift < T.bitWidth {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
            shift += 8
        }
    }

    /// Appends a record's bytes: header (length, sequence, header checksum), payload, payload checksum.
    static func frame(_ record: JournalRecord, into bytes: inout [UInt8]) {
        let start = bytes.count
        appendInteger(UInt32(record.payload.count), to: &bytes)
        appendInteger(record.sequence, to: &bytes)
        let headerChecksum = bytes.withUnsafeBytes {
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<start + 12]))
        }
        appendInteger(headerChecksum, to: &bytes)
        bytes += record.payload
        appendInteger(record.payload.withUnsafeBytes { CRC32C.checksum($0) }, to: &bytes)
    }

    /// Checks the records of one segment and passes those after `after` to `body`.
    ///
    /// Returns the length of the valid prefix and the last sequence in it (`first - 1` when it holds none). In
    /// the last segment, a record that a crash cut short ends the valid prefix; anywhere else, and for a damaged
    /// record that more data follows, it throws.
    static func scan(
        _ buffer: UnsafeRawBufferPointer,
        file: String,
        first: UInt64,
        after: UInt64,
        isLast: Bool,
        _ body: (UInt64, UnsafeRawBufferPointer) throws(JournalError) -> Void
    ) throws(JournalError) -> (length: Int, last: UInt64) {
        let count = buffer.count
        let magicCount = segmentMagic.count
        guard count >= magicCount else {
            if isLast { return (0, first - 1) }
            throw .badHeader(file: file)
        }
        guard segmentMagic.withUnsafeBytes({ $0.elementsEqual(buffer[0..<magicCount]) }) else {
            throw .badHeader(file: file)
        }
        func zeros(from offset: Int) -> Bool {
            offset >= count || buffer[offset..<count].allSatisfy { $0 == 0 }
        }
        var offset = magicCount
        var expected = first
        while offset < count {
            let remaining = count - offset
            if remaining < recordHeaderSize {
                if isLast { break }
                throw .corruptRecord(file: file, offset: offset)
            }
            let length = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            let sequence = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt64.self))
            let headerChecksum = UInt32(
                littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
            )
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 12])) == headerChecksum,
                length <= largestPayload
            else {
                if isLast && zeros(from: offset + recordHeaderSize) { break }
                throw .corruptRecord(file: file, offset: offset)
            }
            let end = offset + recordOverhead + length
            if end > count {
                if isLast { break }
                throw .corruptRecord(file: file, offset: offset)
            }
            let payload = UnsafeRawBufferPointer(rebasing: buffer[offset + recordHeaderSize..<end - 4])
            let checksum = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: end - 4, as: UInt32.self))
            guard CRC32C.checksum(payload) == checksum else {
                if isLast && zeros(from: end) { break }
                throw .corruptRecord(file: file, offset: offset)
            }
            guard sequence == expected else {
                throw .unexpectedSequence(file: file, offset: offset, expected: expected, found: sequence)
            }
            if sequence > after {
                try body(sequence, payload)
            }
            expected += 1
            offset = end
        }
        return (offset, expected - 1)
    }
}

/// Closes a file descriptor (the global `close`, which a method named `close` hides inside the class).
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// `withUnsafeBytes` for a body with a typed error (the standard library's rethrows `any Error`).
func withBytes<R>(
    _ bytes: [UInt8],
    _ body: (UnsafeRawBufferPointer) throws(JournalError) -> R
) throws(JournalError) -> R {
    let result = bytes.withUnsafeBytes { buffer in
        Result { () throws(JournalError) -> R in try body(buffer) }
    }
    return try result.get()
}
