import AmberSyncProtocol

/// Decodes request bodies exactly (``JSONReader``), turning every syntax or protocol error into a
/// `400` sentence that names the field.
enum JSONBody {
    /// Reads `bytes` as a `Value`: numbers keep their digits, strings and keys their bytes.
    ///
    /// - Throws: ``SyncServerError/invalidRequest(_:)`` naming the field or the syntax error.
    static func decode<Value: JSONWireDecodable>(_ type: Value.Type, from bytes: some Collection<UInt8>) throws
        -> Value
    {
        do {
            return try Value(jsonBytes: bytes)
        } catch {
            throw SyncServerError.invalidRequest(error.sentence(subject: "The request body"))
        }
    }
}
