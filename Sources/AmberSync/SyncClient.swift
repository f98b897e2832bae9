import Amber
import AmberLock
import AmberSQLite
import AmberSyncProtocol
import Foundation
import GRDB

/// Syncs stores of one SQLite file with an `amber-sync` server: offline first, field by field,
/// nothing typed ever lost.
///
/// ```swift
/// let storage = try SQLiteStorage(path: "night.sqlite")
/// let notes = try IdentityStore<Note>(key: "notes", storage: storage)
/// let tags = try IdentityStore<Tag>(key: "tags", storage: storage)
///
/// let sync = try SyncClient(storage: storage, server: URL(string: "http://127.0.0.1:8080")!, token: token)
/// try sync.add(notes)            // synced as collection "notes" (the store's key)
/// try sync.add(tags)
/// let report = try await sync.sync()   // push what is pending, pull until caught up
/// sync.start()                         // or: keep syncing live in the background
/// await sync.stop()
/// ```
///
/// Writes never wait for the network. Every write to a synced store is recorded as pending in
/// the same SQLite transaction as the write itself, whichever process makes it (an app extension
/// that never creates a client included), so nothing acknowledged is missed, and pending changes
/// survive restarts and crashes. A push sent again after a crash carries the same mutation ids,
/// so the server never applies it twice.
///
/// A record changed both here and on the server since they last agreed is merged field by field
/// (`Value.merge(base:mine:theirs:)`, or the `resolve` given to ``add(_:resolve:)``), and the
/// fields both sides changed are listed in ``SyncReport/merged``. An edit wins over a deletion.
/// A client only ever sends the fields it changed, so a field that a newer app version added is
/// never erased by an older one.
///
/// What a sync brings into a store is one transaction of origin `StoreChange.Origin.sync`:
/// observers, `observable(id:)` values and open editors react as to any write. Sync runs off
/// the main actor.
public final class SyncClient: Sendable {
    /// The server's address.
    public let server: URL
    /// This client's id on the server, kept in the storage file.
    ///
    /// A sync takes a new one when the server finds another device using it (a copy of the file).
    public var clientID: String {
        (try? storage.database.read { try SyncSchema.meta($0, "clientID") }) ?? ""
    }
    let storage: SQLiteStorage
    let engine: SyncEngine
    let collections = LockedValue<[String: any SyncedCollection]>([:])
    let eventHub: EventHub
    let live = LockedValue<(task: Task<Void, Never>?, generation: Int)>((nil, 0))
    let attachmentPolicy = LockedValue<AttachmentDownloadPolicy>(.all)
    let transfers: AttachmentTransfers

    /// Creates a client for the stores of `storage`.
    ///
    /// - Parameters:
    ///   - storage: The file whose stores sync; its sync tables are created when absent.
    ///   - server: The server's address, such as `http://127.0.0.1:8080`.
    ///   - token: A bearer token from `amber-sync user add` or `amber-sync token add`.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when the file cannot be prepared.
    public convenience init(storage: SQLiteStorage, server: URL, token: String) throws {
        try self.init(storage: storage, server: server, tokenProvider: { token })
    }

    /// Creates a client that asks the app for its bearer token: a JWT of the app's own sign-in.
    ///
    /// The provider is called when a token is first needed, and again when the server refuses
    /// the last one (HTTP 401, such as for an expired JWT): return the app's current, refreshed
    /// token. When the server refuses the fresh token too, or the provider throws, sync fails
    /// with ``SyncError`` of kind ``SyncError/Kind/unauthorized``, and live sync stops until
    /// ``start()`` is called again. See <doc:SigningIn>.
    ///
    /// ```swift
    /// let sync = try SyncClient(storage: storage, server: server) {
    ///     try await session.validAccessToken()   // the app's sign-in SDK
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - storage: The file whose stores sync; its sync tables are created when absent.
    ///   - server: The server's address, such as `https://sync.example.com`.
    ///   - tokenProvider: Returns the bearer token to send; called off the main actor.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when the file cannot be prepared.
    public convenience init(
        storage: SQLiteStorage, server: URL, tokenProvider: @escaping @Sendable () async throws -> String
    ) throws {
        try self.init(storage: storage, transport: HTTPSyncTransport(server: server), tokenProvider: tokenProvider)
    }

