import Amber

/// Which attachments a ``SyncClient`` fetches after a pull brings records that name them.
///
/// ```swift
/// sync.attachmentDownloads = .when { $0.size < 5_000_000 || $0.mediaType.hasPrefix("image/") }
/// ```
///
/// An attachment left out is fetched when the app asks for it, with ``SyncClient/data(for:)``
/// or ``SyncClient/fileURL(for:)``.
public enum AttachmentDownloadPolicy: Sendable {
    /// Every attachment, as part of each sync (the default).
    case all
    /// None: each is fetched when the app asks for it.
    case onDemand
    /// Those the closure accepts, judged by size, media type or name; the others on demand.
    case when(@Sendable (Attachment) -> Bool)

    /// Whether a sync fetches `attachment`.
    func fetches(_ attachment: Attachment) -> Bool {
        switch self {
        case .all: true
        case .onDemand: false
        case .when(let decide): decide(attachment)
        }
    }
}
