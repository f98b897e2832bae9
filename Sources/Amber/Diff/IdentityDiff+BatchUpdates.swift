#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension IdentityDiff {
    /// The index paths a `UITableView` or `UICollectionView` needs to animate a diff in one section.
    ///
    /// Deletions, insertions and moves go in one batch update; reloads go after
    /// it, because a row cannot be moved and reloaded in the same batch.
    ///
    /// ```swift
    /// let updates = IdentityDiff(from: rows, to: latest).batchUpdates(inSection: 0)
    /// tableView.performBatchUpdates {
    ///     rows = latest   // the data source answers with the new rows from here on
    ///     tableView.deleteRows(at: updates.deletions, with: .automatic)
    ///     tableView.insertRows(at: updates.insertions, with: .automatic)
    ///     for move in updates.moves { tableView.moveRow(at: move.from, to: move.to) }
    /// }
    /// tableView.reloadRows(at: updates.reloads, with: .none)   // or reconfigureRows(at:)
    /// ```
    ///
    /// With a collection view, call `deleteItems(at:)`, `insertItems(at:)`,
    /// `moveItem(at:to:)` and then `reloadItems(at:)` (or `reconfigureItems(at:)`) the same way.
    public struct BatchUpdates: Sendable, Equatable {
        /// A row to move, from its index path before the update to its index path after it.
        ///
        /// ```swift
        /// tableView.moveRow(at: move.from, to: move.to)
        /// ```
        public struct Move: Sendable, Equatable {
            /// The row's index path before the update.
            public let from: IndexPath
            /// The row's index path after the update.
            public let to: IndexPath

            /// Creates a move from one index path before the update to one after it.
            ///
            /// ```swift
            /// let move = IdentityDiff.BatchUpdates.Move(from: [0, 2], to: [0, 0])
            /// ```
            ///
            /// - Parameters:
            ///   - from: The row's index path before the update.
            ///   - to: The row's index path after the update.
            public init(from: IndexPath, to: IndexPath) {
                self.from = from
                self.to = to
            }
        }

        /// Rows to delete, in index paths before the update (``IdentityDiff/removed``).
        ///
        /// ```swift
        /// tableView.deleteRows(at: updates.deletions, with: .automatic)
        /// ```
        public let deletions: [IndexPath]
        /// Rows to insert, in index paths after the update (``IdentityDiff/inserted``).
        ///
        /// ```swift
        /// tableView.insertRows(at: updates.insertions, with: .automatic)
        /// ```
        public let insertions: [IndexPath]
        /// Rows to move, from before the update to after it (``IdentityDiff/moved``).
        ///
        /// ```swift
        /// for move in updates.moves { tableView.moveRow(at: move.from, to: move.to) }
        /// ```
        public let moves: [Move]
        /// Rows to reload once the batch is done, in index paths after the update (``IdentityDiff/updated``).
        ///
        /// ```swift
        /// tableView.reloadRows(at: updates.reloads, with: .none)
        /// ```
        public let reloads: [IndexPath]
    }

    /// The diff as index paths in one section of a table or collection view.
    ///
    /// Each index path is `[section, offset]`, which UIKit reads as `section` and `row` (or `item`).
    ///
    /// ```swift
    /// let updates = diff.batchUpdates(inSection: 1)
    /// updates.deletions   // [[1, 3]] for diff.removed == [3]
    /// ```
    ///
    /// - Parameter section: The section the rows are in, both before and after the update.
    /// - Returns: Deletions, insertions, moves and reloads; see ``BatchUpdates`` for the order to perform them in.
    /// - Complexity: O(*r* + *i* + *m* + *u*), the sizes of ``removed``, ``inserted``, ``moved`` and ``updated``.
    public func batchUpdates(inSection section: Int = 0) -> BatchUpdates {
        func indexPath(_ offset: Int) -> IndexPath { [section, offset] }
        return BatchUpdates(
            deletions: removed.map(indexPath),
            insertions: inserted.map(indexPath),
            moves: moved.map { BatchUpdates.Move(from: indexPath($0.from), to: indexPath($0.to)) },
            reloads: updated.map(indexPath)
        )
    }
}
