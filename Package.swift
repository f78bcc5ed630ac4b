// swift-tools-version:6.2
// No package dependencies, by design: only the Swift toolchain and the system SQLite library.
// Each target lists exactly the modules it imports; arrows point down only (README, Layout).
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

// GoTrue and AuthEmulator compile file by file in release builds instead of as whole modules.
// Whole-module optimization runs the SIL optimizer on one thread, and GoTrue alone kept one core
// busy for about 58 s while the other idled; in batches both cores share it, and the cold release
// build of the product drops from about 100 s to about 71 s on two cores (docs/tests.md, "Build
// and test time"). The modules every request runs through (AuthHTTP, AuthJSON, AuthStore, AuthJWT,
// AuthCrypto, AuthScenarios' middleware) keep whole-module optimization; instructions per request
// against the whole-module build: health +2.8 %, GET /user +1.0 %, refresh +0.2 %.
// These are unsafe flags: SwiftPM accepts them in a dependency pinned by version only from tools
// version 6.2 on, hence the tools version above (Tests/python/test_package_manifest.py).
let batched: [SwiftSetting] = strict + [
    .unsafeFlags(["-no-whole-module-optimization", "-enable-batch-mode"], .when(configuration: .release)),
]

// AuthTOML and AuthTemplate are not optimized, in release either. No request `bench/cost.sh`
// measures runs them: the TOML reader runs once at start, the template engine once per email or
// SMS sent. Optimizing them cost about 14 s of CPU, and AuthTemplate (whole-module, one core) is
// one of the last modules GoTrue waits for; unoptimized, the cold release build is about 7 s
// shorter (median of five alternating builds, 80.0 -> 72.8 s). What it costs at run time
// (bench/template, docs/tests.md): a built-in email body renders in about 22 µs instead of 2.4 µs;
// a custom template, parsed once and kept (MailTemplates.parsed), in about 80 µs instead of 12 µs;
// start-up with a config.toml is unchanged (about 15 ms).
let unoptimized: [SwiftSetting] = strict + [.unsafeFlags(["-Onone"], .when(configuration: .release))]

