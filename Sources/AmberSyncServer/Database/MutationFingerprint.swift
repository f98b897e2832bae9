import AmberSyncProtocol
import Crypto
import Foundation

/// What a pushed mutation was, kept with its answer: a retry sends the same mutation again, while
/// another device that shares the client id (a copied phone) sends a different one under the same id.
public enum MutationFingerprint {
    /// The SHA-256 of the mutation's canonical JSON (sorted keys), in lowercase hex.
    public static func of(_ mutation: Mutation) -> String {
        var writer = JSONWriter()
        return of(mutation, writingInto: &writer)
    }

    /// The fingerprint (``of(_:)``) of each of `mutations`, in order, each written into one buffer
    /// in turn rather than a new one for each.
    public static func ofEach(_ mutations: [Mutation]) -> [String] {
        var writer = JSONWriter(capacity: 1_024)
        return mutations.map { of($0, writingInto: &writer) }
    }

    private static func of(_ mutation: Mutation, writingInto writer: inout JSONWriter) -> String {
        writer.removeAll()
        mutation.write(to: &writer)
        var hash = SHA256()
        writer.bytes.withUnsafeBytes { hash.update(bufferPointer: $0) }
        let digest = hash.finalize()
        return digest.withUnsafeBytes { digest in
            String(unsafeUninitializedCapacity: SHA256.byteCount * 2) { hex in
                for (offset, byte) in digest.enumerated() {
                    hex[2 * offset] = hexDigits[Int(byte >> 4)]
                    hex[2 * offset + 1] = hexDigits[Int(byte & 0xF)]
                }
                return SHA256.byteCount * 2
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Checks a mutation whose id was answered before against what was answered.
    ///
    /// - Parameters:
    ///   - stored: The fingerprint kept with the answer; `nil` for answers kept before fingerprints were.
    ///   - fingerprint: The fingerprint of the mutation sent now.
    ///   - mutation: The mutation sent now.
    ///   - clientID: The client id it was sent under.
    /// - Throws: ``SyncServerError/clientIDReused(clientID:mutationID:)`` when they differ.
    public static func check(_ stored: String?, against fingerprint: String, of mutation: Mutation, clientID: String)
        throws
    {
        if let stored, stored != fingerprint {
            throw SyncServerError.clientIDReused(clientID: clientID, mutationID: mutation.mutationID)
        }
    }

    /// Checks a mutation whose id has no stored answer: it must be newer than every mutation the
    /// client sent before, since a client forgets nothing it has not been answered for.
    ///
    /// - Parameters:
    ///   - mutation: The mutation sent now.
    ///   - lastMutationID: The highest mutation id answered to this client id, if any.
    ///   - clientID: The client id it was sent under.
    /// - Throws: ``SyncServerError/clientIDReused(clientID:mutationID:)`` when it is not newer.
    public static func checkNew(_ mutation: Mutation, after lastMutationID: Int64?, clientID: String) throws {
        if let lastMutationID, mutation.mutationID <= lastMutationID {
            throw SyncServerError.clientIDReused(clientID: clientID, mutationID: mutation.mutationID)
        }
    }
}

/// The random tag of one push in a user's history (see ``SyncDatabase/historyTag(for:at:)``).
public enum HistoryTag {
    /// A new tag: 64 random bits in lowercase hex.
    public static func random() -> String {
        // Hex digits by hand: `String(format:)` goes through `NSString` on Linux.
        let digits = Array("0123456789abcdef".utf8)
        var bits = UInt64.random(in: .min ... .max)
        var hex = [UInt8](repeating: 0, count: 16)
        for index in stride(from: 15, through: 0, by: -1) {
            hex[index] = digits[Int(bits & 0xF)]
            bits >>= 4
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
