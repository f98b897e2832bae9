// swift-tools-version: 6.1
import PackageDescription

// Benchmarks of Amber against plain baselines, kept out of the main package's build and tests.
let package = Package(
    name: "AmberBenchmarks",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10)],
    dependencies: [
        .package(name: "Amber", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(name: "HeapStatistics"),
        .executableTarget(
            name: "compare",
            dependencies: [
                "HeapStatistics",
                .product(name: "Amber", package: "Amber"),
                .product(name: "AmberSQLite", package: "Amber"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
