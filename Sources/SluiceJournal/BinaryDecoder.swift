import Sluice

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes the values that ``BinaryEncoder`` writes, straight from the journal's bytes, with every read bounds-checked
/// (a damaged payload throws a `DecodingError`, never reads out of bounds).
///
/// A payload whose containers nest deeper than ``BinaryEncoder/maximumDepth``, or with a key that is not valid UTF-8,
/// throws before any value is decoded. The library's own reading of the payload is iterative; the depth bounds the
/// recursion of the values' `init(from:)`, so that decoding is safe on a thread with a small stack.
///
/// A `Decodable` may keep its decoder or a container and use it after the call that decoded it, as with
/// `JSONDecoder`: the decoder and its containers hold the decoding's state, which then keeps a copy of the payload.
struct BinaryDecoder {
    /// Decodes the payload in `bytes`, whose first byte is ``BinaryEncoder/version``.
    ///
    /// `bytes` need only stay valid during the call.
    ///
    /// With `concurrently`, the values of a large dictionary of containers are decoded on several threads (see
    /// ``BinaryDecodingOptions/concurrently``): only for a value whose type is `Sendable`.
    static func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer,
        concurrently: Bool = false
    ) throws -> Value {
        var keyComparisons = 0
        var options = BinaryDecodingOptions()
        options.concurrently = concurrently
        return try decode(type, from: bytes, options: options, keyComparisons: &keyComparisons)
    }

    /// Decodes the payload in `bytes` and adds to `keyComparisons` the number of keys of the payload that the
    /// lookups compared with the key they looked for (by bytes, or by hash in an index), so that a test can check
    /// that decoding stays linear in the size of the payload.
    static func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer,
        options: BinaryDecodingOptions = BinaryDecodingOptions(),
        keyComparisons: inout Int
    ) throws -> Value {
        var helperChunks = 0
        return try decode(
            type,
            from: bytes,
            options: options,
            keyComparisons: &keyComparisons,
            helperChunks: &helperChunks
        )
    }

    /// Decodes the payload in `bytes` as ``decode(_:from:options:keyComparisons:)`` does, and adds to `helperChunks`
    /// the number of chunks of dictionary entries that threads other than the caller's decoded (see
    /// ``BinaryDecodingOptions/concurrently``).
    static func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer,
        options: BinaryDecodingOptions,
        keyComparisons: inout Int,
        helperChunks: inout Int
    ) throws -> Value {
        var counters = BinaryDecodingCounters()
        defer {
            keyComparisons += counters.keyComparisons
            helperChunks += counters.helperChunks
        }
        return try decode(type, from: bytes, options: options, counters: &counters)
    }

    /// Decodes the payload in `bytes` as ``decode(_:from:options:keyComparisons:helperChunks:)`` does, and adds to
    /// `counters` what the decoding counted.
    static func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer,
        options: BinaryDecodingOptions,
        counters: inout BinaryDecodingCounters
    ) throws -> Value {
        let state = UnsafeMutablePointer<BinaryReaderState>.allocate(capacity: 1)
        state.initialize(to: BinaryReaderState(bytes))
        state.pointee.options = options
        // The root of every coding path, which frees the state once no decoder or container holds a path. A leaf
        // type makes no decoder: its errors have the shared empty path, and the state is freed below.
        let isLeaf =
            Value.self == Int.self || Value.self == String.self || Value.self == Double.self
            || Value.self == Bool.self
        var root = isLeaf ? nil : BinaryPathNode(owning: state)
        let reader = BinaryReader(state: state)
        defer {
            counters.keyComparisons += reader.keyComparisons
            counters.helperChunks += reader.helperChunks
            counters.skipSteps += reader.skipSteps
            if root == nil {
                state.deinitialize(count: 1)
                state.deallocate()
            } else if !isKnownUniquelyReferenced(&root) {
                // A path still held is a decoder or a container that a value kept: it may read the payload later,
                // after `bytes` is gone, so the state takes a copy of them.
                reader.ownBytes()
            }
        }
        guard bytes.count > 1, bytes[0] == BinaryEncoder.version else {
            throw reader.corrupt(at: 0, [], "not a version 1 binary payload")
        }
        // The value must fill the payload exactly: a length that a bug or damage changed is not read as a prefix.
        // This walk also checks the nesting depth and the keys, counts the entries of the large containers (so that
        // the dictionaries and arrays read from them are allocated once without a second walk), notes the end of
        // each large container (so that skipping it later takes no walk), and looks for keys written twice (see
        // `findNext`).
        guard try reader.walk() == bytes.count else {
            throw reader.corrupt(at: 1, [], "the value does not end where the payload does")
        }
        return try reader.decode(Value.self, at: 1, root ?? BinaryPathNode.empty)
    }
}

/// What a decoding counted, for the tests that check that it stays linear in the size of the payload.
struct BinaryDecodingCounters {
    /// The keys of the payload that lookups compared with the key they looked for.
    var keyComparisons = 0
    /// The chunks of dictionary entries that threads other than the caller's decoded.
    var helperChunks = 0
    /// The values that skips passed over after the first walk (see ``BinaryReader/skip(at:)``).
    var skipSteps = 0
}

/// How ``BinaryDecoder`` builds large dictionaries: the defaults, or smaller chunks and a fixed number of threads for
/// the tests of the concurrent path.
struct BinaryDecodingOptions {
    /// Whether the values of a large dictionary of containers (a dictionary of structs) may be decoded on several
    /// threads: the entries are decoded in chunks, by the caller's thread and by up to one helper thread per other
    /// processor, and inserted into the dictionary on the caller's thread in the written order. The values'
    /// `init(from:)` then runs on several threads at once, so this is only for a value whose type is `Sendable`
    /// (the state of a store). A value that does not decode makes the caller decode the whole dictionary again on
    /// its own thread, entry after entry, so that the error reported is the first one in the written order, with
    /// its coding path, as without this option.
    var concurrently = false
    /// The number of entries of a chunk.
    var chunkEntries = 4_096
    /// The number of entries from which a dictionary is decoded on several threads.
    var concurrentEntries = 16_384
    /// The number of helper threads; `nil` for one per processor but the caller's (at most 7).
    var helpers: Int?
    /// Whether the caller's thread decodes chunks too (`false`, for the tests: the helpers decode every chunk).
    var callerDecodes = true
}

/// One step of the coding path of a value being decoded, linked to the step before: made into an array of keys only
/// when something asks for it (an error, or a `Decodable` that reads `codingPath`), which most values never do.
///
/// The decoder and its containers hold their node, and through it the whole path up to the root, which owns the
/// state of the decoding (``BinaryReaderState``): a decoder or a container that a `Decodable` keeps stays usable
/// after the decoding, and the state is freed with the last of them. A helper thread's state is owned by a node
/// of its own, `keeper`, which its entries hold.
private final class BinaryPathNode {
    let parent: BinaryPathNode?
    /// The state that this node owns and frees: the root's, or a helper thread's.
    private let ownedState: UnsafeMutablePointer<BinaryReaderState>?
    /// The node that owns the state of the thread that decodes this entry, if not the root.
    private let keeper: BinaryPathNode?
    /// The step's key; `nil` for the root, and for a dictionary's entries, whose key is read from the payload.
    let key: (any CodingKey)?
    /// The number of keys in the path.
    let depth: Int
    /// Whether the step is the entry of a dictionary whose value is being decoded: the dictionary decodes its values
    /// one after the other with one node, whose key is then the one at `keyStart..<keyEnd`.
    let isEntry: Bool
    @exclusivity(unchecked) var keyStart = 0
    @exclusivity(unchecked) var keyEnd = 0
    /// The error that ended a ``BinaryEntries`` sequence.
    @exclusivity(unchecked) var error: (any Error)?

    /// The path of a leaf decoded alone, which owns no state: never changed, shared by every decoding.
    nonisolated(unsafe) static let empty = BinaryPathNode(owning: nil)

    /// The root, which owns `state`; or, for a helper thread, the owner of its state, outside any path.
    init(owning state: UnsafeMutablePointer<BinaryReaderState>?) {
        parent = nil
        ownedState = state
        keeper = nil
        key = nil
        depth = 0
        isEntry = false
    }

    /// The step `key` after `parent`.
    init(_ parent: BinaryPathNode, _ key: any CodingKey) {
        self.parent = parent
        ownedState = nil
        keeper = nil
        self.key = key
        depth = parent.depth + 1
        isEntry = false
    }

    /// The entries of a dictionary at `parent`, decoded on the thread whose state `keeper` owns (`nil` for the
    /// root's).
    init(entriesOf parent: BinaryPathNode, keeper: BinaryPathNode? = nil) {
        self.parent = parent
        ownedState = nil
        self.keeper = keeper
        key = nil
        depth = parent.depth + 1
        isEntry = true
    }

    /// The entries of the same dictionary as `self`, for the entries after one whose decoder a value kept (which
    /// must keep its own key).
    func sibling() -> BinaryPathNode {
        BinaryPathNode(entriesOf: parent!, keeper: keeper)
    }

    deinit {
        if let ownedState {
            ownedState.pointee.ownedBytes?.deallocate()
            ownedState.deinitialize(count: 1)
            ownedState.deallocate()
        }
    }

    /// The keys of the path.
    func keys(_ reader: BinaryReader) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        keys.reserveCapacity(depth)
        var node: BinaryPathNode? = self
        while let step = node, step.depth > 0 {
            if step.isEntry {
                keys.append(BinaryDictionaryKey(stringValue: reader.key(step.keyStart, step.keyEnd)))
            } else if let key = step.key {
                keys.append(key)
            }
            node = step.parent
        }
        keys.reverse()
        return keys
    }
}

/// Where a lookup found a key last in a keyed container: see ``BinaryReader/findNext(_:in:depth:)``.
private struct FoundKey {
    /// The offset of the container's first entry; -1 for none.
    var start = -1
    /// The offset of the value of the entry found.
    var value = 0
    /// The entry's index in the container.
    var entry = 0
}

