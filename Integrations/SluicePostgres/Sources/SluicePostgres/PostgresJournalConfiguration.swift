import PostgresNIO

/// A PostgreSQL server that may hold the journal: the client tries each one and uses the primary.
public struct PostgresEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int

    /// Creates an endpoint.
    public init(host: String, port: Int = 5432) {
        self.host = host
        self.port = port
    }

    public var description: String { "\(host):\(port)" }
}

/// Where a PostgreSQL journal lives and how its writer behaves.
public struct PostgresJournalConfiguration: Sendable {
    /// The servers to try, in order; the one that is not in recovery (`pg_is_in_recovery()`) is the primary.
    public var endpoints: [PostgresEndpoint]
    /// The user to connect as.
    public var username: String
    /// The password, if the server asks for one.
    public var password: String?
    /// The database that holds the `sluice_*` tables.
    public var database: String
    /// The store whose log this is: one stream (one head row) per store id.
    ///
    /// Any text of at most ``maxStoreIDBytes`` bytes in UTF-8 (spaces, quotes and the empty string included);
    /// a longer one is refused when the storage or a follower is made.
    public var storeID: String
    /// A name for this writer, kept in the head row (for operators).
    public var writerName: String
    /// How long a writer holds the stream without renewing its lease; a hung writer is replaced after it.
    public var lease: Duration
    /// How long ``PostgresJournalStorage/acquire()`` waits for the current writer's lease to end (a standby sets
    /// it long); `.zero` tries once.
    public var acquireWait: Duration
    /// How long a writer tries to reach a primary again after losing its connection (a database failover).
    public var reconnectTimeout: Duration
    /// How long the writer waits for an answer to one statement before it drops the connection and treats the
    /// statement's outcome as unknown (it then reconnects and reads the head row and the records, as after a
    /// lost connection). A server killed mid-statement does not always close the client's side promptly.
    public var statementTimeout: Duration
    /// At most this many records in one append statement.
    public var maxBatchCount: Int
    /// At most about this many payload bytes in one append statement.
    public var maxBatchBytes: Int

    /// The longest store id, in UTF-8 bytes.
    ///
    /// Each append notifies the followers with the store id and the last sequence number, and PostgreSQL refuses
    /// a notification payload of 8000 bytes or more; the id is also part of the primary keys, whose B-tree entries
    /// must fit a third of a page. A limit well below both keeps every id usable.
    public static let maxStoreIDBytes = 2_048

    /// Creates a configuration.
    public init(
        endpoints: [PostgresEndpoint],
        username: String = "postgres",
        password: String? = nil,
        database: String = "postgres",
        storeID: String,
        writerName: String = "writer",
        lease: Duration = .seconds(2),
        acquireWait: Duration = .zero,
        reconnectTimeout: Duration = .seconds(20),
        statementTimeout: Duration = .seconds(10),
        maxBatchCount: Int = 2_000,
        maxBatchBytes: Int = 1 << 20
    ) {
        self.endpoints = endpoints
        self.username = username
        self.password = password
        self.database = database
        self.storeID = storeID
        self.writerName = writerName
        self.lease = lease
        self.acquireWait = acquireWait
        self.reconnectTimeout = reconnectTimeout
        self.statementTimeout = statementTimeout
        self.maxBatchCount = maxBatchCount
        self.maxBatchBytes = maxBatchBytes
    }
}

extension PostgresJournalConfiguration {
    /// Throws ``PostgresJournalError/storeIDTooLong(bytes:limit:)`` for a store id above ``maxStoreIDBytes``.
    func checkStoreID() throws(PostgresJournalError) {
        let bytes = storeID.utf8.count
        guard bytes <= Self.maxStoreIDBytes else { throw .storeIDTooLong(bytes: bytes, limit: Self.maxStoreIDBytes) }
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
