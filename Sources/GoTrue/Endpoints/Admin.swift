import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats

/// The admin API (reference §12; `internal/api/admin.go`, `audit.go`): service_role (or any
/// `GOTRUE_JWT_ADMIN_ROLES` role) only. Every route first runs `requireAdminCredentials`; the
/// `{user_id}` routes then load the user (`loadUser`) and the factor routes the factor
/// (`loadFactor`), with the real server's 404s.
package struct AdminEndpoints: EndpointGroup {
    let api: Core

    package init(api: Core) { self.api = api }

    /// api.go's `/admin` group: `r.Use(api.requireAdminCredentials)` for every route below it.
    /// `loadUser` and `loadFactor` of `/admin/users/{user_id}` stay in the handlers, which use
    /// the records they load.
    static let admin: [RouteGuard] = [.requireAdminCredentials]

    package static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/admin/audit", operation: "admin.audit", guards: admin) { g, context in try g.audit(context) },
            Endpoint("GET", "/admin/users", operation: "admin.users.list", guards: admin) { g, context in try g.list(context) },
            Endpoint("POST", "/admin/users", operation: "admin.users.create",
                     guards: admin) { g, context in try g.create(context) },
            Endpoint("GET", "/admin/users/{user_id}", operation: "admin.users.get",
                     guards: admin) { g, context in try g.get(context) },
            Endpoint("PUT", "/admin/users/{user_id}", operation: "admin.users.update",
                     guards: admin) { g, context in try g.update(context) },
            Endpoint("DELETE", "/admin/users/{user_id}", operation: "admin.users.delete",
                     guards: admin) { g, context in try g.delete(context) },
            Endpoint("GET", "/admin/users/{user_id}/factors", operation: "admin.users.factors.list",
                     guards: admin) { g, context in
                try g.listFactors(context)
            },
            Endpoint("PUT", "/admin/users/{user_id}/factors/{factor_id}", operation: "admin.users.factors.update",
                     guards: admin) { g, context in
                try g.updateFactor(context)
            },
            Endpoint("DELETE", "/admin/users/{user_id}/factors/{factor_id}", operation: "admin.users.factors.delete",
                     guards: admin) { g, context in
                try g.deleteFactor(context)
            },
            Endpoint("POST", "/admin/generate_link", operation: "admin.generate_link",
                     guards: admin) { g, context in try g.generateLink(context) },
        ]
    }

    var project: Project { api.project }
    var config: Configuration { api.snapshot.configuration }

    // MARK: Loading

    /// `loadUser`: the path's user id must parse as a UUID, and the user must exist (any audience).
    func loadUser(_ context: RequestContext) throws(AuthError) -> UserRecord {
        guard let id = AdminEndpoints.canonicalUUID(context.pathParameters["user_id"] ?? "") else {
            throw AuthError(404, .validationFailed, "user_id must be an UUID")
        }
        guard let user = try api.read({ conn in try conn.user(id: id) }) else {
            throw AuthError(404, .userNotFound, "User not found")
        }
        return user
    }

    /// `loadFactor`: a UUID naming one of the user's own factors.
    private func loadFactor(_ context: RequestContext, user: UserRecord) throws(AuthError) -> FactorRecord {
        guard let id = AdminEndpoints.canonicalUUID(context.pathParameters["factor_id"] ?? "") else {
            throw AuthError(404, .validationFailed, "factor_id must be an UUID")
        }
        guard let factor = try api.read({ conn in try conn.factor(id: id, userID: user.id) }) else {
            throw AuthError(404, .mfaFactorNotFound, "Factor not found")
        }
        return factor
    }

    /// `uuid.FromString` (gofrs): the canonical 36-character form, 32 bare hex digits, or either
    /// in braces or behind `urn:uuid:`; returned lowercase and hyphenated.
    package static func canonicalUUID(_ text: String) -> String? {
        var s = Substring(text)
        if s.lowercased().hasPrefix("urn:uuid:") { s = s.dropFirst(9) }
        if s.hasPrefix("{") && s.hasSuffix("}") && s.count > 2 { s = s.dropFirst().dropLast() }
        let lowered = s.lowercased()
        if lowered.utf8.count == 36, UUIDText.isValid(lowered) { return lowered }
        let bytes = Array(lowered.utf8)
        guard bytes.count == 32, bytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        var out = bytes
        for position in [20, 16, 12, 8] { out.insert(UInt8(ascii: "-"), at: position) }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: JSON

    func userJSON(_ user: UserRecord, identities: [IdentityRecord]?, factors: [FactorRecord]) -> JSON {
        Models.user(user, identities: identities, factors: factors)
    }

    // MARK: GET /admin/users

    func list(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.adminCaller(context)
        let aud = api.requestAudience(context, claims: caller.claims)
        // `sort`: only created_at, default descending; the first value decides the order.
        var ascending = false
        let sorts = context.request.query.filter { $0.name == "sort" }.map(\.value)
        for (index, value) in sorts.enumerated() {
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            let field = String(parts[0])
            guard field == "created_at" else {
                throw AuthError(400, .validationFailed, "Bad Sort Parameters: bad field for sort '\(field)'")
            }
            var fieldAscending = false
            if parts.count > 1 {
                switch parts[1].uppercased() {
                case "ASC": fieldAscending = true
                case "DESC": fieldAscending = false
                default:
                    throw AuthError(400, .validationFailed,
                                    "Bad Sort Parameters: bad direction for sort '\(parts[1])', only 'asc' and 'desc' allowed")
                }
            }
            if index == 0 { ascending = fieldAscending }
        }
        let filter = context.request.queryValue("filter") ?? ""
        let pagination = try AdminPagination(context.request)
        let page = try api.read { conn in
            try conn.users(aud: aud, filter: filter, ascending: ascending, paging: pagination.paging)
        }
        let headers = try pagination.headers(context, total: page.total)
        // The listing does not load identities or factors: `identities` is null, as Go's nil slice.
        // Written straight to bytes, as `GET /user` is: a page holds up to a thousand users.
        var writer = JSONByteWriter(reservingCapacity: 1024 * max(1, page.items.count))
        writer.beginObject()
        writer.key("users")
        writer.beginArray()
        for user in page.items { Models.writeUser(user, identities: nil, factors: [], to: &writer) }
        writer.endArray()
        writer.member("aud", aud)
        writer.endObject()
        return .json(writer: writer, headers: headers)
    }

    // MARK: GET /admin/users/{user_id}

    func get(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let user = try loadUser(context)
        let (identities, factors) = try api.read { conn in (try conn.identities(userID: user.id), try conn.factors(userID: user.id)) }
        return .json(userJSON(user, identities: identities, factors: factors))
    }

    // MARK: Parameters

    /// `AdminUserParams`.
    struct UserParams {
        var id = ""
        var aud = ""
        var role = ""
        var email = ""
        var phone = ""
        var password: String?
        var passwordHash = ""
        var emailConfirm = false
        var phoneConfirm = false
        var userMetadata: JSONObject?
        var appMetadata: JSONObject?
        var banDuration = ""

        init(_ request: HTTPRequest) throws(AuthError) {
            let body = try RequestBody(request, as: "AdminUserParams")
            id = try body.string("id") ?? ""
            aud = try body.string("aud") ?? ""
            role = try body.string("role") ?? ""
            email = try body.string("email") ?? ""
            phone = try body.string("phone") ?? ""
            password = try body.string("password")
            passwordHash = try body.string("password_hash") ?? ""
            emailConfirm = try body.bool("email_confirm") ?? false
            phoneConfirm = try body.bool("phone_confirm") ?? false
            userMetadata = try body.map("user_metadata")
            appMetadata = try body.map("app_metadata")
            banDuration = try body.string("ban_duration") ?? ""
        }

        /// `ban_duration`: nil when absent, 0 for `none` (unban), else Go's duration in
        /// nanoseconds.
        func ban() throws(AuthError) -> Int64? {
            guard !banDuration.isEmpty else { return nil }
            if banDuration == "none" { return 0 }
            switch GoTime.parseDuration(banDuration) {
            case .success(let nanoseconds): return nanoseconds
            case .failure(let error):
                throw AuthError(400, .validationFailed, "invalid format for ban duration: \(error.message)")
            }
        }
    }

    /// `User.Ban`: a zero duration lifts the ban; any other bans until now plus the duration
    /// ("1ns" too: the time is kept in microseconds, as Postgres keeps it).
    func applyBan(_ nanoseconds: Int64, to user: inout UserRecord, now: Timestamp) {
        user.bannedUntil = nanoseconds == 0 ? nil : now.microseconds + nanoseconds / 1_000
    }

    /// `User.Confirm`: email confirmed now, confirmation token cleared, `email_verified` in
    /// user_metadata, outstanding one-time tokens dropped.
    func confirmEmail(_ conn: Connection, _ user: inout UserRecord, now: Timestamp) throws {
        user.confirmationToken = nil
        user.emailConfirmedAt = now.microseconds
        user.userMetadata = Models.merge(["email_verified": true], into: user.userMetadata)
        try OneTimeTokens.clearAll(conn, userID: user.id)
    }

    /// `User.ConfirmPhone`.
    func confirmPhone(_ conn: Connection, _ user: inout UserRecord, now: Timestamp) throws {
        user.confirmationToken = nil
        user.phoneConfirmedAt = now.microseconds
        try OneTimeTokens.clearAll(conn, userID: user.id)
    }

    /// The password hash the user will get: a stored hash after checking its format, else the
    /// given or a random password hashed here, outside any database lock.
    private func storedHash(_ params: UserParams) throws(AuthError) -> String {
        if !params.passwordHash.isEmpty {
            do {
                try AdminEndpoints.checkImportedHash(params.passwordHash)
            } catch {
                // The real server logs the internal error behind its 500; so does the emulator.
                if let reason = AdminEndpoints.goBcryptCostError(params.passwordHash), error.status == 500 {
                    logError("POST /admin/users: password_hash refused: \(reason)")
                }
                throw error
            }
            return params.passwordHash
        }
        let password = params.password.flatMap { $0.isEmpty ? nil : $0 } ?? randomPassword()
        // GoTrue hashes with bcrypt through a panic-on-error helper (`must` in crypto/utils.go),
        // so a password over bcrypt's 72 bytes ends in a recovered panic, a 500 "Internal Server
        // Error", never in the 400 branch adminUserCreate has for bcrypt.ErrPasswordTooLong. The
        // real server logs the panic's reason; so does the emulator.
        if password.utf8.count > Passwords.maximumLength {
            logError("POST /admin/users: bcrypt: password length exceeds \(Passwords.maximumLength) bytes (GoTrue panics here: 500)")
            throw AuthError.internalServerError
        }
        return Passwords(configuration: config, environment: project.environment).hash(password)
    }

    /// `NewUserWithPasswordHash`'s format check (reference §13). Argon2 (`$argon2`) and Firebase
    /// scrypt (`$fbscrypt`) hashes are parsed as `ParseArgon2Hash` and `ParseFirebaseScryptHash`
    /// parse them, and whatever `bcrypt.Cost` accepts is stored as given, as there; all three
    /// sign in. This emulator's own PBKDF2 PHC strings are accepted when its verifier would check
    /// them (a cost of at most 10,000,000, so an imported hash cannot make a sign-in burn minutes
    /// of CPU), else a 400 naming the limits. Any other hash, and one of those two formats that
    /// does not parse, is the real server's 500 "Error creating user" (the reason is logged).
    package static func checkImportedHash(_ hash: String) throws(AuthError) {
        if let problem = ImportedPasswordHashes.problem(hash) {
            logError("POST /admin/users: password_hash: \(problem)")
            throw AuthError(500, .unexpectedFailure, "Error creating user")
        }
        if hash.hasPrefix(ImportedPasswordHashes.argon2Prefix) || hash.hasPrefix(ImportedPasswordHashes.firebaseScryptPrefix) { return }
        if hash.hasPrefix("$pbkdf2-sha256$") {
            if PasswordHasher.isWellFormed(hash) { return }
            throw AuthError(400, .validationFailed,
                            "Invalid $pbkdf2-sha256$ password hash: the emulator accepts i=1 to \(PasswordHasher.maximumIterations), "
                                + "l=16 to 64, a salt of 8 to 64 bytes, unpadded base64")
        }
        if goBcryptCostError(hash) != nil { throw AuthError(500, .unexpectedFailure, "Error creating user") }
    }

    /// What golang.org/x/crypto/bcrypt's `Cost` (`newFromHash`, `decodeVersion`, `decodeCost`)
    /// says of a hash: nil when it accepts it, else its error text. It reads only the prefix:
    /// at least 59 bytes, `$`, a major version byte not above `2`, an optional minor byte,
    /// then two characters `strconv.Atoi` reads as a cost in 4...31.
    package static func goBcryptCostError(_ hash: String) -> String? {
        let bytes = Array(hash.utf8)
        guard bytes.count >= 59 else { return "crypto/bcrypt: hashedSecret too short to be a bcrypt password" }
        guard bytes[0] == UInt8(ascii: "$") else {
            return "crypto/bcrypt: bcrypt hashes must start with '$', but hashedSecret started with '\(Character(Unicode.Scalar(bytes[0])))'"
        }
        guard bytes[1] <= UInt8(ascii: "2") else {
            return "crypto/bcrypt: bcrypt algorithm version '\(Character(Unicode.Scalar(bytes[1])))' requested is newer than current version '2'"
        }
        let costStart = bytes[2] == UInt8(ascii: "$") ? 3 : 4
        let text = String(decoding: bytes[costStart..<(costStart + 2)], as: UTF8.self)
        // strconv.Atoi takes an optional sign and decimal digits only.
        var digits = Substring(text)
        var negative = false
        if let sign = digits.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let magnitude = Int(digits) else {
            return "strconv.Atoi: parsing \"\(text)\": invalid syntax"
        }
        let cost = negative ? -magnitude : magnitude
        guard (Bcrypt.minimumCost...Bcrypt.maximumCost).contains(cost) else {
            return "crypto/bcrypt: cost \(cost) is outside allowed inclusive range \(Bcrypt.minimumCost)..\(Bcrypt.maximumCost)"
        }
        return nil
    }

    /// `password.Generate(64, 10, symbols, false, true)`: 64 characters with 10 digits, `symbols`
    /// of go-password's symbols (1 for `generate_link`'s new magic-link user, 0 for the admin
    /// create), letters of both cases; never shown to anyone, it only makes the account
    /// password-less in practice.
    func randomPassword(symbols: Int = 0) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        let digits = Array("0123456789".utf8)
        let symbolSet = Array("~!@#$%^&*()_+`-={}|[]\\:\"<>?,./".utf8)
        let bytes = project.environment.randomBytes(64)
        var out = bytes.enumerated().map { index, byte in
            index < 10 ? digits[Int(byte) % digits.count]
                : index < 10 + symbols ? symbolSet[Int(byte) % symbolSet.count] : letters[Int(byte) % letters.count]
        }
        // Spread the digits with a Fisher-Yates pass over fresh randomness.
        let shuffle = project.environment.randomBytes(64)
        for i in stride(from: out.count - 1, to: 0, by: -1) {
            out.swapAt(i, Int(shuffle[i]) % (i + 1))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `structs.Map(provider.Claims{...})` for the email/phone identities the admin API creates:
    /// `email`/`phone` only when set, both `*_verified` flags always.
    package static func identityData(userID: String, email: String? = nil, phone: String? = nil,
                             emailVerified: Bool = false, phoneVerified: Bool = false) -> JSONObject {
        var data: JSONObject = ["sub": .string(userID)]
        if let email, !email.isEmpty { data["email"] = .string(email.lowercased()) }
        if let phone, !phone.isEmpty { data["phone"] = .string(phone) }
        data["email_verified"] = .bool(emailVerified)
        data["phone_verified"] = .bool(phoneVerified)
        return data
    }

    /// Audit traits naming the target user, as the admin handlers write them.
    static func traits(_ user: UserRecord) -> JSONObject {
        ["user_id": .string(user.id), "user_email": .string(user.email ?? ""), "user_phone": .string(user.phone ?? "")]
    }

    // MARK: POST /admin/users

    func create(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.adminCaller(context)
        var params = try UserParams(context.request)
        var aud = api.requestAudience(context, claims: caller.claims)
        if !params.aud.isEmpty { aud = params.aud }
        if params.email.isEmpty && params.phone.isEmpty {
            throw AuthError(400, .validationFailed, "Cannot create a user without either an email or phone")
        }
        var providers: [String] = []
        if !params.email.isEmpty {
            params.email = try Validation.email(params.email)
            let email = params.email
            if try api.read({ conn in try api.isDuplicatedEmail(conn, email, aud: aud) }) {
                throw AuthError.duplicateEmail
            }
            providers.append("email")
        }
        if !params.phone.isEmpty {
            params.phone = try Validation.phone(params.phone)
            let phone = params.phone
            if try api.read({ conn in try conn.userExists(phone: phone, aud: aud, excluding: nil) }) {
                throw AuthError(422, .phoneExists, "Phone number already registered by another user")
            }
            providers.append("phone")
        }
        if params.password != nil && !params.passwordHash.isEmpty {
            throw AuthError(400, .validationFailed, "Only a password or a password hash should be provided")
        }
        // No strength check on create (the real server has none here). Hashing happens now,
        // before the write lock.
        let hash = try storedHash(params)
        var userID = project.environment.uuid()
        if !params.id.isEmpty {
            guard let custom = AdminEndpoints.canonicalUUID(params.id) else {
                throw AuthError(400, .validationFailed, "ID must conform to the uuid v4 format")
            }
            if custom == Validation.nilUUID { throw AuthError(400, .validationFailed, "ID cannot be a nil uuid") }
            userID = custom
        }
        let ban = try params.ban()
        let now = project.environment.now()

        let (user, identities) = try api.write { [params, userID, aud, providers] conn in
            // admin.go answers any failure of the transaction with this 500 (a custom id already
            // taken, a race on the email or phone, an app trigger that raises).
            let failure = "Database error creating new user"
            return try AuthError.whenDatabaseFails(failure, rewrapping: true) {
                var user = UserRecord(id: userID, createdAt: now.microseconds)
                user.aud = aud
                user.email = params.email.isEmpty ? nil : params.email
                user.phone = params.phone.isEmpty ? nil : params.phone
                user.encryptedPassword = hash
                user.userMetadata = Models.text(params.userMetadata ?? JSONObject())
                user.appMetadata = Models.text(["provider": .string(providers[0]), "providers": .array(providers.map { .string($0) })])
                _ = try AuthError.whenDatabaseFails(failure, writing: user) { try conn.insertUser(user) }
                // The email identity first, then the phone's, as adminUserCreate makes them.
                let identityData = [
                    user.email.map { ("email", AdminEndpoints.identityData(userID: user.id, email: $0)) },
                    user.phone.map { ("phone", AdminEndpoints.identityData(userID: user.id, phone: $0)) },
                ].compactMap { $0 }
                var identities: [IdentityRecord] = []
                for (provider, data) in identityData {
                    let identity = IdentityRecord(id: project.environment.uuid(), providerID: user.id, userID: user.id,
                                                  identityData: Models.text(data), provider: provider, at: now.microseconds)
                    try conn.insertIdentity(identity)
                    identities.append(identity)
                }
                var traits = AdminEndpoints.traits(user)
                traits["provider"] = .string(providers[0])
                try api.audit(conn, context, actor: caller.actor, action: .userSignedUp, traits: traits)
                // `SetRole` trims what a non-empty `role` gives: white space alone is "".
                user.role = params.role.isEmpty ? config.jwt.defaultGroupName : GoStrings.trimSpace(params.role)
                if let appMetadata = params.appMetadata { user.appMetadata = Models.merge(appMetadata, into: user.appMetadata) }
                if params.emailConfirm { try confirmEmail(conn, &user, now: now) }
                if params.phoneConfirm { try confirmPhone(conn, &user, now: now) }
                if let ban { applyBan(ban, to: &user, now: now) }
                try conn.updateUser(user)
                return (user, identities)
            }
        }
        // The response is the in-memory user, as Go's: no database-generated `confirmed_at`.
        return .json(userJSON(user, identities: identities, factors: []))
    }

    // MARK: PUT /admin/users/{user_id}

    func update(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.adminCaller(context)
        let loaded = try loadUser(context)
        var params = try UserParams(context.request)
        if !params.email.isEmpty { params.email = try Validation.email(params.email) }
        if !params.phone.isEmpty { params.phone = try Validation.phone(params.phone) }
        let ban = try params.ban()
        var newHash: String?
        if let password = params.password {
            // The strength check applies here, unlike on create; "" removes the password.
            try Passwords(configuration: config, environment: project.environment).checkStrength(password)
            newHash = password.isEmpty ? "" : Passwords(configuration: config, environment: project.environment).hash(password)
        }
        let now = project.environment.now()

        let (updated, identities, factors) = try api.write { [params, newHash] conn in
            var user = loaded
            // GoTrue answers the user its middleware loaded, identities and factors eager-loaded,
            // as changed in memory: `confirmed_at` (a generated column) as it was, the identities
            // it updated with their old data, the ones it made appended.
            var shownIdentities: [IdentityRecord] = []
            var shownFactors: [FactorRecord] = []
            do {
                user = try conn.user(id: loaded.id) ?? loaded
                shownIdentities = try conn.identities(userID: user.id)
                shownFactors = try conn.factors(userID: user.id)
                if !params.role.isEmpty { user.role = GoStrings.trimSpace(params.role) }
                if params.emailConfirm { try confirmEmail(conn, &user, now: now) }
                if params.phoneConfirm { try confirmPhone(conn, &user, now: now) }
                let addingFirstPassword = !(newHash ?? "").isEmpty && (user.encryptedPassword ?? "").isEmpty
                if let newHash {
                    // `UpdatePassword`: pending tokens are no longer trusted; every session ends.
                    user.encryptedPassword = newHash.isEmpty ? nil : newHash
                    user.forgetPendingTokens()
                    try OneTimeTokens.clearAll(conn, userID: user.id)
                    try conn.deleteSessions(userID: user.id)
                }
                if !params.email.isEmpty {
                    try setContact(conn, &user, provider: "email", to: params.email, confirmed: params.emailConfirm, now: now)
                }
                if !params.phone.isEmpty {
                    try setContact(conn, &user, provider: "phone", to: params.phone, confirmed: params.phoneConfirm, now: now)
                }
                if addingFirstPassword { try api.ensureEmailIdentityForPassword(conn, &user) }
                if let appMetadata = params.appMetadata { user.appMetadata = Models.merge(appMetadata, into: user.appMetadata) }
                if let userMetadata = params.userMetadata { user.userMetadata = Models.merge(userMetadata, into: user.userMetadata) }
                if let ban { applyBan(ban, to: &user, now: now) }
                // pop stamps `updated_at` with each column update adminUserUpdate makes; a body
                // that asks for no change leaves it as it was (only the audit entry is written).
                let asksForChange = !params.role.isEmpty || params.emailConfirm || params.phoneConfirm || newHash != nil
                    || !params.email.isEmpty || !params.phone.isEmpty || params.appMetadata != nil || params.userMetadata != nil
                    || ban != nil
                if asksForChange { user.updatedAt = now.microseconds }
                try conn.updateUser(user)
                try api.audit(conn, context, actor: caller.actor, action: .userModified,
                              traits: AdminEndpoints.traits(user))
            } catch let error as AuthError {
                throw error
            } catch {
                // Anything else inside the transaction (an email or phone another account holds
                // among them) is GoTrue's "Error updating user"; throwing rolls the partial
                // changes back.
                throw AuthError.userWriteFailure("Error updating user", error, user: user)
            }
            let shown = Set(shownIdentities.map(\.id))
            shownIdentities += try conn.identities(userID: user.id).filter { !shown.contains($0.id) }
            return (user, shownIdentities, shownFactors)
        }
        return .json(userJSON(updated, identities: identities, factors: factors))
    }

    /// A new email address or phone number (`provider` "email" or "phone") as `adminUserUpdate`
    /// sets either: the provider's identity updated with it and its `*_verified` flag, or created
    /// (unlike the user-facing update, the admin API does not list a newly created provider in
    /// `app_metadata.providers`); a confirmed one makes an anonymous user permanent.
    private func setContact(_ conn: Connection, _ user: inout UserRecord, provider: String, to value: String,
                            confirmed: Bool, now: Timestamp) throws {
        let isEmail = provider == "email"
        let created = AdminEndpoints.identityData(userID: user.id, email: isEmail ? value : nil, phone: isEmail ? nil : value,
                                                  emailVerified: isEmail && confirmed, phoneVerified: !isEmail && confirmed)
        try api.upsertIdentity(conn, user: user, provider: provider,
                               changes: [provider: .string(value), provider + "_verified": .bool(confirmed)], created: created,
                               at: now.microseconds)
        if user.isAnonymous && confirmed { user.isAnonymous = false }
        user[keyPath: isEmail ? \UserRecord.email : \UserRecord.phone] = value
    }

    // MARK: DELETE /admin/users/{user_id}

    func delete(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.adminCaller(context)
        let user = try loadUser(context)
        // The body is optional; only a non-empty one is parsed.
        var softDelete = false
        if !context.request.jsonBody.isEmpty {
            softDelete = try RequestBody(context.request, as: "adminUserDeleteParams").bool("should_soft_delete") ?? false
        }
        let now = project.environment.now()
        try api.write { [softDelete] conn in
            try api.audit(conn, context, actor: caller.actor, action: .userDeleted,
                          traits: AdminEndpoints.traits(user))
            if softDelete {
                guard user.deletedAt == nil else { return }  // already soft-deleted
                try softDeleteUser(conn, user, now: now)
            } else {
                // An app foreign key to auth.users(id) without ON DELETE CASCADE refuses this.
                try AuthError.whenDatabaseFails("Database error deleting user") { try conn.deleteUser(id: user.id) }
            }
        }
        return .json(.object(JSONObject()))
    }

    /// `SoftDeleteUser` + `SoftDeleteUserIdentities` + factor, passkey and session removal:
    /// contact details replaced by hashes (so the address can sign up again), secrets and
    /// metadata cleared, `deleted_at` set.
    private func softDeleteUser(_ conn: Connection, _ stored: UserRecord, now: Timestamp) throws {
        var user = stored
        user.email = AdminEndpoints.obfuscate(user.id, user.email ?? "")
        user.phone = String(AdminEndpoints.obfuscate(user.id, user.phone ?? "").prefix(15))
        user.emailChange = AdminEndpoints.obfuscate(user.id, user.emailChange ?? "")
        user.phoneChange = String(AdminEndpoints.obfuscate(user.id, user.phoneChange ?? "").prefix(15))
        user.encryptedPassword = nil
        user.confirmationToken = nil
        user.recoveryToken = nil
        user.emailChangeTokenCurrent = nil
        user.emailChangeTokenNew = nil
        user.phoneChangeToken = nil
        user.deletedAt = now.microseconds
        user.userMetadata = "{}"
        user.appMetadata = "{}"
        user.updatedAt = now.microseconds
        try conn.updateUser(user)
        try OneTimeTokens.clearAll(conn, userID: user.id)
        try conn.deleteSessions(userID: user.id)
        for identity in try conn.identities(userID: user.id) {
            let providerID = AdminEndpoints.obfuscate(identity.userID, identity.provider + ":" + identity.providerID)
            try conn.setIdentityProviderID(id: identity.id, providerID: providerID, identityData: "{}", at: now.microseconds)
        }
        try conn.deleteFactors(userID: user.id)
        try conn.deleteWebAuthnCredentials(userID: user.id)
    }

    /// `obfuscateValue`: unpadded base64url of SHA-256(user id + value).
    static func obfuscate(_ userID: String, _ value: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array((userID + value).utf8)))
    }

    // MARK: Factors

    func listFactors(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let user = try loadUser(context)
        let factors = try api.read { conn in try conn.factors(userID: user.id) }
        return .json(.array(factors.map(Models.factor)))
    }

    func updateFactor(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.adminCaller(context)
        let user = try loadUser(context)
        let loaded = try loadFactor(context, user: user)
        let body = try RequestBody(context.request, as: "adminUserUpdateFactorParams")
        let friendlyName = try body.string("friendly_name") ?? ""
        let phone = try body.string("phone") ?? ""
        let now = project.environment.now()
        let factor: FactorRecord = try api.write { conn in
            var factor = loaded
            // `UpdateFriendlyName` and `UpdatePhone` each write their column and `updated_at`;
            // a body that asks for neither (or a phone for another kind of factor) writes nothing.
            let renames = !friendlyName.isEmpty
            let rephones = !phone.isEmpty && factor.factorType == "phone"
            if renames { factor.friendlyName = friendlyName }
            if rephones { factor.phone = try Validation.phone(phone) }
            if renames || rephones { factor.updatedAt = now.microseconds }
            do {
                if renames || rephones { try conn.updateFactor(factor) }
            } catch let error as StoreError where error.isUniqueViolation {
                // Another factor of the user already has this name (or phone). The real server
                // has no check here: Postgres's unique violation comes back from
                // `adminUserUpdateFactor` as a plain error, which `handleResponseErrorDefault`
                // answers with its generic 500 `unexpected_failure` and no `x-sb-error-code`.
                logError("database: \(error)")
                throw AuthError.unexpected
            }
            try api.audit(conn, context, actor: caller.actor, action: .factorUpdated,
                          traits: ["user_id": .string(user.id), "factor_id": .string(factor.id),
                                   "factor_type": .string(factor.factorType)])
            return factor
        }
        return .json(Models.factor(factor))
    }

    /// Deletes the factor and downgrades its sessions to aal1. The real server records this one
    /// with the user, not the admin, as the actor.
    func deleteFactor(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let user = try loadUser(context)
        let factor = try loadFactor(context, user: user)
        try api.write { conn in
            try api.audit(conn, context, actor: user, action: .factorDeleted,
                          traits: ["user_id": .string(user.id), "factor_id": .string(factor.id)], ipAddress: api.clientIP(context))
            try conn.deleteFactor(id: factor.id)
            try conn.downgradeSessions(of: factor)
        }
        return .json(Models.factor(factor))
    }

    // MARK: GET /admin/audit

    /// Query scopes of `query=<scope>:<value>` and the payload fields they search.
    static let auditScopes: [String: [String]] = [
        "author": ["actor_username", "actor_name"],
        "action": ["action"],
        "type": ["log_type"],
    ]

    func audit(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let pagination = try AdminPagination(context.request)
        var columns: [String] = []
        var value = ""
        if let query = context.request.queryValue("query"), !query.isEmpty {
            let parts = query.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let scope = AdminEndpoints.auditScopes[String(parts[0])] else {
                throw AuthError(400, .validationFailed, "Invalid query scope: \(query)")
            }
            columns = scope
            value = String(parts[1])
        }
        let page = try api.read { conn in try conn.auditLogEntries(columns: columns, value: value, paging: pagination.paging) }
        let headers = try pagination.headers(context, total: page.total)
        let entries: [JSON] = page.items.map { entry in
            // The payload is a Go map: keys sorted.
            [
                "id": .string(entry.id),
                "payload": .object(Models.object(entry.payload).sortedRecursively()),
                "created_at": .string(Timestamp(microseconds: entry.createdAt).rfc3339),
                "ip_address": .string(entry.ipAddress),
            ]
        }
        return .json(.array(entries), headers: headers)
    }
}
