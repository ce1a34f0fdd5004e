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
        let reader = BinaryReader(bytes)
        guard bytes.count > 1, bytes[0] == BinaryEncoder.version else {
            throw reader.corrupt(at: 0, [], "not a version 1 binary payload")
        }
        // The value must fill the payload exactly: a length that a bug or damage changed is not read as a prefix.
        guard try reader.skip(at: 1, []) == bytes.count else {
            throw reader.corrupt(at: 1, [], "the value does not end where the payload does")
        }
        return try Value(from: BinaryValueDecoder(reader: reader, offset: 1, codingPath: []))
    }
}

/// The payload being decoded.
private final class BinaryReader {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
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
        var cursor = start
        while let (keyCount, keyStart) = try? reader.varint(at: cursor, codingPath), keyCount != 0,
            let keyEnd = try? reader.end(keyStart, plus: keyCount - 1, codingPath)
        {
            let name = String(
                decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[keyStart..<keyEnd]),
                as: UTF8.self
            )
            if let key = Key(stringValue: name) { keys.append(key) }
            guard let next = try? reader.skip(at: keyEnd, codingPath) else { break }
            cursor = next
        }
        return keys
    }

    /// The offset of the value for `key`, `nil` if the container has none.
    func find(_ key: Key) throws -> Int? {
        var name = key.stringValue
        return try name.withUTF8 { wanted throws -> Int? in
            var cursor = start
            while true {
                let (keyCount, keyStart) = try reader.varint(at: cursor, codingPath)
                if keyCount == 0 { return nil }
                let keyEnd = try reader.end(keyStart, plus: keyCount - 1, codingPath)
                if keyEnd - keyStart == wanted.count
                    && (wanted.isEmpty
                        || memcmp(reader.bytes.baseAddress! + keyStart, wanted.baseAddress!, wanted.count) == 0)
                {
                    return keyEnd
                }
                cursor = try reader.skip(at: keyEnd, codingPath)
            }
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

    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        try reader.integer(type, at: value(key), codingPath + [key])
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try T(from: BinaryValueDecoder(reader: reader, offset: value(key), codingPath: codingPath + [key]))
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
        try T(from: BinaryValueDecoder(reader: reader, offset: next(), codingPath: codingPath))
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
        try T(from: BinaryValueDecoder(reader: reader, offset: offset, codingPath: codingPath))
    }
}
