import Amber
import AmberLock
import Foundation

/// Hands the transport its bearer token: the app's token provider, asked when a token is first
/// needed and again when the server refuses the one it gave.
final class SyncTokenSource: Sendable {
    /// The provider's last token; `nil` until one is needed.
    private let current = LockedValue<String?>(nil)
    private let provider: @Sendable () async throws -> String

    init(provider: @escaping @Sendable () async throws -> String) {
        self.provider = provider
    }

    /// The token to send: the last one the provider gave, or a new one.
    func token() async throws(SyncError) -> String {
        if let token = current.withLock({ $0 }) { return token }
        return try await fetch()
    }

    /// A token to send in place of `refused`, which the server answered 401 for; `nil` when the
    /// provider gives the same token again (a constant token: no fresh one to try).
    func token(replacing refused: String) async throws(SyncError) -> String? {
        // Another request may have fetched a fresh token since this one was sent.
        if let token = current.withLock({ $0 }), token != refused { return token }
        let fresh = try await fetch()
        return fresh == refused ? nil : fresh
    }

    private func fetch() async throws(SyncError) -> String {
        let token: String
        do {
            token = try await provider()
        } catch {
            throw SyncError(.unauthorized, "the app's token provider failed: \(error)", underlyingError: error)
        }
        current.withLock { $0 = token }
        return token
    }
}
