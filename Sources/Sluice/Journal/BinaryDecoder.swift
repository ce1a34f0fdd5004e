#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes the values that ``BinaryEncoder`` writes, straight from the journal's bytes, with every read bounds-checked
/// (a damaged payload throws a `DecodingError`, never reads out of bounds).
struct BinaryDecoder {
    /// Decodes the payload in `bytes`, whose first byte is ``BinaryEncoder/version``.
    ///
    /// `bytes` must stay valid during the call; a `Decodable` must not keep its decoder or containers.
    static func decode<Value: Decodable>(_ type: Value.Type, from bytes: UnsafeRawBufferPointer) throws -> Value {
        var keyComparisons = 0
        return try decode(type, from: bytes, keyComparisons: &keyComparisons)
    }

    /// Decodes the payload in `bytes` and adds to `keyComparisons` the number of keys of the payload that the
    /// lookups compared with the key they looked for (by bytes, or by hash in an index), so that a test can check
    /// that decoding stays linear in the size of the payload.
    static func decode<Value: Decodable>(
        _ type: Value.Type,
        from bytes: UnsafeRawBufferPointer,
        keyComparisons: inout Int
    ) throws -> Value {
        let reader = BinaryReader(bytes)
        guard bytes.count > 1, bytes[0] == BinaryEncoder.version else {
            throw reader.corrupt(at: 0, [], "not a version 1 binary payload")
        }
        // The value must fill the payload exactly: a length that a bug or damage changed is not read as a prefix.
        guard try reader.skip(at: 1, []) == bytes.count else {
            throw reader.corrupt(at: 1, [], "the value does not end where the payload does")
        }
        defer { keyComparisons += reader.keyComparisons }
        return try reader.decode(Value.self, at: 1, [])
    }
}

/// The payload being decoded, and the key indexes of its large keyed containers.
///
/// A key lookup first scans the container from its first entry, as most containers are small structs whose few
/// keys a scan finds sooner than a hash would; a scan that passes ``scanLimit`` entries, or more than
/// ``scanBytes`` bytes, stops and the lookup goes through the container's ``KeyIndex``, built once. So a
/// `Decodable` that looks up every key of a large container stays linear in its size, and so does a struct after a
/// large field. (A dictionary with `String` or `Int` keys in a large payload makes no lookups: see
/// ``BinaryKeyedDictionary``.)
private final class BinaryReader {
    let bytes: UnsafeRawBufferPointer

    /// The entries a scan passes before the lookup uses an index.
    static let scanLimit = 16
    /// The bytes a scan passes before the lookup uses an index: skipping a value is linear in its elements, so a
    /// scan past a large value must not be repeated for every key after it.
    static let scanBytes = 1024
    /// The size of a payload from which a keyed container is checked for a dictionary to read in one pass (see
    /// ``BinaryKeyedDictionary``).
    static let dictionaryCheckBytes = 1024

