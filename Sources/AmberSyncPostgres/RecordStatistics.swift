import AmberLock

/// Decides when this process brings PostgreSQL's statistics of the records table up to date.
///
/// A pull reads a user's records in version order through the index on `(user_id, version)`, a
/// page at a time, but only when the planner knows the user has many records: on a table not
/// analyzed since it grew, it estimates a few hundred and plans instead a scan of every record
/// after the cursor and a sort of them, for each page (measured: 45 ms a page instead of 1.5 ms
/// at 50,000 records, the sort spilling to a temporary file). Autovacuum analyzes a grown table
/// only on its next round, a minute later at best: just when a new device pulls an account that
/// another device has pushed. So a process that has written ``minimumWrites`` records, or as
/// many as the table held at its last analysis, since that analysis runs `ANALYZE` on it, in the
/// background, one at a time: the planner's count is then never below half the table, enough
/// to read pages through the index, and a first push of 100,000 records runs four analyses
/// (each costs the database a sample of up to 30,000 rows) where a tenth of the table ran nine,
/// competing with the push.
///
/// An analysis takes only the columns the pull's plan depends on (``analyzedColumns``): the row
/// count is taken whatever the columns, and sorting the sample of every text column (values,
/// field versions, ids) was two thirds of a whole analysis's cost (measured at 100,000 records
/// of about 200 bytes: 113 ms, against 36 ms for these two columns). Autovacuum's analyses
/// still cover every column.
package final class RecordStatistics: Sendable {
    /// The columns this process analyzes: those of the index a pull reads its pages through.
    package static let analyzedColumns = "user_id, version"

    private let state = LockedValue((written: 0, rows: 0, running: false, minimum: 10_000))

    package init() {}

    /// How many records written call for an analysis at least, whatever the table's size.
    package var minimumWrites: Int {
        get { state.withLock { $0.minimum } }
        set { state.withLock { $0.minimum = max(1, newValue) } }
    }

    /// Counts `count` records written; returns whether the caller should analyze the table now,
    /// and then report with ``analyzed(rows:)``.
    package func wrote(_ count: Int) -> Bool {
        state.withLock { state in
            state.written += count
            guard !state.running, state.written >= max(state.minimum, state.rows) else { return false }
            state.running = true
            state.written = 0
            return true
        }
    }

    /// Records the end of an analysis that found about `rows` records (`nil`: it failed).
    package func analyzed(rows: Int?) {
        state.withLock { state in
            state.running = false
            if let rows { state.rows = rows }
        }
    }
}
