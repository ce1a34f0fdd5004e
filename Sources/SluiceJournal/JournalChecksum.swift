/// The checksum that the journal keeps with every record and snapshot, for a storage backend outside this module.
///
/// A ``JournalStorage`` in another package (a database backend, say) stores and checks the same CRC-32C
/// (Castagnoli) as ``FileJournalStorage``, so that a record keeps one checksum whatever holds it.
public enum JournalChecksum {
    /// The CRC-32C of `bytes`.
    public static func crc32c(of bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { CRC32C.checksum($0) }
    }

    /// The CRC-32C of `bytes`, continuing from `crc` (the checksum of the bytes before them; 0 to start).
    public static func crc32c(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        CRC32C.checksum(bytes, continuing: crc)
    }
}