    /// Creates a client that sends the protocol's requests through `transport`.
    ///
    /// Push and pull go through the transport, with the provider's bearer token as over HTTP;
    /// attachments travel over HTTP to the transport's ``SyncTransport/server`` address.
    ///
    /// - Parameters:
    ///   - storage: The file whose stores sync; its sync tables are created when absent.
    ///   - transport: Carries requests to the server: ``HTTPSyncTransport``, or one in the
    ///     server's process.
    ///   - tokenProvider: Returns the bearer token to send; called off the main actor.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/storage`` when the file cannot be prepared.
    package init(
        storage: SQLiteStorage, transport: any SyncTransport,
        tokenProvider: @escaping @Sendable () async throws -> String
    ) throws {
        let server = transport.server
        self.storage = storage
        self.server = server
        let clientID: String
        do {
            // An immediate transaction: the schema is read and changed with no other process
            // changing it in between (two processes opening a file of an earlier version).
            clientID = try storage.database.writeWithoutTransaction { db in
                var clientID = ""
                try db.inTransaction(.immediate) {
                    try SyncSchema.prepare(db)
                    clientID = try SyncSchema.clientID(db)
                    return .commit
                }
                return clientID
            }
        } catch {
            throw SyncError(.storage, "\(storage.path): \(error)", underlyingError: error)
        }
        let tokens = SyncTokenSource(provider: tokenProvider)
        let eventHub = EventHub()
        self.eventHub = eventHub
        let progress: @Sendable (SyncProgress) -> Void = { eventHub.emit(.progress($0)) }
        do {
            transfers = try AttachmentTransfers(
                storage: storage, server: server, tokens: tokens, policy: attachmentPolicy, progress: progress)
        } catch {
            throw SyncError(.storage, "\(storage.path): \(error)", underlyingError: error)
        }
        engine = SyncEngine(
            storage: storage,
            api: SyncAPI(transport: transport, tokens: tokens),
            clientID: clientID,
            collections: collections,
            progress: progress,
            attachments: transfers)
    }

    /// Syncs `store` as the collection named by its key, merging conflicts with `Value.merge`.
    ///
    /// The first time a key is added on a file, its existing records become pending (to push)
    /// and the next sync pulls the whole collection.
    ///
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/misuse`` when the store is not on this
    ///   client's storage file, or its key is not a valid collection name (`[A-Za-z0-9_.-]{1,64}`).
    public func add<Value>(_ store: IdentityStore<Value>) throws
    where Value: Codable & Mergeable & ImmutableModel, Value.ID: Codable {
        try add(store, key: nil) { base, mine, theirs in
            let merged = Value.merge(base: base ?? theirs, mine: mine, theirs: theirs)
            // With no common base every differing field is a conflict: the JSON comparison says which.
            return (merged.value, base == nil ? nil : merged.conflicts)
        }
    }

    /// Syncs `store` as the collection named by its key, resolving conflicts with `resolve`.
    ///
    /// - Parameters:
    ///   - store: A store opened on this client's storage file.
    ///   - resolve: Given the value both sides last agreed on (`nil` when they never did), the
    ///     local value and the server's, returns the value to keep. It runs off the main actor,
    ///     inside the store's write.
    /// - Throws: ``SyncError`` of kind ``SyncError/Kind/misuse`` when the store is not on this
    ///   client's storage file, or its key is not a valid collection name.
    public func add<Value>(
        _ store: IdentityStore<Value>,
        resolve: @escaping @Sendable (_ base: Value?, _ mine: Value, _ theirs: Value) -> Value
    ) throws where Value: Codable, Value.ID: Codable {
        try add(store, key: nil) { base, mine, theirs in (resolve(base, mine, theirs), nil) }
    }

    private func add<Value>(
        _ store: IdentityStore<Value>, key: String?, resolve: @escaping TypedCollection<Value>.Resolve
    ) throws where Value: Codable, Value.ID: Codable {
        guard let location = store.storageLocation, location.place == storage.path else {
            throw SyncError(.misuse, "the store is not on \(storage.path), this client's storage")
        }
        guard SyncLimits.isValidCollection(location.key) else {
            throw SyncError(
                .misuse, "the key \(location.key) is not a collection name sync accepts ([A-Za-z0-9_.-], 1 to 64)")
        }
        let collection = TypedCollection(store: store, key: location.key, resolve: resolve)
        do {
            _ = try storage.database.write { try SyncSchema.register($0, key: location.key) }
        } catch {
            throw SyncError(.storage, "\(storage.path): \(error)", underlyingError: error)
        }
        collections.withLock { $0[location.key] = collection }
    }

    /// Pushes what is pending, pulls until caught up, and pushes what merging made pending.
    ///
    /// - Returns: What was pushed, pulled and merged.
    /// - Throws: ``SyncError``: the server is unreachable (``SyncError/Kind/offline``), refused the
    ///   token, or answered with an error. Nothing local is lost; pending changes stay pending.
    @discardableResult
    public func sync() async throws -> SyncReport {
        eventHub.emit(.syncing)
        do {
            let report = try await engine.sync()
            eventHub.emit(.synced(report))
            return report
        } catch {
            eventHub.emit(error.kind == .offline ? .offline(reason: error.message) : .failed(reason: error.description))
            throw error
        }
    }

    /// Local changes not yet on the server.
    public var pendingCount: Int {
        let keys = collections.withLock { Array($0.keys) }
        guard !keys.isEmpty else { return 0 }
        return (try? storage.database.read { try SQLiteChangeLog.writtenCount($0, keys: keys) }) ?? 0
    }

    /// What the client is doing from now on, for a UI: syncing, synced, offline, failed.
    ///
    /// The stream ends when the consumer stops iterating.
    public func events() -> AsyncStream<SyncEvent> {
        eventHub.subscribe()
    }
}
