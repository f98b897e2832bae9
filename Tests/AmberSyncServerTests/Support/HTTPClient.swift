import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real HTTP request over loopback, for tests of a listening server.
func httpRequest(
    _ url: URL, method: String = "GET", token: String? = nil, body: Data? = nil, timeout: TimeInterval = 30
) async throws -> (status: Int, body: Data) {
    var request = URLRequest(url: url, timeoutInterval: timeout)
    request.httpMethod = method
    request.httpBody = body
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
    return try await withCheckedThrowingContinuation { continuation in
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                continuation.resume(throwing: error)
            } else {
                continuation.resume(returning: ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
            }
        }.resume()
    }
}
