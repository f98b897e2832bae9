import AmberSyncServer
import ArgumentParser
import Foundation

/// `amber-sync prune --older-than DAYS`: forgets old deletions.
struct Prune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Forget deleted records older than DAYS, and attachments no live record has named for DAYS; clients with older cursors then pull again from 0."
    )

    @Option(name: .customLong("older-than"), help: "Forget deletions older than this many days.")
    var days: Double

    @OptionGroup var options: DatabaseOptions

    func validate() throws {
        guard days >= 0, days.isFinite else {
            throw ValidationError("--older-than must be a number of days, 0 or more.")
        }
    }

    func run() async throws {
        let cutoff = Date().addingTimeInterval(-days * 86_400)
        let (count, attachments) = try await options.withDatabase { database in
            let count = try await database.prune(deletionsOlderThan: cutoff)
            let attachments = try await (database as? any AttachmentStorage)?.pruneAttachments(
                unreferencedSince: cutoff)
            return (count, attachments)
        }
        Output.line("forgot \(count) deleted record\(count == 1 ? "" : "s")")
        if let attachments, attachments > 0 {
            Output.line("removed \(attachments) unreferenced attachment\(attachments == 1 ? "" : "s")")
        }
    }
}
