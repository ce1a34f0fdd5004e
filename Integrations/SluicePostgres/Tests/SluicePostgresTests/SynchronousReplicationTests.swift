import Testing

@testable import SluicePostgres

/// How many standbys a commit waits for, read from `synchronous_standby_names` as PostgreSQL reads it.
@Suite struct SynchronousReplicationTests {
    @Test(
        arguments: [
            ("standby1", 1),
            ("standby1, standby2", 1),
            ("*", 1),
            ("FIRST 2 (a, b, c)", 2),
            ("  first  3(a,b,c)", 3),
            ("ANY 2 (a, b, c)", 2),
            ("any 1 (\"my standby\")", 1),
            ("2 (a, b)", 2),
            ("\"2\"", 1),
            ("firstling", 1),
            ("anyone, other", 1),
        ]
    )
    func requiredStandbys(names: String, count: Int) {
        #expect(SynchronousReplication.requiredStandbys(in: names) == count)
    }
}