    // `@exclusivity(unchecked)`: a reader is used by one thread, within one call of `BinaryDecoder.decode`.
    /// The number of keys compared with a key looked for: see ``BinaryDecoder/decode(_:from:keyComparisons:)``.
    @exclusivity(unchecked) var keyComparisons = 0
    /// For each depth of the coding path, the start of the container whose index is in `indexInUse` at that depth
    /// (-1 for none): a `Decodable` uses one keyed container at a time at each depth, so the index of the container
    /// in use is found by a comparison, without a hash.
    @exclusivity(unchecked) private var startInUse: [Int] = []
    @exclusivity(unchecked) private var indexInUse: [KeyIndex?] = []
    /// Every index built, by container start: for a `Decodable` that goes back to a container after using another
    /// one at the same depth.
    @exclusivity(unchecked) private var indexes: [Int: KeyIndex] = [:]

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The index of the keyed container whose first entry is at `start`, and whose coding path is `depth` keys long,
    /// if it has one.
    @inline(__always)
    func indexInUse(_ start: Int, depth: Int) -> KeyIndex? {
        depth < startInUse.count && startInUse[depth] == start ? indexInUse[depth] : nil
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
            indexInUse.append(nil)
        }
        startInUse[depth] = start
        indexInUse[depth] = index
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
            if equal(keyStart, keyEnd, wanted) { return keyEnd }
            cursor = try skip(at: keyEnd, codingPath())
            passed += 1
            if passed == Self.scanLimit || cursor - start > Self.scanBytes { break }
        }
        if try byte(at: cursor, codingPath()) == 0x00 { return nil }
        return try index(start, depth: depth, codingPath()).find(wanted, in: self)
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
        keyEnd - keyStart == wanted.count
            && (wanted.isEmpty || memcmp(bytes.baseAddress! + keyStart, wanted.baseAddress!, wanted.count) == 0)
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

    /// The offset after the value at `offset`.
    func skip(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Int {
        let tag = try byte(at: offset, codingPath())
        switch tag {
        case 0x00, 0x01, 0x02: return offset + 1
        case 0x03, 0x04: return try varint(at: offset + 1, codingPath()).1
        case 0x05: return try end(offset + 1, plus: 4, codingPath())
        case 0x06: return try end(offset + 1, plus: 8, codingPath())
        case 0x07:
            let (count, start) = try varint(at: offset + 1, codingPath())
            return try end(start, plus: count, codingPath())
        case 0x08:
            var cursor = offset + 1
            while true {
                let (keyCount, keyStart) = try varint(at: cursor, codingPath())
                if keyCount == 0 { return keyStart }
                cursor = try skip(at: end(keyStart, plus: keyCount - 1, codingPath()), codingPath())
            }
        case 0x09:
            var cursor = offset + 1
            while try byte(at: cursor, codingPath()) != 0xFF {
                cursor = try skip(at: cursor, codingPath())
            }
            return cursor + 1
        default:
            throw corrupt(at: offset, codingPath(), "unknown tag \(tag)")
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

    // Always inlined: unspecialized, the conversion to `T` looks up generic metadata for every integer.
    @inline(__always)
    func integer<T: FixedWidthInteger>(
        _ type: T.Type,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        let tag = try byte(at: offset, codingPath())
        let result: T?
        switch tag {
        case 0x03:
            let raw = try varint(at: offset + 1, codingPath()).0
            result = T(exactly: Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
        case 0x04:
            result = T(exactly: try varint(at: offset + 1, codingPath()).0)
        default:
            throw mismatch(type, tag: tag, at: offset, codingPath())
        }
        guard let result else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath(), debugDescription: "the number does not fit in \(T.self)")
            )
        }
        return result
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

    func bool(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x01 || tag == 0x02 else { throw mismatch(Bool.self, tag: tag, at: offset, codingPath()) }
        return tag == 0x02
    }

    func double(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Double {
        let tag = try byte(at: offset, codingPath())
        switch tag {
        case 0x06:
            _ = try end(offset + 1, plus: 8, codingPath())
            return Double(
                bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self))
            )
        case 0x05:
            return Double(try float(at: offset, codingPath()))
        default:
            throw mismatch(Double.self, tag: tag, at: offset, codingPath())
        }
    }

    func float(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Float {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x05 else { throw mismatch(Float.self, tag: tag, at: offset, codingPath()) }
        _ = try end(offset + 1, plus: 4, codingPath())
        return Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self)))
    }

    func string(at offset: Int, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        let tag = try byte(at: offset, codingPath())
        guard tag == 0x07 else { throw mismatch(String.self, tag: tag, at: offset, codingPath()) }
        let (count, start) = try varint(at: offset + 1, codingPath())
        let end = try end(start, plus: count, codingPath())
        guard let string = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        else {
            throw corrupt(at: start, codingPath(), "a string is not valid UTF-8")
        }
        return string
    }
}