let package = Package(
    name: "supabase-auth-emulator",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "auth-emulator", targets: ["auth-emulator"]),
        .library(name: "AuthEmulator", targets: ["AuthEmulator"]),
        // For an app's test targets only: it links XCTest and Swift Testing.
        .library(name: "AuthEmulatorTesting", targets: ["AuthEmulatorTesting"]),
    ],
    targets: [
        // System SQLite (libsqlite3-dev on Debian/Ubuntu; part of the SDK on macOS).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Hardware SHA-256 (x86 SHA-NI / ARMv8 SHA2) behind runtime detection, the Montgomery
        // bignum core and the OS's secure random source, so AuthCrypto imports no platform module.
        .target(name: "CAuthCrypto"),
        // <sys/epoll.h>, <sys/eventfd.h> and accept4, which the Glibc module leaves out (Linux
        // only), and the hooks' HTTP(S) call through libcurl, loaded with dlopen on first use.
        .target(name: "CAuthPlatform", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // The pthread locks, per-thread values, processor count and byte scans that AuthHTTP,
        // AuthStore, AuthJSON and GoTrue share.
        .target(name: "AuthPlatform", swiftSettings: strict),
        // Go's formats the server reproduces byte for byte (strconv's quoting, ParseBool and
        // shortest float digits, time.ParseDuration and the civil calendar, strings.TrimSpace and
        // Trim, html.EscapeString, utf8 decoding): one home each, below every module that needs one.
        // Optimized: the JSON writer and the RFC 3339 and HTTP dates call into it.
        .target(name: "GoFormats", swiftSettings: strict),
        .target(name: "AuthCrypto", dependencies: ["CAuthCrypto", "GoFormats"], swiftSettings: strict),
        // Go-compatible JSON value, parser and writer: request/response bodies and JWT claims.
        .target(name: "AuthJSON", dependencies: ["AuthPlatform", "GoFormats"], swiftSettings: strict),
        .target(name: "AuthJWT", dependencies: ["AuthJSON", "AuthCrypto"], swiftSettings: strict),
        // Go's text/template and html/template, as GoTrue renders email templates with them.
        .target(name: "AuthTemplate", dependencies: ["AuthJSON", "GoFormats"], swiftSettings: unoptimized),
        .target(name: "AuthHTTP", dependencies: ["AuthPlatform", "CAuthPlatform", "GoFormats"], swiftSettings: strict),
        .target(name: "AuthStore", dependencies: ["CSQLite", "AuthPlatform", "CAuthPlatform", "GoFormats"], swiftSettings: strict),
        // The `supabase/config.toml` reader. A module of its own, imported only by AuthEmulator,
        // so its fuzz target builds without the API, and it compiles beside the modules above.
        .target(name: "AuthTOML", swiftSettings: unoptimized),
        // The binary and JSON formats of GoTrue's less travelled sign-in methods: WebAuthn's CBOR,
        // COSE keys, authenticator and client data; the TOTP enrolment's QR code; the OAuth
        // providers' profile APIs. Unoptimized: a passkey, MFA enrolment or OAuth callback reads
        // them once, and no request bench/cost.sh measures runs them. GoTrue's optimized compile
        // is most of the cold build: alone, 54-63 s (100-124 s of CPU) with them, 45 s (85 s of
        // CPU) without; this module takes about 4 s of CPU.
        .target(name: "AuthFormats", dependencies: ["AuthJSON", "AuthCrypto", "GoFormats"], swiftSettings: unoptimized),
        .target(
            name: "GoTrue",
            dependencies: ["AuthFormats", "AuthHTTP", "AuthStore", "AuthJSON", "AuthJWT", "AuthCrypto", "AuthPlatform", "AuthTemplate", "GoFormats"],
            swiftSettings: batched
        ),
        // What the real server has no counterpart for: the dashboard, the fake identity providers,
        // the software wallet and authenticator, fixtures, and the outbox, clock and test-token
        // routes. It plugs into GoTrue's seams (extension routes, project extensions, the
        // identity-provider seam); GoTrue never imports it. Built unoptimized: no request
        // bench/cost.sh measures runs it.
        .target(
            name: "EmulatorTools",
            dependencies: ["AuthFormats", "GoTrue", "AuthHTTP", "AuthStore", "AuthJSON", "AuthJWT", "AuthCrypto", "AuthPlatform", "GoFormats"],
            swiftSettings: unoptimized
        ),
        .target(name: "AuthScenarios", dependencies: ["GoTrue", "AuthHTTP", "AuthJSON", "AuthCrypto", "AuthPlatform"], swiftSettings: strict),
        // Scenario documents and the control routes that load them: the validating parser and
        // /emulator/v1/scenarios and /journal. Unoptimized: they run when a scenario is loaded or
        // the journal read, never on a request a scenario plays back; the middleware that sees
        // every request stays in AuthScenarios, optimized. AuthScenarios compiles after GoTrue
        // with the other core mostly idle: alone, 7-11 s with the parser, 4-5 s without it
        // (ScenarioControl: about 1 s).
        .target(
            name: "ScenarioControl", dependencies: ["AuthScenarios", "GoTrue", "AuthHTTP", "AuthJSON", "AuthPlatform"],
            swiftSettings: unoptimized
        ),
        // Reading the configuration: environment variables, config.toml, setting syntax, the
        // emulator's options, the generated settings reference; and the file and exposure rules
        // the readers share with the assembly. Unoptimized: all of it runs at start or when a
        // setting changes (the access log, which writes a line per request, lives in
        // AuthScenarios beside the journal whose facts it prints). It compiles after GoTrue and
        // AuthScenarios with the other core mostly idle: optimized, it kept the cold release build about
        // 6 s longer (alternating builds, 67.7-69.6 s against 60.6-65.3 s).
        .target(
            name: "EmulatorConfiguration",
            dependencies: [
                "AuthScenarios", "GoTrue", "AuthHTTP", "AuthJSON", "AuthJWT", "AuthCrypto", "AuthTOML", "AuthPlatform", "AuthTemplate", "CAuthPlatform",
                "GoFormats",
            ],
            swiftSettings: unoptimized
        ),
        .target(
            name: "AuthEmulator",
            dependencies: [
                "EmulatorConfiguration", "ScenarioControl", "AuthScenarios", "EmulatorTools", "GoTrue", "AuthHTTP", "AuthStore", "AuthJSON",
                "AuthJWT", "AuthCrypto", "CAuthPlatform", "GoFormats",
            ],
            swiftSettings: batched
        ),
        // The Swift Testing trait and the XCTest helpers that give each test an emulator of its own.
        // Testing and XCTest come with the toolchain; each file compiles only where its framework exists.
        .target(
            name: "AuthEmulatorTesting", dependencies: ["AuthEmulator", "EmulatorConfiguration", "EmulatorTools", "GoTrue", "AuthPlatform"],
            swiftSettings: strict
        ),
        // The CLI: subcommands, flags, the console's text.
        .executableTarget(
            name: "auth-emulator",
            dependencies: [
                "AuthEmulator", "EmulatorConfiguration", "EmulatorTools", "ScenarioControl", "AuthScenarios", "GoTrue", "AuthStore", "AuthJSON",
                "AuthJWT", "AuthCrypto", "AuthPlatform",
            ],
            swiftSettings: unoptimized
        ),
        // Benchmark driver for bench/pbkdf2; not a product.
        .executableTarget(
            name: "auth-crypto-bench",
            dependencies: ["AuthCrypto"],
            path: "bench/auth-crypto-bench",
            swiftSettings: strict
        ),
        // Email template rendering (bench/README.md); not a product.
        .executableTarget(
            name: "auth-template-bench",
            dependencies: ["AuthTemplate", "AuthJSON"],
            path: "bench/template",
            swiftSettings: strict
        ),
        // Start-up and isolation costs of embedded emulators (bench/README.md); not a product.
        .executableTarget(name: "auth-embedding-bench", dependencies: ["AuthEmulator"], path: "bench/embedding", swiftSettings: strict),

        // Shared by the test targets that cross-check against Python; never part of a product.
        .target(name: "PythonTestSupport", path: "Tests/Support/PythonTestSupport", swiftSettings: strict),
        // Go's encoding/json error texts and a seeded generator, shared by the parser's, the
        // writers' and the request bodies' tests.
        .target(name: "GoJSONFixtures", path: "Tests/Support/GoJSONFixtures", swiftSettings: strict),
        // A throw-away Postgres cluster (initdb into /tmp, Unix socket only) for the store's tests
        // and for the GoTrue suite's Postgres pass; never part of a product.
        .target(name: "PostgresTestSupport", dependencies: ["AuthStore"], path: "Tests/Support/PostgresTestSupport", swiftSettings: strict),
        // Shared by the test targets that serve requests: a hand-moved clock, an in-process
        // GoTrue harness with request helpers, and a loopback client; never part of a product.
        .target(
            name: "AuthTestSupport",
            dependencies: ["GoTrue", "EmulatorTools", "AuthHTTP", "AuthStore", "AuthJSON", "AuthJWT", "AuthCrypto", "PostgresTestSupport"],
            path: "Tests/Support/AuthTestSupport",
            swiftSettings: strict
        ),
        // Fuzz targets (Tests/Fuzz/README.md). Built normally they replay a corpus directory
        // (`fuzz-json Tests/Fuzz/corpus/json`); Tests/Fuzz/run.sh builds them with
        // -sanitize=fuzzer,address -DFUZZING into .build-fuzz, where libFuzzer drives them.
        .target(name: "CFuzzDriver", path: "Tests/Fuzz/CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"], path: "Tests/Fuzz/Support", swiftSettings: strict),
        .executableTarget(
            name: "fuzz-http", dependencies: ["AuthHTTP", "FuzzSupport"], path: "Tests/Fuzz/HTTPParser",
            swiftSettings: strict
        ),
        .executableTarget(name: "fuzz-json", dependencies: ["AuthJSON", "FuzzSupport"], path: "Tests/Fuzz/JSON", swiftSettings: strict),
        .executableTarget(name: "fuzz-toml", dependencies: ["AuthTOML", "FuzzSupport"], path: "Tests/Fuzz/TOML", swiftSettings: strict),
        .executableTarget(
            name: "fuzz-template", dependencies: ["AuthTemplate", "AuthJSON", "FuzzSupport"], path: "Tests/Fuzz/Template",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-jwt", dependencies: ["AuthJWT", "AuthJSON", "AuthCrypto", "FuzzSupport"], path: "Tests/Fuzz/JWT",
            swiftSettings: strict
        ),

        .testTarget(name: "GoFormatsTests", dependencies: ["GoFormats"], swiftSettings: strict),
        .testTarget(name: "AuthCryptoTests", dependencies: ["AuthCrypto", "PythonTestSupport"], swiftSettings: strict),
        .testTarget(name: "AuthJSONTests", dependencies: ["AuthJSON", "AuthPlatform", "GoJSONFixtures"], swiftSettings: strict),
        .testTarget(
            name: "AuthJWTTests",
            dependencies: ["AuthJWT", "AuthJSON", "AuthCrypto", "PythonTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "AuthTemplateTests", dependencies: ["AuthTemplate", "AuthJSON"], swiftSettings: strict),
        .testTarget(name: "AuthHTTPTests", dependencies: ["AuthHTTP", "AuthPlatform", "AuthTestSupport"], swiftSettings: strict),
        .testTarget(name: "AuthStoreTests", dependencies: ["AuthStore", "AuthCrypto", "CSQLite", "PostgresTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "GoTrueTests",
            dependencies: [
                "GoTrue", "EmulatorTools", "AuthFormats", "AuthHTTP", "AuthStore", "AuthJSON", "AuthJWT", "AuthCrypto", "AuthTemplate",
                "AuthPlatform", "AuthTestSupport", "GoJSONFixtures", "GoFormats",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AuthScenariosTests",
            dependencies: [
                "ScenarioControl", "AuthScenarios", "EmulatorTools", "GoTrue", "AuthHTTP", "AuthStore", "AuthJSON", "AuthJWT", "AuthCrypto",
                "AuthTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AuthEmulatorTestingTests",
            dependencies: ["AuthEmulatorTesting", "EmulatorTools", "GoTrue", "AuthTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "AuthEmulatorTests",
            dependencies: [
                "AuthEmulator", "auth-emulator", "EmulatorConfiguration", "AuthScenarios", "EmulatorTools", "GoTrue", "AuthHTTP", "AuthStore",
                "AuthJSON", "AuthJWT", "AuthCrypto", "AuthTOML", "AuthPlatform", "AuthTestSupport",
            ],
            swiftSettings: strict
        ),
    ]
)
