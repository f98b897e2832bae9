import Foundation
import JWTKit

/// One key a JWT may be signed with: its `kid`, and a verifier for each algorithm it takes.
struct VerificationKey: Sendable {
    /// The key's `kid`; `nil` for a key file without one.
    let kid: String?
    /// The algorithms the key takes (`RS256`, `ES256`, `EdDSA`, `HS256`, ...), each with its verifier.
    let algorithms: [String: any JWTAlgorithm]

    /// The algorithms the server verifies; anything else, `none` included, is refused.
    static let supportedAlgorithms: Set<String> = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
        "HS256", "HS384", "HS512",
    ]

    /// Keys for an HMAC secret: HS256, and HS384 and HS512 for a secret at least as long as
    /// their hash (48 and 64 bytes).
    static func hmac(secret: Data) async -> VerificationKey {
        let key = HMACKey(from: secret)
        var algorithms: [String: any JWTAlgorithm] = [:]
        for (name, digest, length) in [
            ("HS256", DigestAlgorithm.sha256, 32), ("HS384", .sha384, 48), ("HS512", .sha512, 64),
        ] where secret.count >= length {
            let collection = JWTKeyCollection()
            await collection.add(hmac: key, digestAlgorithm: digest)
            algorithms[name] = try? await collection.getKey()
        }
        return VerificationKey(kid: nil, algorithms: algorithms)
    }

    /// The key of a PEM public key: RSA (RS and PS algorithms), EC (by its curve) or Ed25519.
    static func pem(_ pem: String) async throws -> VerificationKey {
        let collection = JWTKeyCollection()
        var algorithms: [String: any JWTAlgorithm] = [:]
        if let rsa = try? Insecure.RSA.PublicKey(pem: pem) {
            for (suffix, digest) in [("256", DigestAlgorithm.sha256), ("384", .sha384), ("512", .sha512)] {
                await collection.add(rsa: rsa, digestAlgorithm: digest, kid: JWKIdentifier(string: "RS" + suffix))
                await collection.add(pss: rsa, digestAlgorithm: digest, kid: JWKIdentifier(string: "PS" + suffix))
            }
        } else if let key = try? ES256PublicKey(pem: pem) {
            await collection.add(ecdsa: key, kid: "ES256")
        } else if let key = try? ES384PublicKey(pem: pem) {
            await collection.add(ecdsa: key, kid: "ES384")
        } else if let key = try? ES512PublicKey(pem: pem) {
            await collection.add(ecdsa: key, kid: "ES512")
        } else if let key = try? EdDSA.PublicKey(pem: pem) {
            await collection.add(eddsa: key, kid: "EdDSA")
        } else {
            throw KeyError("it holds no RSA, EC or Ed25519 public key in PEM")
        }
        for name in supportedAlgorithms {
            if let algorithm = try? await collection.getKey(for: JWKIdentifier(string: name)),
                algorithm.name == name
            {
                algorithms[name] = algorithm
            }
        }
        return VerificationKey(kid: nil, algorithms: algorithms)
    }

    /// The keys of a JWKS document; keys that are not for signatures, or of a type the server
    /// does not verify, are left out and named in `skipped`.
    static func jwks(_ data: Data) async throws -> (keys: [VerificationKey], skipped: [String]) {
        guard let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let entries = document["keys"] as? [Any]
        else {
            throw KeyError("it is not a JWKS document (a JSON object with a \"keys\" array)")
        }
        var keys: [VerificationKey] = []
        var skipped: [String] = []
        for (index, entry) in entries.enumerated() {
            let kid = (entry as? [String: Any])?["kid"] as? String
            let name = kid.map { "kid \($0)" } ?? "key \(index)"
            guard let object = entry as? [String: Any], (object["use"] as? String ?? "sig") == "sig",
                let json = try? JSONSerialization.data(withJSONObject: object),
                let jwk = try? JSONDecoder().decode(JWK.self, from: json),
                let key = try? await Self.jwk(jwk)
            else {
                skipped.append(name)
                continue
            }
            keys.append(key)
        }
        return (keys, skipped)
    }

    /// The key of one JWK: the algorithm it names, or each algorithm its type and curve take.
    static func jwk(_ jwk: JWK) async throws -> VerificationKey {
        let candidates: [JWK.Algorithm]
        if let algorithm = jwk.algorithm {
            candidates = [algorithm]
        } else {
            switch jwk.keyType {
            case .rsa: candidates = [.rs256, .rs384, .rs512, .ps256, .ps384, .ps512]
            case .ecdsa:
                switch jwk.curve?.rawValue {
                case "P-256": candidates = [.es256]
                case "P-384": candidates = [.es384]
                case "P-521": candidates = [.es512]
                default: candidates = []
                }
            case .octetKeyPair: candidates = [.eddsa]
            default: candidates = []
            }
        }
        var algorithms: [String: any JWTAlgorithm] = [:]
        for candidate in candidates where supportedAlgorithms.contains(candidate.rawValue) {
            var copy = jwk
            copy.algorithm = candidate
            // The collection needs a kid to hold a JWK; the key's own kid is kept apart.
            copy.keyIdentifier = "key"
            let collection = JWTKeyCollection()
            guard (try? await collection.add(jwk: copy)) != nil,
                let algorithm = try? await collection.getKey(for: "key", alg: candidate.rawValue),
                algorithm.name == candidate.rawValue
            else { continue }
            algorithms[candidate.rawValue] = algorithm
        }
        guard !algorithms.isEmpty else { throw KeyError("no supported algorithm") }
        return VerificationKey(kid: jwk.keyIdentifier?.string, algorithms: algorithms)
    }
}

/// Why a key could not be read.
struct KeyError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
