// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Amber",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    products: [
        .library(name: "Amber", targets: ["Amber"]),
        .library(name: "AmberSQLite", targets: ["AmberSQLite"]),
        .library(name: "AmberSync", targets: ["AmberSync"]),
        .library(name: "AmberSyncServer", targets: ["AmberSyncServer"]),
        .library(name: "AmberSyncPostgres", targets: ["AmberSyncPostgres"]),
        .executable(name: "amber-sync", targets: ["amber-sync"]),
        .executable(name: "notes", targets: ["notes"]),
        .executable(name: "cookies", targets: ["cookies"]),
    ],
    dependencies: [
        // Checked: the macro builds and the macro and model tests pass with 600.0.1, 602.0.0 and 603.0.1.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"604.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // The sync server only, but for the client's HTTP on Linux (AmberSync's dependencies): an
        // app on Apple platforms that depends on AmberSync builds none of these.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Sign-in with the app's own JWTs: verification in the sync server only.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        // gzip answers of the sync server.
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        // Documentation only: `swift package generate-documentation`.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .macro(
            name: "AmberMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // The one lock type of the package (`LockedValue`), for the store and the server alike.
        .target(name: "AmberLock"),
        // `sync_file_range`, which Swift's Glibc module leaves out: attachment files are handed to
        // the disk as they are written, so that the flush that keeps them has little to wait for.
        .target(name: "AmberFileFlush"),
        .target(
            name: "Amber",
            dependencies: [
                "AmberLock",
                "AmberMacros",
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
            ]
        ),
        // Statements of many rows bound through SQLite's C API (the store's upserts, the sync
        // server's record writes).
        .target(
            name: "AmberSQLiteStatement",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, which GRDB is built on.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "AmberSQLite",
            dependencies: [
                "Amber",
                "AmberLock",
                "AmberSQLiteStatement",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The wire types of sync, shared by client and server; Foundation only.
        .target(name: "AmberSyncProtocol"),
        .target(
            name: "AmberSync",
            dependencies: [
                "Amber",
                "AmberLock",
                "AmberFileFlush",
                "AmberSQLite",
                "AmberSyncProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                // Attachments: SHA-256 of their bytes (CryptoKit on Apple platforms).
                .product(name: "Crypto", package: "swift-crypto"),
                // HTTP on Linux, where FoundationNetworking's URLSession keeps a core busy while a
                // request moves (CONTRIBUTING); Apple platforms build none of these.
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(
                    name: "NIOHTTPCompression", package: "swift-nio-extras", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(
            name: "AmberSyncServer",
            dependencies: [
                "AmberFileFlush",
                "AmberLock",
                "AmberSyncProtocol",
                "AmberSQLiteStatement",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        // The PostgreSQL backend of the sync server, for several server processes on one database.
        .target(
            name: "AmberSyncPostgres",
            dependencies: [
                "AmberLock",
                "AmberSyncServer",
                "AmberSyncProtocol",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "amber-sync",
            dependencies: [
                "AmberSyncServer",
                "AmberSyncPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "notes",
            dependencies: [
                "Amber",
                "AmberLock",
                "AmberSQLite",
                "AmberSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
            ]
        ),
        .executableTarget(
            name: "amber-sqlite-writer",
            dependencies: ["Amber", "AmberSQLite"]
        ),
        .executableTarget(
            name: "cookies",
            dependencies: ["Amber"]
        ),
        .target(
            name: "AmberTestSupport",
            dependencies: ["AmberLock"],
            path: "Tests/AmberTestSupport"
        ),
        // The sync server's backends for tests: SQLite, and PostgreSQL on a throwaway cluster; the
        // in-process transport that hands a client's requests to the server's router.
        .target(
            name: "AmberSyncTestSupport",
            dependencies: [
                "AmberLock",
                "AmberSync",
                "AmberSyncServer",
                "AmberSyncPostgres",
                "AmberTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Tests/AmberSyncTestSupport"
        ),
        .testTarget(
            name: "AmberTests",
            dependencies: [
                "Amber",
                "AmberLock",
                "AmberSQLite",
                "AmberTestSupport",
                .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "AmberMacrosTests",
            dependencies: [
                "AmberMacros",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ),
        // Models in a module built like a new Xcode 26 app target: main-actor isolation by default,
        // and the "approachable concurrency" features.
        .testTarget(
            name: "AmberDefaultIsolationTests",
            dependencies: ["Amber", "AmberSQLite", "AmberSync", "AmberSyncServer"],
            swiftSettings: [
                .defaultIsolation(MainActor.self),
                .enableUpcomingFeature("InferIsolatedConformances"),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
            ]
        ),
        .testTarget(
            name: "AmberSQLiteTests",
            dependencies: [
                "Amber",
                "AmberSQLite",
                "AmberSQLiteStatement",
                "amber-sqlite-writer",
                "AmberTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "AmberSyncServerTests",
            dependencies: [
                "AmberLock",
                "AmberSyncServer",
                "AmberSyncPostgres",
                "AmberSyncProtocol",
                "AmberSyncTestSupport",
                "AmberTestSupport",
                "amber-sync",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "AmberSyncTests",
            dependencies: [
                "Amber",
                "AmberLock",
                "AmberSQLite",
                "AmberSync",
                "AmberSyncServer",
                "AmberSyncPostgres",
                "AmberSyncProtocol",
                "AmberSyncTestSupport",
                "AmberTestSupport",
                "amber-sync",
                "amber-sqlite-writer",
                "notes",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "NotesTests",
            dependencies: ["notes", "cookies", "amber-sync", "AmberLock", "AmberTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
