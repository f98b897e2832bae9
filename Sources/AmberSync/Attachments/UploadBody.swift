import Foundation

/// The body of an attachment's `PUT`: a range of its stored file.
///
/// On Linux the bytes are read from the file as the connection takes them (``AsyncHTTPExchange``),
/// so one request carries the whole file holding a MiB at a time; elsewhere `URLSession` is handed
/// the range read into memory.
struct UploadBody: Sendable {
    /// The stored file.
    let file: URL
    /// The bytes of it that the request carries.
    let range: Range<Int64>

    /// The range's bytes, read at once.
    ///
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when the file cannot be read or
    ///   ends before the range does.
    func read() throws(SyncError) -> Data {
        do {
            let input = try FileHandle(forReadingFrom: file)
            defer { try? input.close() }
            try input.seek(toOffset: UInt64(range.lowerBound))
            let data = try input.read(upToCount: Int(range.count)) ?? Data()
            guard data.count == range.count else { throw CocoaError(.fileReadCorruptFile) }
            return data
        } catch {
            throw Self.unreadable(file, range, error)
        }
    }

    /// The error for a range of `file` that could not be read.
    static func unreadable(_ file: URL, _ range: Range<Int64>, _ error: any Error) -> SyncError {
        SyncError(.storage, "cannot read bytes \(range) of \(file.path): \(error)", underlyingError: error)
    }
}
