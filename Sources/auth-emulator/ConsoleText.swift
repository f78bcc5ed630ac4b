import AuthEmulator
import AuthJWT
import AuthStore
import EmulatorTools
import GoTrue

/// What `serve` tells the person at the console beyond the first banner lines: the signing key,
/// where settings came from, seeding progress and its summary, and what a stop did. Pure
/// functions of their inputs, so each message's wording is tested without a process.
enum ConsoleText {
    /// `200,000`: digits grouped in threes, whatever the locale, so lines read the same
    /// everywhere and tests can match them.
    static func count(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return number < 0 ? "-" + out : out
    }

    /// `11.3 s` under a minute, `2 min 5 s` above.
    static func duration(_ seconds: Double) -> String {
        let seconds = max(0, seconds)
        if seconds < 59.95 {
            let tenths = Int((seconds * 10).rounded())
            return "\(tenths / 10).\(tenths % 10) s"
        }
        let whole = Int(seconds.rounded())
        return "\(whole / 60) min \(whole % 60) s"
    }

    /// `users`, or `user` for one.
    static func users(_ number: Int) -> String {
        count(number) + (number == 1 ? " user" : " users")
    }

    // MARK: - the banner

    /// The `signing key:` line's value: `ES256 kid 1a2b...` for a key pair, `HS256 (shared
    /// secret)` for the JWT secret (with its kid when `GOTRUE_JWT_KEY_ID` or the JWK gives one).
    /// The kid is public (it is in every token's header and in the JWKS); no key material is shown.
    static func signingKey(_ jwt: JWTSettings) -> String {
        let key = jwt.signingKey
        let kid = key.kid.map { " kid \($0)" } ?? ""
        if key.isSymmetric { return "\(key.algorithm.rawValue)\(kid) (shared secret)" }
        if key.kid == JWTSettings.cliDefaultKeyID { return "\(key.algorithm.rawValue)\(kid) (the Supabase CLI's built-in key)" }
        return "\(key.algorithm.rawValue)\(kid)"
    }

    /// The `settings from:` line's value: the config file and the environment variables that
    /// were read, by name only (values may be secrets).
    static func settingsSources(configFile: String?, variables: [String]) -> String {
        var parts: [String] = []
        if let configFile { parts.append("--config \(configFile)") }
        if !variables.isEmpty { parts.append("env " + variables.joined(separator: ", ")) }
        return parts.isEmpty ? "flags and defaults only (no config file, no environment variables)" : parts.joined(separator: "; ")
    }

    // MARK: - seeding

    /// One reading of a seed's counters (`SeedProgress`).
    struct SeedState: Equatable {
        /// Users in the fixture; 0 while the file is still being read.
        var total = 0
        /// Entries with a password, and how many of those are hashed.
        var passwords = 0
        var hashed = 0
        var written = 0
    }

    /// The progress line redrawn on a terminal: the phase, the count, and with a `rate` (per
    /// second, nil while too early to tell) the time left at that rate. Hashing is shown until
    /// the writer starts, since it runs ahead of the writer and is most of the cost.
    static func seedProgress(_ state: SeedState, rate: Double?, file: String) -> String {
        guard state.total > 0 else { return "seeding: reading \(file)..." }
        let (what, done, of) = state.written > 0 || state.passwords == 0
            ? ("writing users", state.written, state.total)
            : ("hashing passwords", state.hashed, state.passwords)
        var line = "seeding: \(what) \(count(done)) of \(count(of)) (\(of > 0 ? done * 100 / of : 100) %"
        if let rate, rate > 0 {
            line += ", \(count(Int(rate.rounded())))/s, about \(duration(Double(max(0, of - done)) / rate)) left"
        }
        return line + ")"
    }

    /// The one line a finished seed leaves: `seeded 200,000 users in 11.3 s`.
    static func seedSummary(users number: Int, seconds: Double) -> String {
        "seeded \(users(number)) in \(duration(seconds))"
    }

    /// Redrawing a line in place: back to its start, the text, then erase what a longer
    /// previous line left to the right (ECMA-48 EL, `CSI K`).
    static func redraw(_ line: String) -> String { "\r" + line + "\u{1B}[K" }

    // MARK: - stopping

    /// The banner's database line: the SQLite path, or the Postgres database without its
    /// password, what the emulator did with GoTrue's schema and the role it writes as.
    static func database(_ options: EmulatorOptions, setup: PostgresSetup?) -> String {
        guard let setup else { return options.databasePath }
        let schema = setup.createdSchema ? "auth schema created" : "auth schema adopted"
        return "\(options.databaseDisplayName) (Postgres \(setup.session.serverVersion / 10000); \(schema); writing as \(setup.session.currentRole))"
    }

    /// The line a stop leaves: `stopping: 3 requests finished, 0 cut off, database checkpointed`.
    static func stopSummary(_ report: Emulator.StopReport) -> String {
        let finished = report.requests.finished
        let requests = finished == 1 ? "1 request" : "\(count(finished)) requests"
        return "stopping: \(requests) finished, \(count(report.requests.cutOff)) cut off, \(database(report.database))"
    }

    static func database(_ outcome: CloseOutcome) -> String {
        switch outcome {
        case .checkpointed: "database checkpointed"
        case .partial(let frames?): "database closed, \(count(frames)) WAL frames left for the next open (another process was reading)"
        case .partial(nil): "database closed, part of the WAL left for the next open (another process was reading)"
        case .failed(let code): "database closed, checkpoint failed (SQLite code \(code); the WAL is replayed at the next open)"
        case .inMemory: "in-memory database discarded"
        case .disconnected: "Postgres connections closed"
        case .alreadyClosed: "database already closed"
        }
    }
}