/// What one decoding keeps: the payload, and what the reader learns about it (see ``BinaryReader``).
private struct BinaryReaderState {
    /// The payload: the caller's bytes during the decoding, or ``ownedBytes`` after it.
    var bytes: UnsafeRawBufferPointer
    /// A copy of the payload, taken at the end of a decoding whose decoder or containers a value kept; freed with
    /// the state.
    var ownedBytes: UnsafeMutableRawBufferPointer?
    /// The number of keys compared with a key looked for: see ``BinaryDecoder/decode(_:from:keyComparisons:)``.
    var keyComparisons = 0
    /// For each depth of the coding path, the start of the container whose index is in `indexesInUse` at that depth
    /// (-1 for none): a `Decodable` uses one keyed container at a time at each depth, so the index of the container
    /// in use is found by a comparison, without a hash.
    var startInUse: [Int] = []
    var indexesInUse: [KeyIndex?] = []
    /// Every index built, by container start: for a `Decodable` that goes back to a container after using another
    /// one at the same depth.
    var indexes: [Int: KeyIndex] = [:]
    /// The number of entries of each container of ``BinaryReader/countedEntries`` or more, by the offset of its
    /// tag, as the first walk counted them.
    var counts: [Int: Int] = [:]
    /// The offset of each entry of each keyed container of ``BinaryReader/countedEntries`` or more entries whose
    /// values are containers, by the offset of its tag, as the first walk found them (in a payload of less than
    /// 4 GiB): a dictionary read from the container finds each entry without skipping the one before.
    var entryOffsets: [Int: [UInt32]] = [:]
    /// The offset after each container of more than ``BinaryReader/rememberedExtent`` bytes, by the offset of its
    /// tag, as the first walk found it: a skip over such a container takes its end from here, so that skipping a
    /// large value costs the same as skipping a small one, at any depth.
    var ends: [Int: Int] = [:]
    /// The values that skips passed over: see ``BinaryDecodingCounters/skipSteps``.
    var skipSteps = 0
    /// Whether a keyed container of the payload repeats a key among its first ``BinaryReader/scanLimit`` entries,
    /// as the first walk found; if not, a lookup may take the entry after the one found last without a scan (see
    /// ``BinaryReader/findNext(_:in:depth:)``).
    var repeatedKeys = false
    /// For each depth of the coding path, where a lookup found a key last.
    var foundKeys: [FoundKey] = []
    /// The offset of the leaf value (or array of leaves) decoded last, and the offset after it: a lookup of the next
    /// key starts there without skipping the value again.
    var decodedStart = -1
    var decodedEnd = -1
    /// The last type found not to be a dictionary that ``BinaryKeyedDictionary`` reads: a state decodes many values
    /// of one type in a row, and this saves a conformance check for each.
    var notDictionary: ObjectIdentifier?
    var options = BinaryDecodingOptions()
    /// The number of chunks of dictionary entries that helper threads decoded.
    var helperChunks = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The state of a helper thread that decodes entries of the payload that `main` decodes: the same bytes and what
    /// the first walk found (read only, shared by copy on write), its own lookups, and no concurrency of its own.
    init(helping main: BinaryReaderState) {
        bytes = main.bytes
        counts = main.counts
        entryOffsets = main.entryOffsets
        ends = main.ends
        repeatedKeys = main.repeatedKeys
    }
}

/// A container that ``BinaryReader/walk()`` is in: 16 bytes, so that the walk's frames fit in 1 KiB of stack.
private struct BinaryWalkFrame {
    /// The offset of its tag.
    let start: UInt32
    /// The number of its entries (or elements) walked.
    var entries: UInt32 = 0
    /// For a keyed container, a bit for each of the first entries' keys, from its length and its first and last
    /// bytes: a key whose bit is already set is compared with the earlier keys
    /// (``BinaryReader/repeats(_:_:before:from:)``), any other one is new. All bits set for an unkeyed container
    /// (a keyed one sets at most ``BinaryReader/scanLimit`` of them).
    var signatures: UInt64

    init(start: Int, keyed: Bool) {
        self.start = UInt32(start)
        signatures = keyed ? 0 : .max
    }

    var keyed: Bool { signatures != .max }
}

/// The payload being decoded, and the key indexes of its large keyed containers.
///
/// A key lookup first scans the container from its first entry, as most containers are small structs whose few
/// keys a scan finds sooner than a hash would; a scan that passes ``scanLimit`` entries, or more than
/// ``scanBytes`` bytes, stops and the lookup goes through the container's ``KeyIndex``, built once. So a
/// `Decodable` that looks up every key of a large container stays linear in its size, and so does a struct after a
/// large field. (A dictionary with `String` or `Int` keys in a large payload makes no lookups: see
/// ``BinaryKeyedDictionary``.)
///
/// A pointer to the state of one decoding, one word without a reference count: the decoder and the containers, which
/// `Codable` copies for every call, hold it beside their ``BinaryPathNode``, whose path leads to the node that owns
/// the state, so that the state lives as long as any of them.
private struct BinaryReader {
    let state: UnsafeMutablePointer<BinaryReaderState>

    /// The entries a scan passes before the lookup uses an index.
    static let scanLimit = 16
    /// The bytes a scan passes before the lookup uses an index: skipping a value is linear in its elements, so a
    /// scan past a large value must not be repeated for every key after it.
    static let scanBytes = 1024
    /// The size of a payload from which a keyed container is checked for a dictionary to read in one pass (see
    /// ``BinaryKeyedDictionary``).
    static let largePayload = 1024
    /// The number of entries from which the first walk keeps a container's count.
    static let countedEntries = 64
    /// The size in bytes from which the first walk keeps a container's end (see ``BinaryReaderState/ends``).
    static let rememberedExtent = 256
    /// The deepest nesting of containers that a payload may have.
    static let maximumDepth = BinaryEncoder.maximumDepth

    var bytes: UnsafeRawBufferPointer { state.pointee.bytes }
    var keyComparisons: Int {
        unsafeAddress { UnsafePointer(state.pointer(to: \.keyComparisons)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.keyComparisons)! }
    }
    var startInUse: [Int] {
        unsafeAddress { UnsafePointer(state.pointer(to: \.startInUse)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.startInUse)! }
    }
    var indexesInUse: [KeyIndex?] {
        unsafeAddress { UnsafePointer(state.pointer(to: \.indexesInUse)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.indexesInUse)! }
    }
    var indexes: [Int: KeyIndex] {
        unsafeAddress { UnsafePointer(state.pointer(to: \.indexes)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.indexes)! }
    }
    var counts: [Int: Int] {
        unsafeAddress { UnsafePointer(state.pointer(to: \.counts)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.counts)! }
    }
    var entryOffsets: [Int: [UInt32]] {
        unsafeAddress { UnsafePointer(state.pointer(to: \.entryOffsets)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.entryOffsets)! }
    }
    var repeatedKeys: Bool {
        unsafeAddress { UnsafePointer(state.pointer(to: \.repeatedKeys)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.repeatedKeys)! }
    }
    var foundKeys: [FoundKey] {
        unsafeAddress { UnsafePointer(state.pointer(to: \.foundKeys)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.foundKeys)! }
    }
    var decodedStart: Int {
        unsafeAddress { UnsafePointer(state.pointer(to: \.decodedStart)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.decodedStart)! }
    }
    var decodedEnd: Int {
        unsafeAddress { UnsafePointer(state.pointer(to: \.decodedEnd)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.decodedEnd)! }
    }
    var ends: [Int: Int] {
        unsafeAddress { UnsafePointer(state.pointer(to: \.ends)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.ends)! }
    }
    var skipSteps: Int {
        unsafeAddress { UnsafePointer(state.pointer(to: \.skipSteps)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.skipSteps)! }
    }
    var notDictionary: ObjectIdentifier? {
        unsafeAddress { UnsafePointer(state.pointer(to: \.notDictionary)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.notDictionary)! }
    }
    var options: BinaryDecodingOptions {
        unsafeAddress { UnsafePointer(state.pointer(to: \.options)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.options)! }
    }
    var helperChunks: Int {
        unsafeAddress { UnsafePointer(state.pointer(to: \.helperChunks)!) }
        nonmutating unsafeMutableAddress { state.pointer(to: \.helperChunks)! }
    }

    /// The index of the keyed container whose first entry is at `start`, and whose coding path is `depth` keys long,
    /// if it has one.
    @inline(__always)
    func indexInUse(_ start: Int, depth: Int) -> KeyIndex? {
        depth < startInUse.count && startInUse[depth] == start ? indexesInUse[depth] : nil
    }

