// swift-tools-version:6.0
// An app's test target as an app would write it: the emulator comes in as a package, and only the
// test target links `AuthEmulatorTesting` (and through it XCTest and Swift Testing). An app would
// write `.package(url: "https://github.com/your-org/supabase-auth-emulator", from: "0.1.0")`;
// this copy uses the repository it lives in, so CI tests the code beside it.
import PackageDescription

let package = Package(
    name: "SwiftConsumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "supabase-auth-emulator", path: "../.."),
    ],
    targets: [
        .testTarget(
            name: "SwiftConsumerTests",
            dependencies: [.product(name: "AuthEmulatorTesting", package: "supabase-auth-emulator")],
            // Read from beside the tests by path (`seed:`), not bundled.
            exclude: ["Fixtures"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