extension BinaryReader {
    /// Decodes the value at `offset`: the common leaf types without a `Decoder` (and its coding path), a
    /// dictionary with `String` or `Int` keys straight from its keyed container, anything else through its
    /// `init(from:)`.
    @inline(__always)
    func decode<T: Decodable>(
        _ type: T.Type,
        at offset: Int,
        _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        if T.self == Int.self { return unsafeBitCast(try integer(Int.self, at: offset, codingPath()), to: T.self) }
        if T.self == String.self { return unsafeBitCast(try string(at: offset, codingPath()), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try double(at: offset, codingPath()), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(at: offset, codingPath()), to: T.self) }
        let path = codingPath()
        // A small payload skips the check for a dictionary (a conformance lookup): its dictionaries are small, and
        // their lookups scan a few entries.
        if bytes.count >= Self.dictionaryCheckBytes, offset < bytes.count, bytes[offset] == 0x08,
            let dictionary = T.self as? any BinaryKeyedDictionary.Type,
            let value = try dictionary.decodeEntries(self, at: offset, path)
        {
            return value as! T
        }
        return try T(from: BinaryValueDecoder(reader: self, offset: offset, codingPath: path))
    }
}

/// A dictionary whose keys are `String`s or `Int`s, which `Dictionary.init(from:)` reads from a keyed container:
/// `allKeys`, then a lookup for each key. Read here instead, entry after entry, in one pass over the container, with
/// the same result: a key written twice has its first value (the value after it is not read), an `Int` key is
/// parsed as `Int(_:)` parses it, and a key that does not parse is a type mismatch.
private protocol BinaryKeyedDictionary {
    /// The dictionary in the keyed container at `offset`, `nil` to let `init(from:)` read the value (its keys are
    /// neither `String`s nor `Int`s, or the value is not a keyed container).
    static func decodeEntries(_ reader: BinaryReader, at offset: Int, _ codingPath: [any CodingKey]) throws -> Self?
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
        _ codingPath: [any CodingKey]
    ) throws -> Self? {
        guard Key.self == String.self || Key.self == Int.self, try reader.byte(at: offset, codingPath) == 0x08 else {
            return nil
        }
        // Counted first, so that the dictionary is allocated once.
        var count = 0
        var cursor = offset + 1
        while true {
            let (keyCount, keyStart) = try reader.varint(at: cursor, codingPath)
            if keyCount == 0 { break }
            cursor = try reader.skip(at: reader.end(keyStart, plus: keyCount - 1, codingPath), codingPath)
            count += 1
        }
        var result = Self(minimumCapacity: count)
        cursor = offset + 1
        while true {
            let (keyCount, keyStart) = try reader.varint(at: cursor, codingPath)
            if keyCount == 0 { return result }
            let keyEnd = try reader.end(keyStart, plus: keyCount - 1, codingPath)
            cursor = try reader.skip(at: keyEnd, codingPath)
            let key: Key
            if Key.self == String.self {
                key = unsafeBitCast(reader.key(keyStart, keyEnd), to: Key.self)
            } else if let number = reader.intKey(keyStart, keyEnd) {
                key = unsafeBitCast(number, to: Key.self)
            } else {
                throw DecodingError.typeMismatch(
                    Int.self,
                    .init(
                        codingPath: codingPath + [BinaryDictionaryKey(stringValue: reader.key(keyStart, keyEnd))],
                        debugDescription: "Expected Int key but found String key instead."
                    )
                )
            }
            // One hash per entry: the value is inserted, and the first one put back if the key had one already.
            // The value of a repeated key that does not decode is skipped, as `init(from:)` never reads it.
            let value: Value
            do {
                value = try reader.decode(
                    Value.self,
                    at: keyEnd,
                    codingPath + [BinaryDictionaryKey(stringValue: reader.key(keyStart, keyEnd))]
                )
            } catch {
                if result.index(forKey: key) != nil { continue }
                throw error
            }
            if let first = result.updateValue(value, forKey: key) {
                result[key] = first
            }
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
            cursor = try reader.skip(at: keyEnd, codingPath())
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

private struct BinaryValueDecoder: Decoder {
    let reader: BinaryReader
    let offset: Int
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let tag = try reader.byte(at: offset, codingPath)
        guard tag == 0x08 else {
            throw reader.mismatch([String: Any].self, tag: tag, at: offset, codingPath)
        }
        return KeyedDecodingContainer(
            BinaryKeyedDecoder<Key>(reader: reader, start: offset + 1, codingPath: codingPath)
        )
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let tag = try reader.byte(at: offset, codingPath)
        guard tag == 0x09 else {
            throw reader.mismatch([Any].self, tag: tag, at: offset, codingPath)
        }
        return BinaryUnkeyedDecoder(reader: reader, cursor: offset + 1, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecoder(reader: reader, offset: offset, codingPath: codingPath)
    }
}

private struct BinaryKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: BinaryReader
    /// The offset of the first entry.
    let start: Int
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        var keys: [Key] = []
        // A large container is indexed here: a `Decodable` that asks for every key, such as a dictionary, then
        // looks each one up.
        if let index = reader.indexInUse(start, depth: codingPath.count) ?? largeContainerIndex() {
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
            guard let next = try? reader.skip(at: keyEnd, codingPath) else { break }
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
            let next = try? reader.skip(at: keyEnd, codingPath)
        {
            cursor = next
            passed += 1
            if passed == BinaryReader.scanLimit || cursor - start > BinaryReader.scanBytes {
                return (try? reader.byte(at: cursor, codingPath)) == 0x00
                    ? nil : try? reader.index(start, depth: codingPath.count, codingPath)
            }
        }
        return nil
    }

    /// The offset of the value for `key`, `nil` if the container has none.
    func find(_ key: Key) throws -> Int? {
        var name = key.stringValue
        return try name.withUTF8 { wanted throws -> Int? in
            try reader.find(UnsafeRawBufferPointer(wanted), in: start, depth: codingPath.count, codingPath)
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

    func contains(_ key: Key) -> Bool {
        (try? find(key)) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try reader.byte(at: try value(key), codingPath) == 0x00
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try reader.bool(at: value(key), codingPath + [key])
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try reader.string(at: value(key), codingPath + [key])
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try reader.double(at: value(key), codingPath + [key])
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try reader.float(at: value(key), codingPath + [key])
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
        try reader.integer(type, at: value(key), codingPath + [key])
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try reader.decode(type, at: value(key), codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try BinaryValueDecoder(reader: reader, offset: value(key), codingPath: codingPath + [key])
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try BinaryValueDecoder(reader: reader, offset: value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(forKey: Key(stringValue: "super")!)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        BinaryValueDecoder(reader: reader, offset: try value(key), codingPath: codingPath + [key])
    }
}

private struct BinaryUnkeyedDecoder: UnkeyedDecodingContainer {
    let reader: BinaryReader
    var cursor: Int
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { nil }

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
        cursor = try reader.skip(at: offset, codingPath)
        currentIndex += 1
        return offset
    }

    mutating func decodeNil() throws -> Bool {
        guard try reader.byte(at: cursor, codingPath) == 0x00 else { return false }
        _ = try next()
        return true
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(at: next(), codingPath) }
    mutating func decode(_ type: String.Type) throws -> String { try reader.string(at: next(), codingPath) }
    mutating func decode(_ type: Double.Type) throws -> Double { try reader.double(at: next(), codingPath) }
    mutating func decode(_ type: Float.Type) throws -> Float { try reader.float(at: next(), codingPath) }
    mutating func decode(_ type: Int.Type) throws -> Int { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try reader.integer(type, at: next(), codingPath) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.integer(type, at: next(), codingPath) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try reader.decode(type, at: next(), codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try BinaryValueDecoder(reader: reader, offset: next(), codingPath: codingPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try BinaryValueDecoder(reader: reader, offset: next(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        BinaryValueDecoder(reader: reader, offset: try next(), codingPath: codingPath)
    }
}

private struct BinarySingleValueDecoder: SingleValueDecodingContainer {
    let reader: BinaryReader
    let offset: Int
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { (try? reader.byte(at: offset, codingPath)) == 0x00 }
    func decode(_ type: Bool.Type) throws -> Bool { try reader.bool(at: offset, codingPath) }
    func decode(_ type: String.Type) throws -> String { try reader.string(at: offset, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try reader.double(at: offset, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try reader.float(at: offset, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try reader.integer(type, at: offset, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try reader.integer(type, at: offset, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try reader.decode(type, at: offset, codingPath)
    }
}
