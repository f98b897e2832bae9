import Crypto
import Foundation

/// Bearer tokens: how they are made and the only form in which a database keeps them.
///
/// A token is 32 random bytes from the system's secure generator, written as unpadded base64url
/// (43 characters). Databases store only ``hash(_:)`` of a token, so a copy of the database does
/// not hold a usable token.
///
/// ```swift
/// let token = AccessToken.generate()       // give this to the user once
/// let stored = AccessToken.hash(token)     // keep only this
/// ```
public enum AccessToken {
    /// Number of random bytes in a token.
    public static let byteCount = 32

    /// A new random token.
    ///
    /// It never starts with `-`, which a command line would take for an option
    /// (`notes sync --token $token`): such a draw is made again.
    ///
    /// - Returns: 32 random bytes as unpadded base64url.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let token = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            if !token.hasPrefix("-") { return token }
        }
    }

    /// The form a database stores a token in: its SHA-256 digest as lowercase hex.
    ///
    /// - Parameter token: The token as the client sends it.
    /// - Returns: 64 lowercase hexadecimal digits.
    public static func hash(_ token: String) -> String {
        let hexDigits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Data(token.utf8)) {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
