import Foundation
import PostgresNIO

/// The tables of the journal, created when missing. One head row per store id in `sluice_streams`: the writer
/// assigns sequence numbers and moves `head` with a compare-and-set on `epoch` and on `head` itself, so a record
/// is never numbered by the database (no `bigserial`, whose numbers can commit out of order).
enum PostgresSchema {
    static let channel = "sluice_journal"

    static let statements: [PostgresQuery] = [
        """
        CREATE TABLE IF NOT EXISTS sluice_streams (
            store_id text PRIMARY KEY,
            head bigint NOT NULL DEFAULT 0,
            epoch bigint NOT NULL DEFAULT 0,
            lease_until timestamptz NOT NULL DEFAULT '-infinity',
            writer text NOT NULL DEFAULT ''
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS sluice_records (
            store_id text NOT NULL,
            seq bigint NOT NULL,
            epoch bigint NOT NULL,
            checksum bigint NOT NULL,
            payload bytea NOT NULL,
            PRIMARY KEY (store_id, seq)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS sluice_snapshots (
            store_id text NOT NULL,
            seq bigint NOT NULL,
            reducer_version bigint NOT NULL,
            checksum bigint NOT NULL,
            payload bytea NOT NULL,
            PRIMARY KEY (store_id, seq)
        )
        """,
    ]

    /// Creates the tables; two processes racing to create them both succeed (the loser sees a unique violation
    /// on the catalog, retried once). Each statement fails when the connection closes or after `timeout` (see
    /// `PostgresConnection.waitUnlessClosed(for:timeout:)`).
    static func create(on connection: PostgresConnection, timeout: Duration, logger: Logger) throws {
        for statement in statements {
            do {
                _ = try connection.waitUnlessClosed(for: connection.query(statement, logger: logger), timeout: timeout)
            } catch {
                _ = try connection.waitUnlessClosed(for: connection.query(statement, logger: logger), timeout: timeout)
            }
        }
    }
}

/// Connecting: the endpoints are tried in order and the first that answers as wanted is used.
enum PostgresLink {
    static let logger = Logger(label: "sluice.postgres")
    private static let ids = NSLock()
    nonisolated(unsafe) private static var nextID = 0

    static func nextConnectionID() -> Int {
        ids.lock()
        defer { ids.unlock() }
        nextID += 1
        return nextID
    }

    static func connectionConfiguration(
        _ endpoint: PostgresEndpoint,
        username: String,
        password: String?,
        database: String
    ) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: endpoint.host,
            port: endpoint.port,
            username: username,
            password: password,
            database: database,
            tls: .disable
        )
        configuration.options.connectTimeout = .seconds(2)
        return configuration
    }

    /// Connects to the first endpoint that is a primary (or, with `primaryOnly == false`, that answers); the
    /// question whether it is one fails when the connection closes, or after `statementTimeout`.
    static func connect(
        _ endpoints: [PostgresEndpoint],
        username: String,
        password: String?,
        database: String,
        primaryOnly: Bool,
        statementTimeout: Duration
    ) throws(PostgresJournalError) -> PostgresConnection {
        var lastError = "no endpoint"
        for endpoint in endpoints {
            do {
                let connection = try PostgresConnection.connect(
                    on: PostgresConnection.defaultEventLoopGroup.next(),
                    configuration: connectionConfiguration(
                        endpoint,
                        username: username,
                        password: password,
                        database: database
                    ),
                    id: nextConnectionID(),
                    logger: logger
                ).wait()
                if !primaryOnly { return connection }
                let inRecovery: Bool
                do {
                    inRecovery =
                        try connection.waitUnlessClosed(
                            for: connection.query("SELECT pg_is_in_recovery()", logger: logger),
                            timeout: statementTimeout
                        ).first?.decode(Bool.self) ?? true
                } catch {
                    try? connection.close().wait()
                    throw error
                }
                if !inRecovery { return connection }
                lastError = "\(endpoint) is in recovery (a standby)"
                try? connection.close().wait()
            } catch {
                lastError = "\(endpoint): \(String(reflecting: error))"
            }
        }
        throw .noServer(endpoints: endpoints.map(\.description), lastError: lastError)
    }

    /// The async form, for followers and the lease keeper.
    static func connectAsync(
        _ endpoints: [PostgresEndpoint],
        username: String,
        password: String?,
        database: String,
        primaryOnly: Bool
    ) async throws -> PostgresConnection {
        var lastError = "no endpoint"
        for endpoint in endpoints {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: connectionConfiguration(
                        endpoint,
                        username: username,
                        password: password,
                        database: database
                    ),
                    id: nextConnectionID(),
                    logger: logger
                )
                if !primaryOnly { return connection }
                let inRecovery: Bool
                do {
                    // Not awaited directly: a connection that closes now would hold a query for ever.
                    inRecovery = try await connection.unlessClosed {
                        try await connection.abandoningOnCancel {
                            var inRecovery = true
                            let rows = try await connection.query("SELECT pg_is_in_recovery()", logger: logger)
                            for try await value in rows.decode(Bool.self) { inRecovery = value }
                            return inRecovery
                        }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                if !inRecovery { return connection }
                lastError = "\(endpoint) is in recovery (a standby)"
                try? await connection.close()
            } catch {
                lastError = "\(endpoint): \(String(reflecting: error))"
            }
        }
        throw PostgresJournalError.noServer(endpoints: endpoints.map(\.description), lastError: lastError)
    }
}

/// Reads a bigint column that holds an unsigned value.
extension UInt64 {
    init(column value: Int64) {
        self = UInt64(bitPattern: value)
    }
}
