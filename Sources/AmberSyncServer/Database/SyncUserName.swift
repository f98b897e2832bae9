import Foundation

/// The rule for user names, shared by every backend.
package enum SyncUserName {
    /// Longest user name, in bytes of UTF-8.
    package static let maximumLength = 256

    /// Throws ``SyncServerError/invalidUserName(_:)`` unless `name` is 1 to 256 bytes with no control characters.
    package static func validate(_ name: String) throws {
        let isValid =
            !name.trimmingCharacters(in: .whitespaces).isEmpty
            && name.utf8.count <= maximumLength
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard isValid else { throw SyncServerError.invalidUserName(name) }
    }

    /// The name of the user of a JWT subject: `jwt`, the issuer and the subject, separated by tabs.
    ///
    /// A tab is a control character, which ``validate(_:)`` refuses in the names operators give,
    /// and which a verified token's issuer and subject never hold: so no operator's user and no
    /// other subject or issuer can have this name.
    package static func subject(_ subject: String, issuer: String) -> String {
        "jwt\t\(issuer)\t\(subject)"
    }
}
