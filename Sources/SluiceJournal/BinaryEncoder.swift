/// The journal's compact binary encoding of `Codable` values (version 1), written in one pass into one buffer.
///
/// A payload is the version byte `0x01`, then one value. A value is a tag byte and its body:
///
/// | tag | value | body |
/// |---|---|---|
/// | `0x00` | nil | none |
/// | `0x01`, `0x02` | `false`, `true` | none |
/// | `0x03` | a signed integer | zigzag LEB128 varint |
/// | `0x04` | an unsigned integer | LEB128 varint |
/// | `0x05` | `Float` | 4 bytes, little-endian bit pattern |
/// | `0x06` | `Double` | 8 bytes, little-endian bit pattern |
/// | `0x07` | `String` | varint byte count, UTF-8 |
/// | `0x08` | keyed container | entries (varint of the key's UTF-8 byte count + 1, the key's `stringValue`, a value), then `0x00` |
/// | `0x09` | unkeyed container | values, then `0xFF` |
///
/// A value that encodes nothing is an empty keyed container, as `JSONEncoder` writes `{}`.
///
/// The encoder writes containers in the order they are created, which is what synthesized and most hand-written
/// `encode(to:)` do. A container written to after a container created later (interleaved writes), a second
/// container from one encoder, or any error makes ``encode(_:)`` return `nil`: ``JournalCoder`` then writes that
/// value as JSON, which the reader tells apart by its first byte (JSON never starts with `0x01`).
///
/// Containers nest at most ``maximumDepth`` deep: a value that nests them deeper throws an `EncodingError` with the
/// coding path where the limit was passed, whatever the format it would have been written in, so that the journal
/// never writes a value that it cannot read back.
///
/// Not thread-safe: one encoder per thread (the journal uses it from its writer, or under its I/O lock).
final class BinaryEncoder {
    static let version: UInt8 = 1

    /// The deepest nesting of containers that the encoder writes and ``BinaryDecoder`` reads: each struct, class,
    /// array, dictionary and set is a container, and an enum case with associated values is two.
    ///
    /// Decoding recurses through the values' `init(from:)`, one level of the user's and the library's calls per
    /// container, each level a few kilobytes of stack in a debug build: at this depth, a decoding uses about a third
    /// of the 512 KiB stack of a Dispatch worker or a Swift concurrency thread, the smallest a journal decodes on.
    static let maximumDepth = 64

    // `@exclusivity(unchecked)`: one thread uses an encoder at a time, and the dynamic exclusivity checks would be
    // a large part of encoding a small action.
    @exclusivity(unchecked) fileprivate var bytes: [UInt8] = []
    /// The ids of the containers still open, outermost first.
    @exclusivity(unchecked) fileprivate var open: [UInt32] = []
    @exclusivity(unchecked) fileprivate var nextID: UInt32 = 0
    /// The coding path of what is being written: a container's path is the first `depth` keys of it while the
    /// container can be written to (one pass), so that a nested value costs a key pushed here rather than a new
    /// array for its path.
    @exclusivity(unchecked) fileprivate var path: [any CodingKey] = []
    /// Set when the value cannot be written in one pass; the output is then discarded.
    @exclusivity(unchecked) fileprivate var unsupported = false
    /// Set when a container was opened deeper than ``maximumDepth``: the one flag that the path of every value
    /// tests, so that a value within the limit pays one load and one branch for it.
    @exclusivity(unchecked) fileprivate var isTooDeep = false
    /// The coding path of the first container opened deeper than ``maximumDepth``.
    @exclusivity(unchecked) fileprivate var tooDeepAt: [any CodingKey] = []
    /// The error for it, made by the first value encoded (or returning) after that container was opened.
    @exclusivity(unchecked) fileprivate var tooDeep: EncodingError?

    /// The payload for `value`, or `nil` when it needs the JSON fallback; throws if `value` nests containers deeper
    /// than ``maximumDepth``.
    func encode<Value: Encodable>(_ value: Value) throws(EncodingError) -> [UInt8]? {
        bytes.removeAll(keepingCapacity: true)
        open.removeAll(keepingCapacity: true)
        path.removeAll(keepingCapacity: true)
        unsupported = false
        if _slowPath(isTooDeep) {
            isTooDeep = false
            tooDeepAt = []
            tooDeep = nil
        }
        bytes.append(Self.version)
        do {
            try encodeValue(value, depth: 0)
        } catch {
            if _slowPath(isTooDeep) { throw tooDeepError(of: Value.self) }
            return nil
        }
        if _slowPath(isTooDeep) { throw tooDeepError(of: Value.self) }
        if unsupported { return nil }
        return bytes
    }

