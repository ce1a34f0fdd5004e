import PostgresNIO

/// Whether the primary's synchronous standbys hold the WAL up to a position: the check that turns a commit on the
/// primary into an acknowledgement.
///
/// `synchronous_standby_names` names how many standbys a commit waits for (`FIRST n (...)`, `ANY n (...)`, or one
/// for a plain list); those the primary currently waits for are in state `sync` (the `n` of highest priority) or
/// `quorum` (any `n` of them) in `pg_stat_replication`, whose write, flush and replay positions answer
/// `synchronous_commit`'s `remote_write`, `on` and `remote_apply`. The check counts the standbys in those states
/// whose position is at or past the target, as the primary counts them before it releases a waiting commit. With no
/// synchronous standby named, or `synchronous_commit` at `local` or `off`, a commit waits for no standby, and
/// neither does the check.
enum SynchronousReplication {
    /// The query: the setting, the commit level, the target position (the primary's flushed WAL position when
    /// `position` is `nil`) and how many waited-for standbys hold it.
    ///
    /// Without a position it runs the statement that ``prepare`` made on the connection: planning it on every
    /// append cost more than running it.
    static func check(after position: String?) -> PostgresQuery {
        guard let position else { return PostgresQuery(unsafeSQL: "EXECUTE \(preparedName)") }
        var bindings = PostgresBindings()
        bindings.append(position)
        return PostgresQuery(unsafeSQL: sql(target: "$1::text::pg_lsn"), binds: bindings)
    }

    /// Prepares the check against the primary's flushed position on a new connection.
    static var prepare: PostgresQuery {
        PostgresQuery(unsafeSQL: "PREPARE \(preparedName) AS " + sql(target: "pg_current_wal_flush_lsn()"))
    }

    private static let preparedName = "sluice_replication_check"

    private static func sql(target: String) -> String {
        """
        SELECT s.names, s.level, s.target::text,
            CASE WHEN s.names = '' OR s.level IN ('local', 'off') THEN 0 ELSE (
                SELECT count(*) FROM pg_stat_get_wal_senders() AS w
                WHERE w.sync_state IN ('sync', 'quorum') AND CASE s.level
                    WHEN 'remote_write' THEN w.write_lsn WHEN 'remote_apply' THEN w.replay_lsn ELSE w.flush_lsn
                END >= s.target
            ) END
        FROM (
            SELECT current_setting('synchronous_standby_names') AS names,
                current_setting('synchronous_commit') AS level, \(target) AS target
        ) AS s
        """
    }

    /// A row of ``check(after:)``.
    struct Answer {
        /// The target position, as PostgreSQL writes a `pg_lsn`.
        var position: String
        /// Whether as many standbys as the setting asks for hold `position` (or none is asked for).
        var isConfirmed: Bool

        init(_ result: PostgresQueryResult) throws {
            guard let row = result.first else {
                throw PostgresJournalError.database(operation: "checking replication", description: "no answer")
            }
            let (names, level, position, holding) = try row.decode((String, String, String, Int64).self)
            self.position = position
            isConfirmed =
                names.isEmpty || level == "local" || level == "off"
                || holding >= SynchronousReplication.requiredStandbys(in: names)
        }
    }

    /// How many standbys `synchronous_standby_names` makes a commit wait for: the `n` of `FIRST n (...)`,
    /// `ANY n (...)` or `n (...)`, otherwise one (a plain list, `*`).
    static func requiredStandbys(in names: String) -> Int {
        var rest = Substring(names).drop { $0.isWhitespace }
        for keyword in ["first", "any"] {
            let head = rest.prefix(keyword.count)
            let after = rest.dropFirst(keyword.count)
            if head.lowercased() == keyword, after.first?.isWhitespace == true {
                rest = after.drop { $0.isWhitespace }
                break
            }
        }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        let afterDigits = rest.dropFirst(digits.count).drop { $0.isWhitespace }
        guard let count = Int(digits), afterDigits.first == "(" else { return 1 }
        return count
    }
}
