import AmberLock
import Crypto

/// The SHA-256 of uploads that a request left unfinished, as far as their bytes held go: the
/// request that continues one carries on from there instead of reading the held bytes again.
///
/// An entry names its upload by ``AttachmentUpload/heldBytesIdentity`` and counts the bytes it
/// has hashed, and is used only by a request that resumes the same upload at exactly that many
/// bytes; any other request reads the held bytes again, as without it. Each entry is used once.
/// At most ``capacity`` are kept, the oldest dropped first, so memory stays bounded whatever
/// clients do.
final class UploadHashes: Sendable {
    private struct Entry {
        var hasher: SHA256
        var bytes: Int64
        var stamp: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var stamp: UInt64 = 0
        var heldBytesRead: Int64 = 0
    }

    /// The most uploads remembered.
    static let capacity = 1_024

    private let state = LockedValue(State())

    /// The key of an upload: its user, hash and identity.
    static func key(user: SyncUser, hash: String, identity: String) -> String {
        "\(user.id) \(hash) \(identity)"
    }

    /// The hash of the upload's first `bytes` bytes, when a request left it there; the entry is
    /// removed either way.
    func take(_ key: String, at bytes: Int64) -> SHA256? {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: key), entry.bytes == bytes else { return nil }
            return entry.hasher
        }
    }

    /// Remembers the hash of the upload's first `bytes` bytes.
    func keep(_ key: String, hasher: SHA256, bytes: Int64) {
        state.withLock { state in
            state.stamp += 1
            state.entries[key] = Entry(hasher: hasher, bytes: bytes, stamp: state.stamp)
            if state.entries.count > Self.capacity,
                let oldest = state.entries.min(by: { $0.value.stamp < $1.value.stamp })?.key
            {
                state.entries.removeValue(forKey: oldest)
            }
        }
    }

    /// The uploads remembered.
    var count: Int { state.withLock { $0.entries.count } }

    /// Bytes of unfinished uploads read again to check a hash, since the server started.
    var heldBytesRead: Int64 { state.withLock { $0.heldBytesRead } }

    /// Counts bytes of an unfinished upload read again to check its hash.
    func countHeldBytesRead(_ count: Int) {
        state.withLock { $0.heldBytesRead += Int64(count) }
    }
}