    /// Encodes `value`, whose coding path is the first `depth` keys of ``path``.
    fileprivate func encodeValue<Value: Encodable>(_ value: Value, depth: Int) throws {
        // Past the limit, the encoding stops at the next value, and the error unwinds the values' `encode(to:)`.
        try checkDepth(of: Value.self)
        let level = open.count
        let start = bytes.count
        do {
            try value.encode(to: BinaryValueEncoder(encoder: self, depth: depth, start: start, level: level))
        } catch {
            try checkDepth(of: Value.self)
            throw error
        }
        try checkDepth(of: Value.self)
        close(above: level)
        if bytes.count == start {
            bytes.append(0x08)
            bytes.append(0x00)
        }
    }

    /// Throws if a container was opened past the limit: the error names `type`, the first value encoded from then
    /// on (the value itself, perhaps thousands of levels deep, is not described).
    @inline(__always)
    private func checkDepth<Value>(of type: Value.Type) throws(EncodingError) {
        if _slowPath(isTooDeep) {
            throw tooDeepError(of: type)
        }
    }

    /// The error for the container opened past the limit, made once, naming `type` (see ``checkDepth(of:)``).
    @inline(never)
    private func tooDeepError<Value>(of type: Value.Type) -> EncodingError {
        if let tooDeep { return tooDeep }
        let error = EncodingError.invalidValue(
            "\(type)",
            .init(
                codingPath: tooDeepAt,
                debugDescription:
                    "containers nested more than \(Self.maximumDepth) deep, the most the journal's encoding writes"
            )
        )
        tooDeep = error
        return error
    }

    /// The coding path of a container or a value at `depth`: only the first `depth` keys of ``path`` are read, so a
    /// path left longer by a deeper value needs no trimming until a key is written at `depth`
    /// (``enterPath(depth:key:)``).
    fileprivate func codingPath(depth: Int) -> [any CodingKey] {
        Array(path.prefix(depth))
    }

    /// Makes ``path`` the path at `depth` followed by `key`, for a value or a nested container written under `key`
    /// by the container at `depth`; returns the new depth.
    @inline(__always)
    fileprivate func enterPath(depth: Int, key: some CodingKey) -> Int {
        if path.count > depth {
            path.removeLast(path.count - depth)
        }
        path.append(key)
        return path.count
    }

    /// Ends the containers deeper than `level`.
    fileprivate func close(above level: Int) {
        while open.count > level {
            // Keyed containers end with 0x00, unkeyed ones with 0xFF: the id's low bit says which.
            let ended = open.removeLast()
            bytes.append(ended & 1 == 0 ? 0x00 : 0xFF)
        }
    }

    /// Makes the container `id` at `level` the innermost open one, ending those created after it; marks the
    /// encoding unsupported if it was already ended.
    @inline(__always)
    fileprivate func enter(_ id: UInt32, level: Int) {
        if _fastPath(open.count == level + 1 && open[level] == id) { return }
        if level < open.count && open[level] == id {
            while open.count > level + 1 {
                let ended = open.removeLast()
                bytes.append(ended & 1 == 0 ? 0x00 : 0xFF)
            }
        } else {
            unsupported = true
        }
    }

    /// Opens a container at `level`: `unkeyed` ids are odd. Notes `codingPath` if it is deeper than ``maximumDepth``.
    fileprivate func openContainer(unkeyed: Bool, _ codingPath: @autoclosure () -> [any CodingKey]) -> UInt32 {
        if _slowPath(open.count >= Self.maximumDepth) && !isTooDeep {
            isTooDeep = true
            tooDeepAt = codingPath()
        }
        nextID &+= 2
        let id = unkeyed ? nextID | 1 : nextID & ~1
        open.append(id)
        bytes.append(unkeyed ? 0x09 : 0x08)
        return id
    }

