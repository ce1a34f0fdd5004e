import CSluiceSupport

/// CRC-32C (Castagnoli), the checksum of every journal record and snapshot.
///
/// With the processor's CRC-32C instruction where it has one (`csluice_crc32c`: SSE 4.2 on x86-64, the ARMv8 CRC32
/// extension), much faster than the tables on the snapshots and segments that recovery checks;
/// otherwise table-driven, slicing by eight: eight 256-entry tables let the loop consume eight bytes per step.
/// CRC-32C rather than the zlib CRC-32 because it detects more error patterns in the record sizes a journal writes,
/// and because it is the checksum of iSCSI, ext4 and PostgreSQL's WAL, so that a tool can check a record without
/// Sluice.
package enum CRC32C {
    /// Whether the processor computes CRC-32C itself.
    package static let hardware = csluice_crc32c_available()

    /// The polynomial 0x1EDC6F41, bit-reversed.
    private static let polynomial: UInt32 = 0x82F6_3B78

    /// `tables[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) == 1 ? (crc >> 1) ^ polynomial : crc >> 1
            }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[0][byte]
            for k in 1..<8 {
                crc = tables[0][Int(crc & 0xFF)] ^ (crc >> 8)
                tables[k][byte] = crc
            }
        }
        return tables
    }()

    /// The checksum of `bytes`, continuing from `crc` (the checksum of the bytes before them; 0 to start).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        if hardware, let start = bytes.baseAddress {
            return csluice_crc32c(crc, start, bytes.count)
        }
        return tableChecksum(bytes, continuing: crc)
    }

    /// ``checksum(_:continuing:)`` by the tables, whatever the processor: the reference for the instruction.
    package static func tableChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var crc = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { tables in
            let t0 = tables[0]
            let t1 = tables[1]
            let t2 = tables[2]
            let t3 = tables[3]
            let t4 = tables[4]
            let t5 = tables[5]
            let t6 = tables[6]
            let t7 = tables[7]
            while count - index >= 8 {
                let low = crc ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian
                let high = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
                crc =
                    t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)] ^ t5[Int((low >> 16) & 0xFF)]
                    ^ t4[Int(low >> 24)] ^ t3[Int(high & 0xFF)] ^ t2[Int((high >> 8) & 0xFF)]
                    ^ t1[Int((high >> 16) & 0xFF)] ^ t0[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return ~crc
    }

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        let array = Array(bytes)
        return array.withUnsafeBytes { checksum($0) }
    }
}
