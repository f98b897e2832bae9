// swift-tools-version: 6.1
import PackageDescription

// Benchmarks of Amber against plain baselines, kept out of the main package's build and tests.
let package = Package(
    name: "AmberBenchmarks",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    dependencies: [
        .package(name: "Amber", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .target(name: "HeapStatistics"),
        // The results file both executables write (`--results FILE`), read by scripts/write-readme.
        .target(name: "BenchmarkResults"),
        .executableTarget(
            name: "compare",
            dependencies: [
                "BenchmarkResults",
                "HeapStatistics",
                .product(name: "Amber", package: "Amber"),
                .product(name: "AmberSQLite", package: "Amber"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Load on the sync server: initial sync, push throughput, propagation, fan-out, crashes.
        .executableTarget(
            name: "sync",
            dependencies: [
                "BenchmarkResults",
                "HeapStatistics",
                .product(name: "Amber", package: "Amber"),
                .product(name: "AmberSQLite", package: "Amber"),
                .product(name: "AmberSync", package: "Amber"),
                .product(name: "AmberSyncServer", package: "Amber"),
                .product(name: "AmberSyncPostgres", package: "Amber"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
