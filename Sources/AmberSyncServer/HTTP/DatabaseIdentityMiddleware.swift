import AmberSyncProtocol
import HTTPTypes
import Hummingbird

/// Names the server's database on every answer (`Amber-Database-ID`), so that a client notices
/// when the database behind the server was replaced.
struct DatabaseIdentityMiddleware<Context: RequestContext>: RouterMiddleware {
    let database: any SyncDatabase

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        if let id = try? await database.databaseID(), let name = HTTPField.Name(SyncHeader.databaseID) {
            response.headers[name] = id
        }
        return response
    }
}
