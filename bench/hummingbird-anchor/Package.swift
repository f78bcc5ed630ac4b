// swift-tools-version:6.2
// Reference server for bench/http.sh: the smallest idiomatic Hummingbird 2 application that
// honours the same command-line contract as `auth-emulator serve`. It is a yardstick only and
// is never a dependency of the product (which has no package dependencies at all).
import PackageDescription

let package = Package(
    name: "hummingbird-anchor",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hummingbird-anchor", targets: ["HummingbirdAnchor"]),
    ],
    dependencies: [
        // Pinned so numbers stay comparable between runs and machines.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "HummingbirdAnchor",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