    @inline(__always)
    fileprivate func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    @inline(__always)
    fileprivate func writeSigned(_ value: Int64) {
        bytes.append(0x03)
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    @inline(__always)
    fileprivate func writeUnsigned(_ value: UInt64) {
        bytes.append(0x04)
        writeVarint(value)
    }

    fileprivate func writeString(_ value: String) {
        bytes.append(0x07)
        var value = value
        value.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    fileprivate func writeKey(_ key: some CodingKey) {
        var name = key.stringValue
        name.withUTF8 { utf8 in
            writeVarint(UInt64(utf8.count) + 1)
            bytes.append(contentsOf: utf8)
        }
    }

    fileprivate func writeFloat(_ value: Float) {
        bytes.append(0x05)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    fileprivate func writeDouble(_ value: Double) {
        bytes.append(0x06)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    fileprivate func writeBool(_ value: Bool) {
        bytes.append(value ? 0x02 : 0x01)
    }
}

/// The `Encoder` of one value, which starts at `start` with `level` containers open.
///
/// Three words (two `UInt32`s share one), so that the `any Encoder` that `encode(to:)` receives holds it inline
/// instead of in a heap box.
private struct BinaryValueEncoder: Encoder {
    let encoder: BinaryEncoder
    /// The length of the value's coding path, the start of ``BinaryEncoder/path``.
    let depth: Int
    private let storedStart: UInt32
    private let storedLevel: UInt32
    var start: Int { Int(storedStart) }
    var level: Int { Int(storedLevel) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var codingPath: [any CodingKey] { encoder.codingPath(depth: depth) }

    init(encoder: BinaryEncoder, depth: Int, start: Int, level: Int) {
        self.encoder = encoder
        self.depth = depth
        // A payload is at most 1 GiB (`FileJournalStorage.largestPayload`); past 4 GiB, the JSON fallback.
        if start > Int(UInt32.max) || level > Int(UInt32.max) { encoder.unsupported = true }
        storedStart = UInt32(truncatingIfNeeded: start)
        storedLevel = UInt32(truncatingIfNeeded: level)
    }

    /// Marks the encoding unsupported if something was written for this value already.
    func claim() {
        if encoder.bytes.count != start || encoder.open.count != level {
            encoder.unsupported = true
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        claim()
        let id = encoder.openContainer(unkeyed: false, codingPath)
        return KeyedEncodingContainer(BinaryKeyedEncoder<Key>(encoder: encoder, id: id, level: level, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        claim()
        let id = encoder.openContainer(unkeyed: true, codingPath)
        return BinaryUnkeyedEncoder(encoder: encoder, id: id, level: level, depth: depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncoder(value: self)
    }
}

private struct BinaryKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: BinaryEncoder
    let id: UInt32
    let level: Int
    /// The length of the container's coding path, the start of ``BinaryEncoder/path``.
    let depth: Int
    var codingPath: [any CodingKey] { encoder.codingPath(depth: depth) }

    @inline(__always)
    private func entry(_ key: Key) {
        encoder.enter(id, level: level)
        encoder.writeKey(key)
    }

    mutating func encodeNil(forKey key: Key) throws {
        entry(key)
        encoder.bytes.append(0x00)
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        entry(key)
        encoder.writeBool(value)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        entry(key)
        encoder.writeString(value)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        entry(key)
        encoder.writeDouble(value)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        entry(key)
        encoder.writeFloat(value)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        entry(key)
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        entry(key)
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        entry(key)
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        entry(key)
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        entry(key)
        encoder.writeSigned(value)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        entry(key)
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        entry(key)
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        entry(key)
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        entry(key)
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        entry(key)
        encoder.writeUnsigned(value)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        entry(key)
        try encoder.encodeValue(value, depth: encoder.enterPath(depth: depth, key: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        entry(key)
        let nestedDepth = encoder.enterPath(depth: depth, key: key)
        let nested = encoder.openContainer(unkeyed: false, encoder.codingPath(depth: nestedDepth))
        return KeyedEncodingContainer(
            BinaryKeyedEncoder<NestedKey>(encoder: encoder, id: nested, level: level + 1, depth: nestedDepth)
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        entry(key)
        let nestedDepth = encoder.enterPath(depth: depth, key: key)
        let nested = encoder.openContainer(unkeyed: true, encoder.codingPath(depth: nestedDepth))
        return BinaryUnkeyedEncoder(encoder: encoder, id: nested, level: level + 1, depth: nestedDepth)
    }

    /// The encoder of the value for the key "super", which `Key` need not have (`JSONEncoder` writes it so too).
    mutating func superEncoder() -> any Encoder {
        superEncoder(depth: encoder.enterPath(depth: depth, key: SuperKey()))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(depth: encoder.enterPath(depth: depth, key: key))
    }

    private mutating func superEncoder(depth: Int) -> any Encoder {
        // A super encoder may be written to later, interleaved with this container: not in one pass.
        encoder.unsupported = true
        return BinaryValueEncoder(
            encoder: encoder,
            depth: depth,
            start: encoder.bytes.count,
            level: encoder.open.count
        )
    }
}

/// The key of a super encoder's value.
private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

private struct BinaryUnkeyedEncoder: UnkeyedEncodingContainer {
    let encoder: BinaryEncoder
    let id: UInt32
    let level: Int
    /// The length of the container's coding path, the start of ``BinaryEncoder/path``.
    let depth: Int
    var codingPath: [any CodingKey] { encoder.codingPath(depth: depth) }
    var count = 0

    private mutating func element() {
        encoder.enter(id, level: level)
        count += 1
    }

    mutating func encodeNil() throws {
        element()
        encoder.bytes.append(0x00)
    }
    mutating func encode(_ value: Bool) throws {
        element()
        encoder.writeBool(value)
    }
    mutating func encode(_ value: String) throws {
        element()
        encoder.writeString(value)
    }
    mutating func encode(_ value: Double) throws {
        element()
        encoder.writeDouble(value)
    }
    mutating func encode(_ value: Float) throws {
        element()
        encoder.writeFloat(value)
    }
    mutating func encode(_ value: Int) throws {
        element()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int8) throws {
        element()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int16) throws {
        element()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int32) throws {
        element()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int64) throws {
        element()
        encoder.writeSigned(value)
    }
    mutating func encode(_ value: UInt) throws {
        element()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt8) throws {
        element()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt16) throws {
        element()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt32) throws {
        element()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt64) throws {
        element()
        encoder.writeUnsigned(value)
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        element()
        try encoder.encodeValue(value, depth: depth)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        element()
        let nested = encoder.openContainer(unkeyed: false, codingPath)
        return KeyedEncodingContainer(
            BinaryKeyedEncoder<NestedKey>(encoder: encoder, id: nested, level: level + 1, depth: depth)
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        element()
        let nested = encoder.openContainer(unkeyed: true, codingPath)
        return BinaryUnkeyedEncoder(encoder: encoder, id: nested, level: level + 1, depth: depth)
    }

    mutating func superEncoder() -> any Encoder {
        encoder.unsupported = true
        return BinaryValueEncoder(
            encoder: encoder,
            depth: depth,
            start: encoder.bytes.count,
            level: encoder.open.count
        )
    }
}

private struct BinarySingleValueEncoder: SingleValueEncodingContainer {
    let value: BinaryValueEncoder
    var codingPath: [any CodingKey] { value.codingPath }
    var encoder: BinaryEncoder { value.encoder }

    mutating func encodeNil() throws {
        value.claim()
        encoder.bytes.append(0x00)
    }
    mutating func encode(_ value: Bool) throws {
        self.value.claim()
        encoder.writeBool(value)
    }
    mutating func encode(_ value: String) throws {
        self.value.claim()
        encoder.writeString(value)
    }
    mutating func encode(_ value: Double) throws {
        self.value.claim()
        encoder.writeDouble(value)
    }
    mutating func encode(_ value: Float) throws {
        self.value.claim()
        encoder.writeFloat(value)
    }
    mutating func encode(_ value: Int) throws {
        self.value.claim()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int8) throws {
        self.value.claim()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int16) throws {
        self.value.claim()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int32) throws {
        self.value.claim()
        encoder.writeSigned(Int64(value))
    }
    mutating func encode(_ value: Int64) throws {
        self.value.claim()
        encoder.writeSigned(value)
    }
    mutating func encode(_ value: UInt) throws {
        self.value.claim()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt8) throws {
        self.value.claim()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt16) throws {
        self.value.claim()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt32) throws {
        self.value.claim()
        encoder.writeUnsigned(UInt64(value))
    }
    mutating func encode(_ value: UInt64) throws {
        self.value.claim()
        encoder.writeUnsigned(value)
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        self.value.claim()
        try encoder.encodeValue(value, depth: self.value.depth)
    }
}