    /// The index of the keyed container at `start`, built if it has none yet.
    func index(_ start: Int, depth: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> KeyIndex {
        if let index = indexInUse(start, depth: depth) { return index }
        let index: KeyIndex
        if let built = indexes[start] {
            index = built
        } else {
            index = try KeyIndex(self, start: start, codingPath())
            indexes[start] = index
        }
        while startInUse.count <= depth {
            startInUse.append(-1)
            indexesInUse.append(nil)
        }
        startInUse[depth] = start
        indexesInUse[depth] = index
        return index
    }

    /// The offset of the value for the key whose UTF-8 is `wanted`, in the keyed container whose first entry is at
    /// `start`; `nil` if it has none. A key written more than once has its first value.
    func find(
        _ wanted: UnsafeRawBufferPointer,
        in start: Int,
        depth: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> Int? {
        if let index = indexInUse(start, depth: depth) {
            return index.find(wanted, in: self)
        }
        var cursor = start
        var passed = 0
        while true {
            let (keyCount, keyStart) = try varint(at: cursor, codingPath())
            if keyCount == 0 { return nil }
            let keyEnd = try end(keyStart, plus: keyCount - 1, codingPath())
            keyComparisons += 1
            if equal(keyStart, keyEnd, wanted) {
                if !repeatedKeys { found(keyEnd, entry: passed, in: start, depth: depth) }
                return keyEnd
            }
            if keyEnd < bytes.count, let next = leafEnd(at: keyEnd) {
                cursor = next
            } else {
                cursor = try skip(at: keyEnd)
            }
            passed += 1
            if passed == Self.scanLimit || cursor - start > Self.scanBytes { break }
        }
        if try byte(at: cursor, codingPath()) == 0x00 { return nil }
        return try index(start, depth: depth, codingPath()).find(wanted, in: self)
    }

    /// The offset of the value for the key whose UTF-8 is `wanted` if it is the key of the entry after the one found
    /// last in the keyed container at `start`; `nil` otherwise (``find(_:in:depth:_:)`` then looks it up).
    ///
    /// That entry is the next key of a `Decodable` that reads its keys in the written order, as a synthesized
    /// `init(from:)` does, and it is the first entry with its key if no container repeats a key among its first
    /// entries, which the first walk checked.
    @inline(__always)
    func findNext(_ wanted: UnsafeRawBufferPointer, in start: Int, depth: Int) -> Int? {
        guard depth < foundKeys.count else { return nil }
        let found = foundKeys[depth]
        guard found.start == start && found.entry + 1 < Self.scanLimit else { return nil }
        let entry: Int
        if found.value == decodedStart {
            entry = decodedEnd
        } else if let next = try? skip(at: found.value) {
            entry = next
        } else {
            return nil
        }
        guard let (keyCount, keyStart) = quickVarint(at: entry), keyCount > 0,
            keyCount <= UInt64(bytes.count - keyStart + 1)
        else { return nil }
        let keyEnd = keyStart + Int(keyCount) - 1
        keyComparisons += 1
        guard equal(keyStart, keyEnd, wanted) else { return nil }
        foundKeys[depth].value = keyEnd
        foundKeys[depth].entry = found.entry + 1
        return keyEnd
    }

    /// Notes that a lookup found the entry `entry`, whose value is at `value`, in the keyed container at `start`.
    private func found(_ value: Int, entry: Int, in start: Int, depth: Int) {
        while foundKeys.count <= depth {
            foundKeys.append(FoundKey())
        }
        foundKeys[depth] = FoundKey(start: start, value: value, entry: entry)
    }

    /// Reads the payload from a copy of its bytes from now on, for a decoder or a container that a value kept: the
    /// caller's bytes are valid only during the decoding.
    func ownBytes() {
        guard state.pointee.ownedBytes == nil else { return }
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        copy.copyMemory(from: bytes)
        state.pointee.ownedBytes = copy
        state.pointee.bytes = UnsafeRawBufferPointer(copy)
    }

    /// Notes that the value at `start` was decoded, and ends before `end`.
    @inline(__always)
    func decoded(_ start: Int, _ end: Int) {
        decodedStart = start
        decodedEnd = end
    }

    /// The key at `keyStart..<keyEnd`, bounds already checked.
    func key(_ keyStart: Int, _ keyEnd: Int) -> String {
        String(
            decoding: UnsafeRawBufferPointer(start: bytes.baseAddress! + keyStart, count: keyEnd - keyStart),
            as: UTF8.self
        )
    }

    /// The key at `keyStart..<keyEnd` as an `Int`, parsed as `Int(_:)` parses a string (an optional sign, then
    /// decimal digits), without making the string; `nil` if it is not one.
    func intKey(_ keyStart: Int, _ keyEnd: Int) -> Int? {
        var index = keyStart
        guard index < keyEnd else { return nil }
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative || bytes[index] == UInt8(ascii: "+") { index += 1 }
        guard index < keyEnd else { return nil }
        var result = 0
        while index < keyEnd {
            let digit = Int(bytes[index]) &- Int(UInt8(ascii: "0"))
            guard digit >= 0 && digit <= 9 else { return nil }
            let (times10, overflow) = result.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            guard !overflow && !overflow2 else { return nil }
            result = next
            index += 1
        }
        return result
    }

    /// Whether the key at `keyStart..<keyEnd` is `wanted`.
    @inline(__always)
    func equal(_ keyStart: Int, _ keyEnd: Int, _ wanted: UnsafeRawBufferPointer) -> Bool {
        let length = keyEnd - keyStart
        guard length == wanted.count else { return false }
        if length == 0 { return true }
        let key = bytes.baseAddress! + keyStart
        let other = wanted.baseAddress!
        // The names of most keys are short: compared here, without a call.
        if length < 8 {
            for index in 0..<length {
                let byte = key.load(fromByteOffset: index, as: UInt8.self)
                if byte != other.load(fromByteOffset: index, as: UInt8.self) { return false }
            }
            return true
        }
        if length <= 16 {
            return key.loadUnaligned(as: UInt64.self) == other.loadUnaligned(as: UInt64.self)
                && key.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
                    == other.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
        }
        return memcmp(key, other, length) == 0
    }

    func corrupt(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey], _ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath(), debugDescription: "\(message) (payload byte \(offset))"))
    }

    @inline(__always)
    func byte(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> UInt8 {
        guard offset >= 0 && offset < bytes.count else {
            throw corrupt(at: offset, codingPath(), "the payload ends early")
        }
        return bytes[offset]
    }

    /// Reads a varint at `offset`; returns it and the offset after it.
    @inline(__always)
    func varint(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (UInt64, Int) {
        if let result = quickVarint(at: offset) { return result }
        return try varintOrError(at: offset, codingPath())
    }

    /// Reads a varint at `offset` without throwing: its value and the offset after it, `nil` if it runs past the
    /// payload or past 64 bits (``varintOrError(at:_:)`` then says which).
    @inline(__always)
    func quickVarint(at offset: Int) -> (UInt64, Int)? {
        let count = bytes.count
        guard offset >= 0 && offset < count else { return nil }
        // One byte: every tag-sized count, key length and small integer.
        let first = bytes[offset]
        if first < 0x80 { return (UInt64(first), offset + 1) }
        var value = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        var cursor = offset + 1
        while cursor < count {
            let byte = bytes[cursor]
            cursor += 1
            if shift == 63 && byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (value, cursor) }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    /// Reads the varint at `offset` as ``quickVarint(at:)`` does, throwing where it returns `nil`: out of line, so
    /// that the callers' fast paths stay small.
    @inline(never)
    func varintOrError(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (UInt64, Int) {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var offset = offset
        while true {
            let byte = try self.byte(at: offset, codingPath())
            offset += 1
            if shift == 63 && byte > 1 { throw corrupt(at: offset - 1, codingPath(), "a varint overflows") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (value, offset) }
            shift += 7
            if shift > 63 { throw corrupt(at: offset, codingPath(), "a varint is too long") }
        }
    }

    /// The offset after the value that is not a container at `offset` (which must be in the payload); `nil` for a
    /// container, or for a value that is damaged (``skip(at:)`` then throws). Never throws, so that it is
    /// inlined into the loops that walk containers.
    @inline(__always)
    private func leafEnd(at offset: Int) -> Int? {
        let count = bytes.count
        switch bytes[offset] {
        case 0x00, 0x01, 0x02: return offset + 1
        case 0x03, 0x04: return quickVarint(at: offset + 1)?.1
        case 0x05: return count - offset >= 5 ? offset + 5 : nil
        case 0x06: return count - offset >= 9 ? offset + 9 : nil
        case 0x07:
            guard let (length, start) = quickVarint(at: offset + 1), length <= UInt64(count - start) else {
                return nil
            }
            return start + Int(length)
        default: return nil
        }
    }

    /// The offset after the value at `offset`, in a payload that ``walk()`` checked.
    ///
    /// Iterative, with no recursion: the open containers are bits of a word (a stack of words past 64 levels). A
    /// container of more than ``rememberedExtent`` bytes ends where the first walk noted (`ends`), looked up once the
    /// skip has passed that many bytes, so that a skip costs at most a few hundred bytes of reading whatever the size
    /// and depth of the value: decoding stays linear in the payload when a lookup skips a large value for each of
    /// its levels (an enum's `allKeys`, a struct's key after a large field). Errors have an empty coding path: every
    /// skip is of a value inside the structure that the first walk checked.
    func skip(at offset: Int) throws -> Int {
        let count = bytes.count
        guard offset >= 0 && offset < count else { throw corrupt(at: offset, [], "the payload ends early") }
        let tag = bytes[offset]
        guard tag == 0x08 || tag == 0x09 else {
            if let next = leafEnd(at: offset) { return next }
            throw leafError(at: offset)
        }
        var cursor = offset + 1
        // The open containers, innermost in bit 0: 1 for a keyed one. Every 64 levels, the word is pushed on
        // `outer`.
        var open: UInt64 = tag == 0x08 ? 1 : 0
        var depth = 1
        var outer: [UInt64] = []
        var steps = 0
        var lookedUp = false
        while true {
            // In the innermost container: the next entry (then its value), or the container's end.
            if open & 1 != 0 {
                guard let (keyCount, keyStart) = quickVarint(at: cursor), keyCount <= UInt64(count - keyStart + 1)
                else {
                    let (keyCount, keyStart) = try varintOrError(at: cursor, [])
                    _ = try end(keyStart, plus: keyCount - 1, [])
                    throw corrupt(at: cursor, [], "a damaged key")
                }
                if keyCount != 0 {
                    cursor = keyStart + Int(keyCount) - 1
                } else {
                    cursor = keyStart
                    open >>= 1
                    depth -= 1
                    if depth == 0 { break }
                    if depth & 63 == 0 { open = outer.removeLast() }
                    continue
                }
            } else {
                guard cursor < count else { throw corrupt(at: cursor, [], "the payload ends early") }
                if bytes[cursor] == 0xFF {
                    cursor += 1
                    open >>= 1
                    depth -= 1
                    if depth == 0 { break }
                    if depth & 63 == 0 { open = outer.removeLast() }
                    continue
                }
            }
            // A value at `cursor`.
            guard cursor < count else { throw corrupt(at: cursor, [], "the payload ends early") }
            steps += 1
            let tag = bytes[cursor]
            if tag == 0x08 || tag == 0x09 {
                if depth & 63 == 0 {
                    outer.append(open)
                    open = 0
                }
                open = open << 1 | (tag == 0x08 ? 1 : 0)
                depth += 1
                cursor += 1
            } else if let next = leafEnd(at: cursor) {
                cursor = next
            } else {
                throw leafError(at: cursor)
            }
            if !lookedUp && cursor - offset > Self.rememberedExtent {
                lookedUp = true
                if let end = ends[offset] {
                    skipSteps += steps
                    return end
                }
            }
        }
        skipSteps += steps
        return cursor
    }

    /// Walks the whole payload once, from its value at offset 1, and returns the offset after that value: the
    /// first read of ``BinaryDecoder/decode(_:from:options:counters:)``, which throws for any damage to the
    /// payload's structure, so that every later read is of a structure known to be whole.
    ///
    /// Iterative, with one frame per open container, at most ``maximumDepth`` of them: a deeper payload throws.
    /// Every key must be valid UTF-8 (as every string that `JSONDecoder` reads), so that no two keys that differ in
    /// the payload read as one. The walk also keeps the number of entries of each container of ``countedEntries``
    /// or more in `counts`, the entries' offsets of such a keyed container of containers in `entryOffsets`, the end
    /// of each container of more than ``rememberedExtent`` bytes in `ends`, and sets `repeatedKeys` if a keyed
    /// container repeats a key among its first ``scanLimit`` entries.
    func walk() throws -> Int {
        let count = bytes.count
        // Offsets are kept as `UInt32`: the encoder writes no payload of 4 GiB or more (see `BinaryValueEncoder`).
        guard count <= Int(UInt32.max) else {
            throw corrupt(at: 0, [], "a binary payload of 4 GiB or more, which the encoder never writes")
        }
        if bytes[1] != 0x08 && bytes[1] != 0x09 {
            if let next = leafEnd(at: 1) { return next }
            throw leafError(at: 1)
        }
        // The frames live on the stack (1 KiB): most payloads are small, and a heap allocation would be a good part
        // of the cost of decoding one.
        return try withUnsafeTemporaryAllocation(of: BinaryWalkFrame.self, capacity: Self.maximumDepth) { frames in
            var depth = 0
            // The entries' offsets of the innermost open keyed container of containers of ``countedEntries`` or more
            // entries, and its depth (0 for none); those of the outer ones.
            var recordingDepth = 0
            var recording: [UInt32] = []
            var outerRecordings: [(depth: Int, offsets: [UInt32])] = []
            var cursor = 1
            while true {
                // A value at `cursor`.
                guard cursor < count else { throw corrupt(at: cursor, [], "the payload ends early") }
                let tag = bytes[cursor]
                if tag == 0x08 || tag == 0x09 {
                    guard depth < Self.maximumDepth else {
                        throw corrupt(
                            at: cursor,
                            [],
                            "containers nested more than \(Self.maximumDepth) deep, the most the journal's encoding writes"
                        )
                    }
                    frames[depth] = BinaryWalkFrame(start: cursor, keyed: tag == 0x08)
                    depth += 1
                    cursor += 1
                } else if let next = leafEnd(at: cursor) {
                    cursor = next
                } else {
                    throw leafError(at: cursor)
                }
                // The next value: in the innermost open container, after the containers that end here.
                while depth > 0 {
                    let frame = frames.baseAddress! + depth - 1
                    let entries = Int(frame.pointee.entries)
                    if frame.pointee.keyed {
                        guard let (keyCount, keyStart) = quickVarint(at: cursor),
                            keyCount <= UInt64(count - keyStart + 1)
                        else {
                            let (keyCount, keyStart) = try varintOrError(at: cursor, [])
                            _ = try end(keyStart, plus: keyCount - 1, [])
                            throw corrupt(at: cursor, [], "a damaged key")
                        }
                        if keyCount != 0 {
                            let value = keyStart + Int(keyCount) - 1
                            if !isASCIIKey(keyStart, value) { try checkUTF8(keyStart, value) }
                            frame.pointee.entries += 1
                            if entries < Self.scanLimit {
                                if !repeatedKeys { try sign(frame, key: keyStart, value, entry: cursor) }
                            } else if entries >= Self.countedEntries {
                                // Kept for containers of containers: leaves are read without a skip, whose end
                                // their reading gives.
                                if entries == Self.countedEntries && value < count && bytes[value] >= 0x08 {
                                    if recordingDepth > 0 { outerRecordings.append((recordingDepth, recording)) }
                                    recording = try firstEntries(of: Int(frame.pointee.start))
                                    recordingDepth = depth
                                }
                                if recordingDepth == depth { recording.append(UInt32(cursor)) }
                            }
                            cursor = value
                            break
                        }
                        cursor = keyStart
                    } else {
                        guard cursor < count else { throw corrupt(at: cursor, [], "the payload ends early") }
                        if bytes[cursor] != 0xFF {
                            frame.pointee.entries += 1
                            break
                        }
                        cursor += 1
                    }
                    // The container ends: what later reads use of it.
                    let start = Int(frame.pointee.start)
                    if entries >= Self.countedEntries {
                        counts[start] = entries
                        if recordingDepth == depth {
                            entryOffsets[start] = recording
                            (recordingDepth, recording) = outerRecordings.popLast() ?? (0, [])
                        }
                    }
                    if cursor - start > Self.rememberedExtent { ends[start] = cursor }
                    depth -= 1
                }
                if depth == 0 { return cursor }
            }
        }
    }

    /// Notes the signature of the key at `keyStart..<keyEnd` of the entry at `entry` of the keyed container `frame`
    /// (one of its first ``scanLimit``), and sets `repeatedKeys` if an earlier entry has the same key.
    @inline(__always)
    private func sign(
        _ frame: UnsafeMutablePointer<BinaryWalkFrame>,
        key keyStart: Int,
        _ keyEnd: Int,
        entry: Int
    ) throws {
        let length = keyEnd - keyStart
        let first = length > 0 ? UInt64(bytes[keyStart]) : 0
        let last = length > 0 ? UInt64(bytes[keyEnd - 1]) : 0
        let signature: UInt64 = 1 << ((UInt64(length) &* 29 &+ first &* 7 &+ last) & 63)
        if frame.pointee.signatures & signature != 0,
            try repeats(keyStart, keyEnd, before: entry, from: Int(frame.pointee.start) + 1)
        {
            repeatedKeys = true
        }
        frame.pointee.signatures |= signature
    }

    /// Whether every byte of the key at `keyStart..<keyEnd` (in the payload) is below 0x80: a few loads for the
    /// short keys of most containers.
    @inline(__always)
    private func isASCIIKey(_ keyStart: Int, _ keyEnd: Int) -> Bool {
        var pointer = bytes.baseAddress! + keyStart
        var length = keyEnd - keyStart
        var high: UInt64 = 0
        while length >= 8 {
            high |= pointer.loadUnaligned(as: UInt64.self)
            pointer += 8
            length -= 8
        }
        if length >= 4 {
            high |= UInt64(pointer.loadUnaligned(as: UInt32.self))
            pointer += 4
            length -= 4
        }
        if length >= 2 {
            high |= UInt64(pointer.loadUnaligned(as: UInt16.self))
            pointer += 2
            length -= 2
        }
        if length == 1 { high |= UInt64(pointer.load(as: UInt8.self)) }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Throws unless the key at `keyStart..<keyEnd` is valid UTF-8.
    @inline(never)
    private func checkUTF8(_ keyStart: Int, _ keyEnd: Int) throws {
        if String(validating: UnsafeRawBufferPointer(rebasing: bytes[keyStart..<keyEnd]), as: UTF8.self) == nil {
            throw corrupt(at: keyStart, [], "a key is not valid UTF-8")
        }
    }

    /// The offsets of the first ``countedEntries`` entries of the keyed container whose tag is at `offset`, which has
    /// more.
    @inline(never)
    private func firstEntries(of offset: Int) throws -> [UInt32] {
        var offsets: [UInt32] = []
        offsets.reserveCapacity(4 * Self.countedEntries)
        var cursor = offset + 1
        for _ in 0..<Self.countedEntries {
            offsets.append(UInt32(cursor))
            let (keyCount, keyStart) = try varint(at: cursor, [])
            cursor = try skip(at: end(keyStart, plus: keyCount - 1, []))
        }
        return offsets
    }

    /// Whether an entry of the keyed container whose first entry is at `start`, before the entry at `entry`, has
    /// the key at `keyStart..<keyEnd`.
    @inline(never)
    private func repeats(_ keyStart: Int, _ keyEnd: Int, before entry: Int, from start: Int) throws -> Bool {
        var cursor = start
        while cursor < entry {
            let (keyCount, earlierStart) = try varint(at: cursor, [])
            let earlierEnd = try end(earlierStart, plus: keyCount - 1, [])
            if equal(earlierStart, earlierEnd, UnsafeRawBufferPointer(rebasing: bytes[keyStart..<keyEnd])) {
                return true
            }
            cursor = try skip(at: earlierEnd)
        }
        return false
    }

    /// The error for the damaged value at `offset`, which ``leafEnd(at:)`` could not skip.
    @inline(never)
    private func leafError(at offset: Int) -> any Error {
        do {
            let tag = try byte(at: offset, [])
            switch tag {
            case 0x03, 0x04: _ = try varint(at: offset + 1, [])
            case 0x05: _ = try end(offset + 1, plus: 4, [])
            case 0x06: _ = try end(offset + 1, plus: 8, [])
            case 0x07:
                let (count, start) = try varint(at: offset + 1, [])
                _ = try end(start, plus: count, [])
            default: return corrupt(at: offset, [], "unknown tag \(tag)")
            }
        } catch {
            return error
        }
        return corrupt(at: offset, [], "a damaged value")
    }

    /// The number of entries (or elements) of the keyed (or unkeyed) container whose tag is at `offset`; an error
    /// has an empty coding path, as in ``skip(at:)``.
    func count(at offset: Int) throws -> Int {
        let total = bytes.count
        guard offset >= 0 && offset < total else { throw corrupt(at: offset, [], "the payload ends early") }
        let keyed = bytes[offset] == 0x08
        var cursor = offset + 1
        var count = 0
        while true {
            if keyed {
                guard let (keyCount, keyStart) = quickVarint(at: cursor), keyCount <= UInt64(total - keyStart + 1)
                else {
                    _ = try skip(at: offset)  // throws the precise error
                    throw corrupt(at: cursor, [], "a damaged key")
                }
                if keyCount == 0 { return count }
                let value = keyStart + Int(keyCount) - 1
                if value < total, let next = leafEnd(at: value) {
                    cursor = next
                } else {
                    cursor = try skip(at: value)
                }
            } else {
                guard cursor < total else { throw corrupt(at: cursor, [], "the payload ends early") }
                if bytes[cursor] == 0xFF { return count }
                if let next = leafEnd(at: cursor) {
                    cursor = next
                } else {
                    cursor = try skip(at: cursor)
                }
            }
            count += 1
            // A large container: its count may be known (a hash, which most containers, being small, save).
            if count == Self.countedEntries, let recorded = counts[offset] { return recorded }
        }
    }

    /// `start + count`, if the payload holds that many bytes from `start`.
    @inline(__always)
    func end(_ start: Int, plus count: UInt64, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Int {
        guard count <= UInt64(bytes.count), start + Int(count) <= bytes.count else {
            throw corrupt(at: start, codingPath(), "the payload ends early")
        }
        return start + Int(count)
    }

    /// The integer at `offset` and the offset after it.
    // Always inlined: unspecialized, the conversion to `T` looks up generic metadata for every integer.
    @inline(__always)
    func integer<T: FixedWidthInteger>(
        _ type: T.Type,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> (T, Int) {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x03 || tag == 0x04 else { throw mismatch(type, tag: tag, at: offset, codingPath()) }
        let (raw, next) = try varint(at: offset + 1, codingPath())
        let result =
            tag == 0x03 ? T(exactly: Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))) : T(exactly: raw)
        guard let result else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath(), debugDescription: "the number does not fit in \(T.self)")
            )
        }
        return (result, next)
    }

    func mismatch(
        _ type: Any.Type,
        tag: UInt8,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) -> DecodingError {
        .typeMismatch(
            type,
            .init(codingPath: codingPath(), debugDescription: "found tag \(tag) at payload byte \(offset)")
        )
    }

    @inline(__always)
    func bool(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x01 || tag == 0x02 else { throw mismatch(Bool.self, tag: tag, at: offset, codingPath()) }
        return tag == 0x02
    }

    /// The `Double` at `offset` and the offset after it.
    func double(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Double, Int) {
        let tag = try byte(at: offset, codingPath())
        switch tag {
        case 0x06:
            let next = try end(offset + 1, plus: 8, codingPath())
            let bits = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self))
            return (Double(bitPattern: bits), next)
        case 0x05:
            let (float, next) = try self.float(at: offset, codingPath())
            return (Double(float), next)
        default:
            throw mismatch(Double.self, tag: tag, at: offset, codingPath())
        }
    }

    /// The `Float` at `offset` and the offset after it.
    func float(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (Float, Int) {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x05 else { throw mismatch(Float.self, tag: tag, at: offset, codingPath()) }
        let next = try end(offset + 1, plus: 4, codingPath())
        let bits = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self))
        return (Float(bitPattern: bits), next)
    }

    /// The string at `offset` and the offset after it.
    func string(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> (String, Int) {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x07 else { throw mismatch(String.self, tag: tag, at: offset, codingPath()) }
        let (count, start) = try varint(at: offset + 1, codingPath())
        let end = try end(start, plus: count, codingPath())
        let utf8 = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        // ASCII is valid UTF-8, and `String(decoding:)` of it is the fast path of the standard library (checked
        // eight bytes at a time); `String(validating:)` runs unspecialized here, with generic metadata lookups.
        if Self.isASCII(utf8) {
            return (String(decoding: utf8, as: UTF8.self), end)
        }
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw corrupt(at: start, codingPath(), "a string is not valid UTF-8")
        }
        return (string, end)
    }

    /// Whether every byte of `utf8` is below 0x80.
    @inline(__always)
    static func isASCII(_ utf8: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = utf8.count
        var high: UInt64 = 0
        while count - index >= 8 {
            high |= utf8.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            high |= UInt64(utf8[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}

// MARK: - Values without a Decoder

/// A value that the reader decodes from its tag and body, without a `Decoder` and its containers: the common leaf
/// types, alone and as the elements of arrays and the values of dictionaries.
private protocol BinaryLeaf {
    /// The value at `offset` and the offset after it.
    static func read(
        _ reader: BinaryReader,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> (Self, Int)
}

extension Int: BinaryLeaf {
    @inline(__always)
    fileprivate static func read(
        _ reader: BinaryReader,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> (Int, Int) {
        try reader.integer(Int.self, at: offset, codingPath())
    }
}

extension String: BinaryLeaf {
    @inline(__always)
    fileprivate static func read(
        _ reader: BinaryReader,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> (String, Int) {
        try reader.string(at: offset, codingPath())
    }
}

extension Double: BinaryLeaf {
    @inline(__always)
    fileprivate static func read(
        _ reader: BinaryReader,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> (Double, Int) {
        try reader.double(at: offset, codingPath())
    }
}

extension Bool: BinaryLeaf {
    @inline(__always)
    fileprivate static func read(
        _ reader: BinaryReader,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> (Bool, Int) {
        (try reader.bool(at: offset, codingPath()), offset + 1)
    }
}

/// The key type of a dictionary that the encoding writes as a keyed container: `String` or `Int`.
private protocol BinaryDictionaryKeyType: Hashable {
    /// The key at `keyStart..<keyEnd` (bounds checked), as `Dictionary.init(from:)` reads it from a
    /// `CodingKey`: a string, or a string that `Int(_:)` parses; `codingPath` is the dictionary's.
    static func key(
        _ reader: BinaryReader,
        _ keyStart: Int,
        _ keyEnd: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> Self
}

extension String: BinaryDictionaryKeyType {
    @inline(__always)
    fileprivate static func key(
        _ reader: BinaryReader,
        _ keyStart: Int,
        _ keyEnd: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> String {
        reader.key(keyStart, keyEnd)
    }
}

extension Int: BinaryDictionaryKeyType {
    @inline(__always)
    fileprivate static func key(
        _ reader: BinaryReader,
        _ keyStart: Int,
        _ keyEnd: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> Int {
        guard let number = reader.intKey(keyStart, keyEnd) else {
            throw DecodingError.typeMismatch(
                Int.self,
                .init(
                    codingPath: codingPath() + [BinaryDictionaryKey(stringValue: reader.key(keyStart, keyEnd))],
                    debugDescription: "Expected Int key but found String key instead."
                )
            )
        }
        return number
    }
}

extension BinaryReader {
    /// Decodes the value at `offset`: the common leaf types and arrays of them without a `Decoder` (and its coding
    /// path), a dictionary with `String` or `Int` keys straight from its keyed container, anything else through its
    /// `init(from:)`.
    ///
    /// Always inlined: where `T` is known, the type checks fold away; where it is not (a `Decodable`'s property,
    /// decoded through a container), they are comparisons of metadata pointers.
    @inline(__always)
    func decode<T: Decodable>(_ type: T.Type, at offset: Int, _ path: @autoclosure () -> BinaryPathNode) throws -> T {
        if T.self == Int.self { return unsafeBitCast(try leaf(Int.self, at: offset, path().keys(self)), to: T.self) }
        if T.self == String.self {
            return unsafeBitCast(try leaf(String.self, at: offset, path().keys(self)), to: T.self)
        }
        if T.self == Double.self {
            return unsafeBitCast(try leaf(Double.self, at: offset, path().keys(self)), to: T.self)
        }
        if T.self == Bool.self { return unsafeBitCast(try leaf(Bool.self, at: offset, path().keys(self)), to: T.self) }
        if T.self == [Int].self { return unsafeBitCast(try array(Int.self, at: offset, path().keys(self)), to: T.self) }
        if T.self == [String].self {
            return unsafeBitCast(try array(String.self, at: offset, path().keys(self)), to: T.self)
        }
        if T.self == [Double].self {
            return unsafeBitCast(try array(Double.self, at: offset, path().keys(self)), to: T.self)
        }
        return try composite(type, at: offset, path())
    }

    /// ``decode(_:at:_:)`` for a path that the caller holds (a dictionary's entries, an unkeyed container's
    /// elements): passed without a closure, which would return it retained.
    @inline(__always)
    func decode<T: Decodable>(_ type: T.Type, at offset: Int, in path: BinaryPathNode) throws -> T {
        if T.self == Int.self { return unsafeBitCast(try leaf(Int.self, at: offset, path.keys(self)), to: T.self) }
        if T.self == String.self {
            return unsafeBitCast(try leaf(String.self, at: offset, path.keys(self)), to: T.self)
        }
        if T.self == Double.self {
            return unsafeBitCast(try leaf(Double.self, at: offset, path.keys(self)), to: T.self)
        }
        if T.self == Bool.self { return unsafeBitCast(try leaf(Bool.self, at: offset, path.keys(self)), to: T.self) }
        if T.self == [Int].self { return unsafeBitCast(try array(Int.self, at: offset, path.keys(self)), to: T.self) }
        if T.self == [String].self {
            return unsafeBitCast(try array(String.self, at: offset, path.keys(self)), to: T.self)
        }
        if T.self == [Double].self {
            return unsafeBitCast(try array(Double.self, at: offset, path.keys(self)), to: T.self)
        }
        return try composite(type, at: offset, path)
    }

    /// The leaf value at `offset`, its end noted (see ``decoded(_:_:)``).
    @inline(__always)
    func leaf<Value: BinaryLeaf>(
        _ type: Value.Type,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> Value {
        let (value, end) = try Value.read(self, at: offset, codingPath())
        decoded(offset, end)
        return value
    }

    /// Decodes a value that is not a leaf: a dictionary read entry after entry, or anything through `init(from:)`.
    func composite<T: Decodable>(_ type: T.Type, at offset: Int, _ path: BinaryPathNode) throws -> T {
        // A small payload skips the check for a dictionary (a conformance lookup): its dictionaries are small, and
        // their lookups scan a few entries.
        if bytes.count >= Self.largePayload, offset < bytes.count, bytes[offset] == 0x08,
            ObjectIdentifier(T.self) != notDictionary
        {
            if let dictionary = T.self as? any BinaryKeyedDictionary.Type {
                if let value = try dictionary.decodeEntries(self, at: offset, path) {
                    return value as! T
                }
            } else {
                notDictionary = ObjectIdentifier(T.self)
            }
        }
        return try T(from: BinaryValueDecoder(reader: self, offset: offset, path: path))
    }

    /// The array of leaves in the unkeyed container at `offset`, allocated once.
    func array<Element: BinaryLeaf>(
        _ type: Element.Type,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> [Element] {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x09 else { throw mismatch([Any].self, tag: tag, at: offset, codingPath()) }
        // A few elements are read into a buffer on the stack first, which gives a short array's count without a
        // walk of its own.
        let few = 8
        let (short, end) = try withUnsafeTemporaryAllocation(of: Element.self, capacity: few) {
            (buffer: UnsafeMutableBufferPointer<Element>) throws -> ([Element]?, Int) in
            var read = 0
            defer { buffer.baseAddress!.deinitialize(count: read) }
            var cursor = offset + 1
            while read < few {
                guard cursor < bytes.count else { throw corrupt(at: cursor, codingPath(), "the payload ends early") }
                if bytes[cursor] == 0xFF {
                    return (Array(UnsafeBufferPointer(rebasing: buffer[0..<read])), cursor + 1)
                }
                let (element, next) = try Element.read(self, at: cursor, codingPath())
                (buffer.baseAddress! + read).initialize(to: element)
                read += 1
                cursor = next
            }
            return (nil, cursor)
        }
        if let short {
            decoded(offset, end)
            return short
        }
        let count = try count(at: offset)
        // Not `init(unsafeUninitializedCapacity:)`, which allocates through unspecialized code (a metadata lookup).
        var elements: [Element] = []
        elements.reserveCapacity(count)
        var cursor = offset + 1
        for _ in 0..<count {
            let (element, next) = try Element.read(self, at: cursor, codingPath())
            elements.append(element)
            cursor = next
        }
        decoded(offset, cursor + 1)
        return elements
    }

    /// The dictionary of leaves in the keyed container at `offset`: specialized code for each key and value type,
    /// with the same result as `Dictionary.init(from:)` (see ``BinaryKeyedDictionary``).
    func leafDictionary<Key: BinaryDictionaryKeyType, Value: BinaryLeaf>(
        _ key: Key.Type,
        _ value: Value.Type,
        at offset: Int,
        _ path: BinaryPathNode
    ) throws -> [Key: Value] {
        var result = [Key: Value](minimumCapacity: try count(at: offset))
        var cursor = offset + 1
        while true {
            let (keyCount, keyStart) = try varint(at: cursor, path.keys(self))
            if keyCount == 0 { return result }
            let keyEnd = try end(keyStart, plus: keyCount - 1, path.keys(self))
            let key = try Key.key(self, keyStart, keyEnd, path.keys(self))
            let value: Value
            do {
                (value, cursor) = try Value.read(
                    self,
                    at: keyEnd,
                    path.keys(self) + [BinaryDictionaryKey(stringValue: self.key(keyStart, keyEnd))]
                )
            } catch {
                // The value of a repeated key is never read by `init(from:)`: one that does not decode is skipped.
                if result.index(forKey: key) == nil { throw error }
                cursor = try skip(at: keyEnd)
                continue
            }
            // One hash per entry: the value is inserted, and the first one put back if the key had one already.
            if let first = result.updateValue(value, forKey: key) {
                result[key] = first
            }
        }
    }
}

/// A dictionary whose keys are `String`s or `Int`s, which `Dictionary.init(from:)` reads from a keyed container:
/// `allKeys`, then a lookup for each key. Read here instead, entry after entry, in one pass over the container, with
/// the same result: a key written twice has its first value (the value after it is not read), an `Int` key is
/// parsed as `Int(_:)` parses it, and a key that does not parse is a type mismatch.
private protocol BinaryKeyedDictionary {
    /// The dictionary in the keyed container at `offset`, `nil` to let `init(from:)` read the value (its keys are
    /// neither `String`s nor `Int`s, or the value is not a keyed container).
    static func decodeEntries(_ reader: BinaryReader, at offset: Int, _ path: BinaryPathNode) throws -> Self?
}

/// A key of a dictionary read by ``BinaryKeyedDictionary``, for coding paths.
private struct BinaryDictionaryKey: CodingKey {
    var stringValue: String
    var intValue: Int? { Int(stringValue) }

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        stringValue = String(intValue)
    }
}

extension Dictionary: BinaryKeyedDictionary where Key: Decodable, Value: Decodable {
    fileprivate static func decodeEntries(
        _ reader: BinaryReader,
        at offset: Int,
        _ path: BinaryPathNode
    ) throws -> Self? {
        guard Key.self == String.self || Key.self == Int.self, try reader.byte(at: offset, path.keys(reader)) == 0x08
        else {
            return nil
        }
        // Leaf values: code specialized for the key and value types. Unspecialized, each insertion of a generic
        // dictionary looks up the dictionary's generic metadata (a lock and a hash in the runtime on Linux).
        if Key.self == String.self {
            if let result = try leaves(String.self, reader, at: offset, path) { return result }
        } else {
            if let result = try leaves(Int.self, reader, at: offset, path) { return result }
        }
        let offsets = reader.entryOffsets[offset]
        let count = try offsets?.count ?? reader.count(at: offset)
        let options = reader.options
        if let offsets, options.concurrently, count >= Swift.max(2, options.concurrentEntries),
            let concurrent = BinaryConcurrentEntries<Key, Value>(reader, offsets: offsets, path)
        {
            if let result = concurrent.build() { return result }
            // A value did not decode: decoded again on this thread, entry after entry (below).
            return try oneByOne(reader, at: offset, path)
        }
        // Built in one call of `init(_:uniquingKeysWith:)`, which takes the entries from a sequence that decodes
        // them one at a time: an unspecialized insertion by `updateValue` looks up the dictionary's generic
        // metadata (twice) for every entry, the initializer once. A repeated key has its first value.
        let entries = BinaryEntries<Key, Value>(
            reader: reader,
            outcome: BinaryPathNode(entriesOf: path),
            cursor: offsets == nil ? offset + 1 : 0,
            count: count,
            offsets: offsets
        )
        let result = Self(entries, uniquingKeysWith: { first, _ in first })
        if entries.outcome.error == nil { return result }
        // A value did not decode: decoded again, entry after entry, where the value of a repeated key is not read
        // (as `init(from:)` never reads it); this throws the error unless it was such a value.
        return try oneByOne(reader, at: offset, path)
    }

    /// Decodes the `count` entries from entry `first` of the keyed container whose entries are at `offsets` into
    /// `buffer`, with `entry` as their path (replaced by a sibling after a value that kept it). Throws the first
    /// error, with nothing left in `buffer`.
    fileprivate static func decodeEntries(
        _ reader: BinaryReader,
        entry: inout BinaryPathNode,
        offsets: [UInt32],
        first: Int,
        count: Int,
        into buffer: UnsafeMutablePointer<(Key, Value)>
    ) throws {
        var decoded = 0
        do {
            while decoded < count {
                let at = Int(offsets[first + decoded])
                let (keyCount, keyStart) = try reader.varint(at: at, entry.parent!.keys(reader))
                let keyEnd = try reader.end(keyStart, plus: keyCount &- 1, entry.parent!.keys(reader))
                let key: Key = try reader.dictionaryKey(keyStart, keyEnd, entry.parent!.keys(reader))
                entry.keyStart = keyStart
                entry.keyEnd = keyEnd
                let value = try reader.decode(Value.self, at: keyEnd, in: entry)
                if !isKnownUniquelyReferenced(&entry) { entry = entry.sibling() }
                (buffer + decoded).initialize(to: (key, value))
                decoded += 1
            }
        } catch {
            buffer.deinitialize(count: decoded)
            throw error
        }
    }

    /// The dictionary in the keyed container at `offset` (whose keys are `String`s or `Int`s), inserted entry after
    /// entry, with the value of a repeated key not read.
    private static func oneByOne(_ reader: BinaryReader, at offset: Int, _ path: BinaryPathNode) throws -> Self {
        var result = Self(minimumCapacity: try reader.count(at: offset))
        // Each value's coding path is the dictionary's and the entry's key, made only if something asks for it.
        var entry = BinaryPathNode(entriesOf: path)
        var cursor = offset + 1
        while true {
            let (keyCount, keyStart) = try reader.varint(at: cursor, path.keys(reader))
            if keyCount == 0 { return result }
            let keyEnd = try reader.end(keyStart, plus: keyCount - 1, path.keys(reader))
            cursor = try reader.skip(at: keyEnd)
            let key: Key = try reader.dictionaryKey(keyStart, keyEnd, path.keys(reader))
            entry.keyStart = keyStart
            entry.keyEnd = keyEnd
            // One hash per entry: the value is inserted, and the first one put back if the key had one already.
            // The value of a repeated key that does not decode is skipped, as `init(from:)` never reads it.
            let value: Value?
            do {
                value = try reader.decode(Value.self, at: keyEnd, in: entry)
            } catch {
                guard result.index(forKey: key) != nil else { throw error }
                value = nil
            }
            // A value that kept its decoder keeps its key in the path: the next entries have a node of their own.
            if !isKnownUniquelyReferenced(&entry) { entry = entry.sibling() }
            if let value, let first = result.updateValue(value, forKey: key) {
                result[key] = first
            }
        }
    }

    /// The dictionary read by ``BinaryReader/leafDictionary(_:_:at:_:)`` if `Value` is a leaf type; `nil`
    /// otherwise. `Key` is `DictionaryKey`.
    @inline(__always)
    private static func leaves<DictionaryKey: BinaryDictionaryKeyType>(
        _ key: DictionaryKey.Type,
        _ reader: BinaryReader,
        at offset: Int,
        _ path: BinaryPathNode
    ) throws -> Self? {
        if Value.self == Int.self {
            return unsafeBitCast(try reader.leafDictionary(key, Int.self, at: offset, path), to: Self.self)
        }
        if Value.self == String.self {
            return unsafeBitCast(try reader.leafDictionary(key, String.self, at: offset, path), to: Self.self)
        }
        if Value.self == Double.self {
            return unsafeBitCast(try reader.leafDictionary(key, Double.self, at: offset, path), to: Self.self)
        }
        if Value.self == Bool.self {
            return unsafeBitCast(try reader.leafDictionary(key, Bool.self, at: offset, path), to: Self.self)
        }
        return nil
    }
}

extension BinaryReader {
    /// The key at `keyStart..<keyEnd` of a dictionary whose keys are `String`s or `Int`s.
    @inline(__always)
    func dictionaryKey<Key>(
        _ keyStart: Int,
        _ keyEnd: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> Key {
        if Key.self == String.self {
            return unsafeBitCast(try String.key(self, keyStart, keyEnd, codingPath()), to: Key.self)
        }
        return unsafeBitCast(try Int.key(self, keyStart, keyEnd, codingPath()), to: Key.self)
    }
}

/// The entries of a keyed container read as a dictionary whose keys are `String`s or `Int`s, each decoded when
/// `Dictionary.init(_:uniquingKeysWith:)` asks for it. An error ends the sequence and is kept in `outcome.error`.
private struct BinaryEntries<Key: Hashable, Value: Decodable>: Sequence, IteratorProtocol {
    let reader: BinaryReader
    /// A node of the entries, which keeps the error that ended the sequence.
    let outcome: BinaryPathNode
    /// The node of the entry being decoded, for the values' coding paths, made by the iterator (so that it alone
    /// holds it): replaced after a value that kept it, which keeps its key.
    var entry: BinaryPathNode?
    /// The offset of the next entry.
    var cursor: Int
    let count: Int
    /// The offset of every entry, if the first walk kept them; `cursor` is then the index of the next one.
    let offsets: [UInt32]?

    var underestimatedCount: Int { count }

    init(reader: BinaryReader, outcome: BinaryPathNode, cursor: Int, count: Int, offsets: [UInt32]?) {
        self.reader = reader
        self.outcome = outcome
        self.cursor = cursor
        self.count = count
        self.offsets = offsets
    }

    mutating func next() -> (Key, Value)? {
        guard outcome.error == nil else { return nil }
        do {
            var at = cursor
            if let offsets {
                guard cursor < offsets.count else { return nil }
                at = Int(offsets[cursor])
            }
            let (keyCount, keyStart) = try reader.varint(at: at, outcome.parent!.keys(reader))
            if keyCount == 0 { return nil }
            let keyEnd = try reader.end(keyStart, plus: keyCount - 1, outcome.parent!.keys(reader))
            let next = offsets == nil ? try reader.skip(at: keyEnd) : cursor + 1
            let key: Key = try reader.dictionaryKey(keyStart, keyEnd, outcome.parent!.keys(reader))
            var node = entry ?? outcome.sibling()
            entry = nil
            node.keyStart = keyStart
            node.keyEnd = keyEnd
            let value = try reader.decode(Value.self, at: keyEnd, in: node)
            if isKnownUniquelyReferenced(&node) { entry = node }
            cursor = next
            return (key, value)
        } catch {
            outcome.error = error
            return nil
        }
    }
}

/// The entries in a buffer, moved out one at a time: a sequence of whole elements, which ``Dictionary/merge(_:uniquingKeysWith:)``
/// takes without looking up the metadata of a tuple of a generic key and value for each.
private struct BinaryMovedEntries<Element>: Sequence, IteratorProtocol {
    let base: UnsafeMutablePointer<Element>
    let count: Int
    var index = 0

    init(_ base: UnsafeMutablePointer<Element>, count: Int) {
        self.base = base
        self.count = count
    }

    var underestimatedCount: Int { count - index }

    mutating func next() -> Element? {
        guard index < count else { return nil }
        index += 1
        return (base + index - 1).move()
    }
}

/// The work of a helper thread of ``BinaryConcurrentEntries``.
private protocol BinaryHelper: Sendable {
    func help()
}

/// A large dictionary of containers decoded on several threads (see ``BinaryDecodingOptions/concurrently``): its
/// entries in chunks of ``BinaryDecodingOptions/chunkEntries``, claimed in the written order by the caller's thread
/// and by helper threads, each decoded into a buffer of its own with a reader of its own (the payload and what the
/// first walk found are shared, read only), and inserted by the caller's thread in the written order.
///
/// The caller never waits for a chunk that no thread has claimed: it decodes the next unclaimed chunk itself, so a
/// helper that the system does not run only makes the decoding serial. A helper that starts after the caller is done
/// finds no chunk to claim and touches nothing else. A chunk that does not decode stops the claims; the caller waits
/// for the claimed chunks, frees them, and returns `nil`, and the dictionary is then decoded again on its thread,
/// entry after entry, which throws the first error in the written order.
///
/// A helper's values may keep their decoders (see ``BinaryPathNode``): a helper's state is owned by a node of its own,
/// and a helper takes a copy of the payload, before it publishes a chunk, if a value of the chunk kept one. A helper
/// holds the dictionary's path only while it decodes a chunk, so that the caller's decoding finds its root held by
/// nothing but kept decoders at its end.
///
/// `@unchecked Sendable`: everything that the threads share and change (the claims, the chunks' outcomes, the
/// counts, `path`) is read and written with `lock` held; a chunk's buffer is written only by the thread that claimed
/// it, before it publishes the chunk under the lock, and read by the caller after it took the chunk under the lock.
private final class BinaryConcurrentEntries<Key: Hashable & Decodable, Value: Decodable>: BinaryHelper,
    @unchecked Sendable
{
    let lock = Lock()
    let chunkEntries: Int
    let chunks: Int
    let offsets: [UInt32]
    /// What a helper's reader starts from, copied on the caller's thread.
    let helperState: BinaryReaderState
    let helpers: Int
    let callerDecodes: Bool
    /// The caller's reader: used by the caller's thread only.
    let reader: BinaryReader

    // Guarded by `lock`.
    /// The dictionary's path, the parent of its entries' paths, until the caller is done.
    @exclusivity(unchecked) var path: BinaryPathNode?
    /// The next chunk to claim.
    @exclusivity(unchecked) var nextChunk = 0
    /// Each chunk's entries once a thread decoded them (`decoded[chunk]` of them), `nil` before, after the caller
    /// took them, or if they did not decode; `finished[chunk]` once the thread that claimed it is done with it.
    @exclusivity(unchecked) var buffers: [UnsafeMutablePointer<(Key, Value)>?]
    @exclusivity(unchecked) var decoded: [Int]
    @exclusivity(unchecked) var finished: [Bool]
    /// Whether a helper's chunk did not decode.
    @exclusivity(unchecked) var stopped = false
    /// The number of chunks claimed by helpers and not yet finished.
    @exclusivity(unchecked) var inFlight = 0
    /// Whether the caller waits for a helper to finish a chunk.
    @exclusivity(unchecked) var callerWaits = false
    /// The helpers' key comparisons and chunks, for the counts of ``BinaryDecoder/decode(_:from:options:keyComparisons:helperChunks:)``.
    @exclusivity(unchecked) var helperComparisons = 0
    @exclusivity(unchecked) var helperChunks = 0

    /// `nil` if the dictionary is to be decoded on the caller's thread alone (one processor, or a single chunk).
    init?(_ reader: BinaryReader, offsets: [UInt32], _ path: BinaryPathNode) {
        let options = reader.options
        chunkEntries = Swift.max(1, options.chunkEntries)
        chunks = (offsets.count + chunkEntries - 1) / chunkEntries
        let processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        helpers = Swift.min(options.helpers ?? Swift.min(7, processors - 1), chunks - (options.callerDecodes ? 1 : 0))
        guard helpers > 0 else { return nil }
        self.offsets = offsets
        self.path = path
        self.reader = reader
        callerDecodes = options.callerDecodes
        helperState = BinaryReaderState(helping: reader.state.pointee)
        buffers = Array(repeating: nil, count: chunks)
        decoded = Array(repeating: 0, count: chunks)
        finished = Array(repeating: false, count: chunks)
    }

    /// The dictionary; `nil` if a value did not decode.
    func build() -> [Key: Value]? {
        var started = 0
        // Through a protocol: the closure that a thread runs captures no metatype of `Key` or `Value`.
        let helper: any BinaryHelper = self
        for _ in 0..<helpers where tryStartThread({ helper.help() }) {
            started += 1
        }
        // Without helpers, the caller claims every chunk: the tests' `callerDecodes == false` needs a helper.
        let callerDecodes = self.callerDecodes || started == 0
        var result = [Key: Value](minimumCapacity: offsets.count)
        lock.lock()
        var entry = BinaryPathNode(entriesOf: path!)
        lock.unlock()
        var failed = false
        // The next chunk to insert. While it is not decoded, the caller decodes the next unclaimed chunk, if any,
        // rather than wait.
        var next = 0
        lock.lock()
        while next < chunks {
            if stopped {
                failed = true
                break
            } else if finished[next] {
                let buffer = buffers[next]
                let count = decoded[next]
                buffers[next] = nil
                lock.unlock()
                guard let buffer else {
                    failed = true
                    lock.lock()
                    break
                }
                result.merge(BinaryMovedEntries(buffer, count: count), uniquingKeysWith: { first, _ in first })
                buffer.deallocate()
                next += 1
                lock.lock()
            } else if callerDecodes && nextChunk < chunks {
                let chunk = nextChunk
                nextChunk += 1
                lock.unlock()
                let outcome = decode(chunk, with: reader, entry: &entry)
                lock.lock()
                finish(chunk, outcome)
                if outcome == nil {
                    failed = true
                    break
                }
            } else {
                callerWaits = true
                lock.wait()
                callerWaits = false
            }
        }
        // No more claims; the chunks that helpers claimed are waited for (they read the payload), then freed.
        nextChunk = chunks
        path = nil
        while inFlight > 0 {
            callerWaits = true
            lock.wait()
        }
        callerWaits = false
        for chunk in 0..<chunks {
            if let buffer = buffers[chunk] {
                buffer.deinitialize(count: decoded[chunk])
                buffer.deallocate()
                buffers[chunk] = nil
            }
        }
        reader.keyComparisons += helperComparisons
        reader.helperChunks += helperChunks
        lock.unlock()
        return failed ? nil : result
    }

    /// The entries of `chunk` in a new buffer, and their count; `nil` if a value does not decode.
    private func decode(
        _ chunk: Int,
        with reader: BinaryReader,
        entry: inout BinaryPathNode
    ) -> (UnsafeMutablePointer<(Key, Value)>, Int)? {
        let first = chunk * chunkEntries
        let count = Swift.min(chunkEntries, offsets.count - first)
        let buffer = UnsafeMutablePointer<(Key, Value)>.allocate(capacity: count)
        do {
            try [Key: Value].decodeEntries(
                reader,
                entry: &entry,
                offsets: offsets,
                first: first,
                count: count,
                into: buffer
            )
            return (buffer, count)
        } catch {
            buffer.deallocate()
            return nil
        }
    }

    /// Publishes the outcome of `chunk`; with `lock` held.
    private func finish(_ chunk: Int, _ outcome: (UnsafeMutablePointer<(Key, Value)>, Int)?) {
        buffers[chunk] = outcome?.0
        decoded[chunk] = outcome?.1 ?? 0
        finished[chunk] = true
    }

    /// A helper thread: claims and decodes chunks until none is left.
    func help() {
        let state = UnsafeMutablePointer<BinaryReaderState>.allocate(capacity: 1)
        state.initialize(to: helperState)
        // Frees the state once neither this thread nor a decoder that a value kept holds an entry of it.
        var keeper = BinaryPathNode(owning: state)
        let reader = BinaryReader(state: state)
        while true {
            lock.lock()
            var path = self.path
            guard nextChunk < chunks, path != nil else {
                lock.unlock()
                return
            }
            let chunk = nextChunk
            nextChunk += 1
            inFlight += 1
            lock.unlock()
            let comparisons = reader.keyComparisons
            let outcome: (UnsafeMutablePointer<(Key, Value)>, Int)?
            do {
                var entry = BinaryPathNode(entriesOf: path!, keeper: keeper)
                outcome = decode(chunk, with: reader, entry: &entry)
            }
            path = nil
            // Only the nodes that a value kept hold the keeper now; they may read the payload after the caller's
            // decoding, which waits for this chunk, so the copy is taken before the chunk is published.
            if !isKnownUniquelyReferenced(&keeper) { reader.ownBytes() }
            lock.lock()
            finish(chunk, outcome)
            if outcome == nil {
                // The caller decodes the dictionary again: no more claims.
                stopped = true
                nextChunk = chunks
            }
            inFlight -= 1
            helperComparisons += reader.keyComparisons - comparisons
            helperChunks += 1
            if callerWaits { lock.broadcast() }
            lock.unlock()
        }
    }
}

/// The keys of one keyed container: a lookup first tries the entry after the one found last, since a `Decodable`
/// that reads every entry, such as a dictionary, asks for them in the order of `allKeys`, which is the written
/// order; any other lookup hashes the key once and compares it with the keys of the same hash.
private final class KeyIndex {
    /// For each entry in written order, the offset of its key's first byte, and the offset after the key (where its
    /// value starts).
    let keyStarts: [Int]
    let keyEnds: [Int]
    /// Each entry's key's hash.
    private let hashes: [Int]
    /// Whether each entry's key is also the key of an earlier entry: a lookup finds the earlier one.
    private let repeated: [Bool]
    /// Open addressing, linear probing: 0 for an empty slot, or 1 + the entry whose key hashes there; a key written
    /// more than once has its first entry only.
    private let slots: [UInt32]
    /// The entry that the next lookup tries first.
    @exclusivity(unchecked) private var next = 0

    /// Walks the entries of the keyed container whose first entry is at `start`.
    init(_ reader: BinaryReader, start: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws {
        var keyStarts: [Int] = []
        var keyEnds: [Int] = []
        var cursor = start
        while true {
            let (keyCount, keyStart) = try reader.varint(at: cursor, codingPath())
            if keyCount == 0 { break }
            let keyEnd = try reader.end(keyStart, plus: keyCount - 1, codingPath())
            keyStarts.append(keyStart)
            keyEnds.append(keyEnd)
            cursor = try reader.skip(at: keyEnd)
        }
        // An entry takes at least two bytes, so a payload that fits in memory has fewer than `UInt32.max` of them.
        var capacity = 16
        while capacity < 2 * keyStarts.count { capacity *= 2 }
        let mask = capacity - 1
        var hashes = [Int](repeating: 0, count: keyStarts.count)
        var repeated = [Bool](repeating: false, count: keyStarts.count)
        var slots = [UInt32](repeating: 0, count: capacity)
        for entry in keyStarts.indices {
            let key = UnsafeRawBufferPointer(rebasing: reader.bytes[keyStarts[entry]..<keyEnds[entry]])
            let hash = Self.hash(key)
            hashes[entry] = hash
            var slot = hash & mask
            while slots[slot] != 0 {
                let other = Int(slots[slot]) - 1
                if hashes[other] == hash {
                    reader.keyComparisons += 1
                    if reader.equal(keyStarts[other], keyEnds[other], key) {
                        repeated[entry] = true
                        break
                    }
                }
                slot = (slot + 1) & mask
            }
            if !repeated[entry] { slots[slot] = UInt32(entry + 1) }
        }
        self.keyStarts = keyStarts
        self.keyEnds = keyEnds
        self.hashes = hashes
        self.repeated = repeated
        self.slots = slots
    }

    @inline(__always)
    static func hash(_ key: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: key)
        return hasher.finalize()
    }

    /// The offset of the value for the key whose UTF-8 is `wanted`, `nil` if the container has none.
    func find(_ wanted: UnsafeRawBufferPointer, in reader: BinaryReader) -> Int? {
        let expected = next
        if expected < keyStarts.count && !repeated[expected] {
            reader.keyComparisons += 1
            if reader.equal(keyStarts[expected], keyEnds[expected], wanted) {
                next = expected + 1
                return keyEnds[expected]
            }
        }
        let hash = Self.hash(wanted)
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != 0 {
            let entry = Int(slots[slot]) - 1
            if hashes[entry] == hash {
                reader.keyComparisons += 1
                if reader.equal(keyStarts[entry], keyEnds[entry], wanted) {
                    next = entry + 1
                    return keyEnds[entry]
                }
            }
            slot = (slot + 1) & mask
        }
        return nil
    }
}

// MARK: - The Decoder and its containers

/// The `Decoder` of one value.
///
/// Three words, so that the `any Decoder` that `init(from:)` receives holds it inline instead of in a heap box. The
/// decoder and its containers hold their path, which keeps the reader's state (see ``BinaryPathNode``): a
/// `Decodable` may keep them.
private struct BinaryValueDecoder: Decoder {
    let reader: BinaryReader
    let offset: Int
    let path: BinaryPathNode
    var codingPath: [any CodingKey] { path.keys(reader) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let tag = try reader.byte(at: offset, codingPath)
        guard tag == 0x08 else {
            throw reader.mismatch([String: Any].self, tag: tag, at: offset, codingPath)
        }
        return KeyedDecodingContainer(BinaryKeyedDecoder<Key>(reader: reader, start: offset + 1, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let tag = try reader.byte(at: offset, codingPath)
        guard tag == 0x09 else {
            throw reader.mismatch([Any].self, tag: tag, at: offset, codingPath)
        }
        return BinaryUnkeyedDecoder(reader: reader, cursor: offset + 1, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecoder(reader: reader, offset: offset, path: path)
    }
}

extension BinaryReader {
    /// The nested keyed container at `offset`.
    func keyedContainer<Key: CodingKey>(
        keyedBy type: Key.Type,
        at offset: Int,
        _ path: BinaryPathNode
    ) throws -> KeyedDecodingContainer<Key> {
        let tag = try byte(at: offset, path.keys(self))
        guard tag == 0x08 else { throw mismatch([String: Any].self, tag: tag, at: offset, path.keys(self)) }
        return KeyedDecodingContainer(BinaryKeyedDecoder<Key>(reader: self, start: offset + 1, path: path))
    }

    /// The nested unkeyed container at `offset`.
    func unkeyedContainer(at offset: Int, _ path: BinaryPathNode) throws -> any UnkeyedDecodingContainer {
        let tag = try byte(at: offset, path.keys(self))
        guard tag == 0x09 else { throw mismatch([Any].self, tag: tag, at: offset, path.keys(self)) }
        return BinaryUnkeyedDecoder(reader: self, cursor: offset + 1, path: path)
    }
}

private struct BinaryKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: BinaryReader
    /// The offset of the first entry.
    let start: Int
    let path: BinaryPathNode
    var codingPath: [any CodingKey] { path.keys(reader) }

    var allKeys: [Key] {
        var keys: [Key] = []
        // A large container is indexed here: a `Decodable` that asks for every key, such as a dictionary, then
        // looks each one up.
        if let index = reader.indexInUse(start, depth: path.depth) ?? largeContainerIndex() {
            keys.reserveCapacity(index.keyStarts.count)
            for entry in index.keyStarts.indices {
                if let key = Key(stringValue: reader.key(index.keyStarts[entry], index.keyEnds[entry])) {
                    keys.append(key)
                }
            }
            return keys
        }
        var cursor = start
        while let (keyCount, keyStart) = try? reader.varint(at: cursor, codingPath), keyCount != 0,
            let keyEnd = try? reader.end(keyStart, plus: keyCount - 1, codingPath)
        {
            if let key = Key(stringValue: reader.key(keyStart, keyEnd)) { keys.append(key) }
            guard let next = try? reader.skip(at: keyEnd) else { break }
            cursor = next
        }
        return keys
    }

    /// The container's index, if a lookup would use one: if it has more entries or bytes than a scan passes.
    private func largeContainerIndex() -> KeyIndex? {
        var cursor = start
        var passed = 0
        while let (keyCount, keyStart) = try? reader.varint(at: cursor, codingPath), keyCount != 0,
            let keyEnd = try? reader.end(keyStart, plus: keyCount - 1, codingPath),
            let next = try? reader.skip(at: keyEnd)
        {
            cursor = next
            passed += 1
            if passed == BinaryReader.scanLimit || cursor - start > BinaryReader.scanBytes {
                return (try? reader.byte(at: cursor, codingPath)) == 0x00
                    ? nil : try? reader.index(start, depth: path.depth, codingPath)
            }
        }
        return nil
    }

    /// The offset of the value for `key`, `nil` if the container has none.
    func find(_ key: Key) throws -> Int? {
        var name = key.stringValue
        let reader = reader
        let start = start
        let depth = path.depth
        return try name.withUTF8 { utf8 throws -> Int? in
            let wanted = UnsafeRawBufferPointer(utf8)
            if let offset = reader.findNext(wanted, in: start, depth: depth) { return offset }
            // Its errors are damage to the payload's structure, which the first walk reports (with no coding path).
            return try reader.find(wanted, in: start, depth: depth, [])
        }
    }

    func value(_ key: Key) throws -> Int {
        guard let offset = try find(key) else {
            throw DecodingError.keyNotFound(
                key,
                .init(codingPath: codingPath, debugDescription: "no value for the key")
            )
        }
        return offset
    }

    /// The offset of the value for `key`, `nil` if the container has none or its value is nil: one lookup, where
    /// `decodeIfPresent`'s default (`contains`, `decodeNil`, `decode`) makes three.
    private func presentValue(_ key: Key) throws -> Int? {
        guard let offset = try find(key), try reader.byte(at: offset, codingPath) != 0x00 else { return nil }
        return offset
    }

    func contains(_ key: Key) -> Bool {
        (try? find(key)) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try reader.byte(at: try value(key), codingPath) == 0x00
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try reader.leaf(Bool.self, at: value(key), codingPath + [key])
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try reader.leaf(String.self, at: value(key), codingPath + [key])
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try reader.leaf(Double.self, at: value(key), codingPath + [key])
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try reader.float(at: value(key), codingPath + [key]).0
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        let offset = try value(key)
        let (integer, end) = try reader.integer(type, at: offset, codingPath + [key])
        reader.decoded(offset, end)
        return integer
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try reader.decode(type, at: value(key), BinaryPathNode(path, key))
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let offset = try presentValue(key) else { return nil }
        return try reader.bool(at: offset, codingPath + [key])
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let offset = try presentValue(key) else { return nil }
        return try reader.string(at: offset, codingPath + [key]).0
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let offset = try presentValue(key) else { return nil }
        return try reader.double(at: offset, codingPath + [key]).0
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let offset = try presentValue(key) else { return nil }
        return try reader.float(at: offset, codingPath + [key]).0
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalInteger(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalInteger(type, key) }

    @inline(__always)
    private func optionalInteger<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let offset = try presentValue(key) else { return nil }
        return try reader.integer(type, at: offset, codingPath + [key]).0
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let offset = try presentValue(key) else { return nil }
        return try reader.decode(type, at: offset, BinaryPathNode(path, key))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try reader.keyedContainer(keyedBy: type, at: value(key), BinaryPathNode(path, key))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try reader.unkeyedContainer(at: value(key), BinaryPathNode(path, key))
    }

    /// The decoder of the value for the key "super", which `Key` need not have (`JSONDecoder` reads it so too).
    func superDecoder() throws -> any Decoder {
        let key = BinaryDictionaryKey(stringValue: "super")
        var name = key.stringValue
        let reader = reader
        let start = start
        let depth = path.depth
        let found = try name.withUTF8 { utf8 in
            try reader.find(UnsafeRawBufferPointer(utf8), in: start, depth: depth, [])
        }
        guard let offset = found else {
            throw DecodingError.keyNotFound(
                key,
                .init(codingPath: codingPath, debugDescription: "no value for the key")
            )
        }
        return BinaryValueDecoder(reader: reader, offset: offset, path: BinaryPathNode(path, key))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        BinaryValueDecoder(reader: reader, offset: try value(key), path: BinaryPathNode(path, key))
    }
}

private struct BinaryUnkeyedDecoder: UnkeyedDecodingContainer {
    let reader: BinaryReader
    var cursor: Int
    /// The path of the container, and of its elements (no index is added for an element).
    let path: BinaryPathNode
    var currentIndex = 0
    var count: Int? { nil }
    var codingPath: [any CodingKey] { path.keys(reader) }

    init(reader: BinaryReader, cursor: Int, path: BinaryPathNode) {
        self.reader = reader
        self.cursor = cursor
        self.path = path
    }

    var isAtEnd: Bool {
        (try? reader.byte(at: cursor, codingPath)) ?? 0xFF == 0xFF
    }

    /// The offset of the next element, which this call consumes.
    private mutating func next() throws -> Int {
        if isAtEnd {
            throw DecodingError.valueNotFound(
                Any.self,
                .init(codingPath: codingPath, debugDescription: "no element \(currentIndex) in an unkeyed container")
            )
        }
        let offset = cursor
        cursor = try reader.skip(at: offset)
        currentIndex += 1
        return offset
    }

    mutating func decodeNil() throws -> Bool {
        guard try reader.byte(at: cursor, codingPath) == 0x00 else { return false }
        _ = try next()
        return true
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(at: next(), codingPath) }
    mutating func decode(_ type: String.Type) throws -> String { try reader.string(at: next(), codingPath).0 }
    mutating func decode(_ type: Double.Type) throws -> Double { try reader.double(at: next(), codingPath).0 }
    mutating func decode(_ type: Float.Type) throws -> Float { try reader.float(at: next(), codingPath).0 }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    @inline(__always)
    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try reader.integer(type, at: next(), codingPath).0
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try reader.decode(type, at: next(), in: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try reader.keyedContainer(keyedBy: type, at: next(), path)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try reader.unkeyedContainer(at: next(), path)
    }

    mutating func superDecoder() throws -> any Decoder {
        BinaryValueDecoder(reader: reader, offset: try next(), path: path)
    }
}

private struct BinarySingleValueDecoder: SingleValueDecodingContainer {
    let reader: BinaryReader
    let offset: Int
    let path: BinaryPathNode
    var codingPath: [any CodingKey] { path.keys(reader) }

    func decodeNil() -> Bool { (try? reader.byte(at: offset, codingPath)) == 0x00 }
    func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(at: offset, codingPath) }
    func decode(_ type: String.Type) throws -> String { try reader.string(at: offset, codingPath).0 }
    func decode(_ type: Double.Type) throws -> Double { try reader.double(at: offset, codingPath).0 }
    func decode(_ type: Float.Type) throws -> Float { try reader.float(at: offset, codingPath).0 }
    func decode(_ type: Int.Type) throws -> Int { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int8.Type) throws -> Int8 { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int16.Type) throws -> Int16 { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int32.Type) throws -> Int32 { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: Int64.Type) throws -> Int64 { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt.Type) throws -> UInt { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try reader.integer(type, at: offset, codingPath).0 }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.integer(type, at: offset, codingPath).0 }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try reader.decode(type, at: offset, in: path)
    }
}
