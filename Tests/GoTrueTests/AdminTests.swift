import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §1.3 (requireAdminCredentials), §12 and §13
// (internal/api/admin.go, middleware.go, audit.go, pagination.go, models/user.go).

/// "correct-horse-1" as a cost-10 `$2a$` bcrypt hash (computed with libxcrypt's crypt(3); the
/// same fixture as BcryptTests and the Python client tests).
let bcryptFixture = "$2a$10$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki"
/// A Firebase scrypt hash of "imported-secret-1" (n=10 keeps it quick in debug builds; Firebase
/// itself uses n=14), computed with Python's hashlib.scrypt and OpenSSL's AES-256-CTR.
let firebaseScryptFixture = "$fbscrypt$v=1,n=10,r=8,p=1,ss=Bw==,sk=KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZw==$nzphwtTltgcYKTpL$u5Dz43Qv5XhRLu6avAJbHNwiG1mBXjTTZXym8C9NwUC55QsHEaVRM4qK6bQ3q8PWpwXnIG1J6aBK+t7uS6hDaA=="

extension GoTrueAPI {
    var serviceRole: String { project.configuration.apiKeys.serviceRole }

    /// A call with the service_role key as the bearer.
    func admin(_ method: String, _ target: String, _ body: JSON? = nil, headers: HTTPHeaders = [:]) -> HTTPResponse {
        call(method, target, body, bearer: serviceRole, headers: headers)
    }

    func createUser(_ body: JSONObject) -> JSON {
        admin("POST", "/admin/users", .object(body)).json
    }

    /// An HS256 token with the project's secret and arbitrary claims.
    func token(_ claims: JSONObject) -> String {
        JWTSigner.sign(claims: claims, key: JWTKey(secret: project.configuration.jwt.secret))
    }

    func auditEntries() -> [JSON] { admin("GET", "/admin/audit").json.arrayValue ?? [] }
}

@Suite struct AdminAuthLevelTests {
    @Test func bearerRequirements() throws {
        let api = try makeAPI()
        let missing = api.call("GET", "/admin/users")
        #expect(missing.status == 401)
        #expect(errorCode(missing) == "no_authorization")
        let garbage = api.call("GET", "/admin/users", bearer: "garbage")
        #expect(garbage.status == 403)
        #expect(errorCode(garbage) == "bad_jwt")
        // The anon key is a valid JWT without an admin role (reference §1.3 note).
        let anon = api.call("GET", "/admin/users", bearer: api.project.configuration.apiKeys.anon)
        #expect(anon.status == 403)
        #expect(anon.text == #"{"code":403,"error_code":"not_admin","msg":"User not allowed"}"#)
        // A signed-in user's own token is not an admin token either.
        let user = api.signUp("plain@example.com")["access_token"]!.stringValue!
        #expect(errorCode(api.call("GET", "/admin/users", bearer: user)) == "not_admin")
        #expect(api.admin("GET", "/admin/users").status == 200)
    }

    @Test func configuredAdminRoles() throws {
        let api = try makeAPI { $0.jwt.adminRoles = ["ops"] }
        #expect(api.call("GET", "/admin/users", bearer: api.token(["role": "ops"])).status == 200)
        #expect(errorCode(api.admin("GET", "/admin/users")) == "not_admin")
        let both = try makeAPI { $0.jwt.adminRoles = ["service_role", "supabase_admin"] }
        #expect(both.call("GET", "/admin/users", bearer: both.token(["role": "supabase_admin"])).status == 200)
        #expect(both.admin("GET", "/admin/users").status == 200)
    }

    @Test func tokenWithSessionMustNameALiveSession() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.sessions.timeboxSeconds = 600 }
        let session = api.signUp("owner@example.com")
        let userClaims = claims(of: session["access_token"]!.stringValue!)
        var adminClaims = userClaims
        adminClaims["role"] = "service_role"
        let token = api.token(adminClaims)
        #expect(api.call("GET", "/admin/users", bearer: token).status == 200)
        // Past the timebox the session is no longer valid (session_expired, not a 401).
        clock.advance(seconds: 601)
        let expired = api.call("GET", "/admin/users", bearer: api.token(adminClaims.with("exp", .number(clock.now().unixSeconds + 60))))
        #expect(expired.status == 403)
        #expect(errorCode(expired) == "session_expired")
        #expect(expired.json["msg"] == "Session is no longer valid")
        // A deleted session.
        try api.project.database.write { try $0.execute(portable: "DELETE FROM sessions") }
        let gone = api.call("GET", "/admin/users", bearer: api.token(adminClaims.with("exp", .number(clock.now().unixSeconds + 60))))
        #expect(errorCode(gone) == "session_not_found")
    }

    @Test func opaqueSecretKeyThroughTheGateway() throws {
        let api = try makeAPI {
            $0.apiKeys.secret = "sb_secret_0123456789abcdef"
            $0.apiKeys.publishable = "sb_publishable_0123456789abcdef"
        }
        let ok = api.call("GET", "/auth/v1/admin/users", bearer: "sb_secret_0123456789abcdef",
                          headers: ["apikey": "sb_secret_0123456789abcdef"])
        #expect(ok.status == 200)
        let publishable = api.call("GET", "/auth/v1/admin/users", bearer: "sb_publishable_0123456789abcdef",
                                   headers: ["apikey": "sb_publishable_0123456789abcdef"])
        #expect(errorCode(publishable) == "not_admin")
    }
}

@Suite struct AdminCreateUserTests {
    @Test func createsAnUnconfirmedEmailUser() throws {
        let api = try makeAPI()
        let response = api.admin("POST", "/admin/users", ["email": "New@Example.com", "password": "pw"])
        #expect(response.status == 200)
        let user = response.json
        let id = try #require(user["id"]?.stringValue)
        #expect(UUIDText.isValid(id, lowercaseOnly: true))
        #expect(user["aud"] == "authenticated")
        #expect(user["role"] == "authenticated")
        #expect(user["email"] == "new@example.com")
        #expect(user["phone"] == "")
        #expect(user["email_confirmed_at"] == nil)
        #expect(user["app_metadata"] == ["provider": "email", "providers": ["email"]])
        #expect(user["user_metadata"] == .object(JSONObject()))
        #expect(user["is_anonymous"] == false)
        let identity = try #require(user["identities"]?.arrayValue?.first)
        #expect(identity["provider"] == "email")
        #expect(identity["identity_data"] == ["email": "new@example.com", "email_verified": false, "phone_verified": false,
                                              "sub": .string(id)])
        // Key order as Go writes models.User.
        let keys = user.objectValue!.keys
        #expect(keys == ["id", "aud", "role", "email", "phone", "app_metadata", "user_metadata", "identities", "created_at",
                         "updated_at", "is_anonymous"])
        // No strength check on create ("pw" is below the minimum), and the email is unconfirmed.
        #expect(errorCode(api.signIn("new@example.com", "pw")) == "email_not_confirmed")
    }

    @Test func confirmedEmailAndPhone() throws {
        let api = try makeAPI()
        let user = api.createUser(["email": "both@example.com", "phone": "+1 555 0100 99", "password": "secret-pw",
                                   "email_confirm": true, "phone_confirm": true, "user_metadata": ["full_name": "Both"]])
        #expect(user["phone"] == "1555010099")
        #expect(user["email_confirmed_at"]?.stringValue != nil)
        #expect(user["phone_confirmed_at"]?.stringValue != nil)
        // The in-memory user is returned: no generated confirmed_at (as Go's response).
        #expect(user["confirmed_at"] == nil)
        #expect(user["user_metadata"] == ["full_name": "Both", "email_verified": true])
        #expect(user["app_metadata"] == ["provider": "email", "providers": ["email", "phone"]])
        #expect(user["identities"]?.arrayValue?.map { $0["provider"] } == ["email", "phone"])
        #expect(user["identities"]?[1]?["identity_data"]?["phone"] == "1555010099")
        #expect(api.signIn("both@example.com", "secret-pw").status == 200)
        // A GET reloads the row: confirmed_at is there.
        #expect(api.admin("GET", "/admin/users/\(user["id"]!.stringValue!)").json["confirmed_at"]?.stringValue != nil)
    }

    @Test func customIDRoleAudienceAndMetadata() throws {
        let api = try makeAPI()
        let user = api.createUser([
            "id": "9D1E3C2B-0000-4000-8000-00000000ABCD", "email": "c@example.com", "role": "  editor ", "aud": "partners",
            "app_metadata": ["plan": "pro", "provider": .null], "user_metadata": ["a": 1],
        ])
        #expect(user["id"] == "9d1e3c2b-0000-4000-8000-00000000abcd")
        #expect(user["role"] == "editor")
        #expect(user["aud"] == "partners")
        #expect(user["app_metadata"] == ["plan": "pro", "providers": ["email"]])
        #expect(user["user_metadata"] == ["a": 1])
        // 32 bare hex digits parse as gofrs' FromString does.
        #expect(api.createUser(["id": "0123456789abcdef0123456789abcdef", "email": "d@example.com"])["id"]
                == "01234567-89ab-cdef-0123-456789abcdef")
        let bad = api.admin("POST", "/admin/users", ["id": "nope", "email": "e@example.com"])
        #expect(bad.status == 400)
        #expect(bad.json["msg"] == "ID must conform to the uuid v4 format")
        #expect(api.admin("POST", "/admin/users", ["id": .string(Validation.nilUUID), "email": "e@example.com"]).json["msg"]
                == "ID cannot be a nil uuid")
        // The same id twice: adminUserCreate checks no id before its insert, so the primary key
        // refuses the row, and the transaction's 500 shows that database error in the initial
        // API version (`utilities.NewPostgresError`), its message in the versioned one.
        let body: JSON = ["id": "9d1e3c2b-0000-4000-8000-00000000abcd", "email": "f@example.com"]
        let taken = api.admin("POST", "/admin/users", body)
        #expect(taken.status == 500)
        #expect(taken.headers["x-sb-error-code"] == "unexpected_failure")
        #expect(taken.text == #"{"code":"23505","message":"duplicate key value violates unique constraint \"users_pkey\"","#
            + #""detail":"Key (id)=(9d1e3c2b-0000-4000-8000-00000000abcd) already exists."}"#)
        let versioned = api.admin("POST", "/admin/users", body, headers: ["X-Supabase-Api-Version": "2024-01-01"])
        #expect(versioned.status == 500)
        #expect(versioned.text == #"{"code":"unexpected_failure","message":"Database error creating new user"}"#)
    }

    @Test func validationErrors() throws {
        let api = try makeAPI()
        let none = api.admin("POST", "/admin/users", ["password": "x"])
        #expect(none.status == 400)
        #expect(none.json["msg"] == "Cannot create a user without either an email or phone")
        #expect(api.admin("POST", "/admin/users", ["email": "bad"]).json["msg"] == "Unable to validate email address: invalid format")
        #expect(api.admin("POST", "/admin/users", ["email": "a@example.com", "password": "x", "password_hash": .string(bcryptFixture)])
            .json["msg"] == "Only a password or a password hash should be provided")
        _ = api.createUser(["email": "dup@example.com", "phone": "15550001111"])
        let dupEmail = api.admin("POST", "/admin/users", ["email": "DUP@example.com"])
        #expect(dupEmail.status == 422)
        #expect(errorCode(dupEmail) == "email_exists")
        #expect(dupEmail.json["msg"] == "A user with this email address has already been registered")
        let dupPhone = api.admin("POST", "/admin/users", ["phone": "+15550001111"])
        #expect(dupPhone.status == 422)
        #expect(errorCode(dupPhone) == "phone_exists")
        #expect(dupPhone.json["msg"] == "Phone number already registered by another user")
        let badJSON = api.call("POST", "/admin/users", bearer: api.serviceRole, headers: [:])
        #expect(badJSON.json["msg"] == "Could not parse request body as JSON: unexpected end of JSON input")
        let wrongType = api.admin("POST", "/admin/users", ["email": 5])
        #expect(wrongType.json["msg"]
                == "Could not parse request body as JSON: json: cannot unmarshal number into Go struct field AdminUserParams.email of type string")
        // Over bcrypt's 72 bytes the real server panics while hashing: a 500.
        let long = api.admin("POST", "/admin/users", ["email": "long@example.com", "password": .string(String(repeating: "p", count: 73))])
        #expect(long.status == 500)
    }

    @Test func passwordHashImport() throws {
        let api = try makeAPI()
        _ = api.createUser(["email": "bc@example.com", "password_hash": .string(bcryptFixture), "email_confirm": true])
        #expect(api.signIn("bc@example.com", "correct-horse-1").status == 200)
        #expect(errorCode(api.signIn("bc@example.com", "correct-horse-2")) == "invalid_credentials")
        // The stored value is the hash as given.
        let stored = try api.project.database.read { try $0.user(email: "bc@example.com", aud: "authenticated")?.encryptedPassword }
        #expect(stored == bcryptFixture)
        // This emulator's own PBKDF2 PHC strings import too.
        let phc = PasswordHasher(iterations: 1000, random: SeededRandom(seed: 1)).hash(password: "from-phc")
        _ = api.createUser(["email": "phc@example.com", "password_hash": .string(phc), "email_confirm": true])
        #expect(api.signIn("phc@example.com", "from-phc").status == 200)

        // Argon2 and Firebase scrypt hashes, as GoTrue's crypto/password.go checks them.
        // Computed with argon2-cffi (the reference C implementation) and with Python's hashlib
        // scrypt and OpenSSL's AES-256-CTR, for the password "imported-secret-1".
        let argon2id = "$argon2id$v=19$m=64,t=2,p=2$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O"
        let argon2i = "$argon2i$v=19$m=32,t=3,p=1$YWJjZGVmZ2gxMjM0NTY3OA$wPsumSjcGN8d63h61yNgCw"
        for (email, hash) in [("ar@example.com", argon2id), ("ai@example.com", argon2i), ("fb@example.com", firebaseScryptFixture)] {
            let created = api.createUser(["email": .string(email), "password_hash": .string(hash), "email_confirm": true])
            #expect(created["id"] != nil, "\(hash)")
            #expect(api.signIn(email, "imported-secret-1").status == 200, "\(hash)")
            #expect(errorCode(api.signIn(email, "imported-secret-2")) == "invalid_credentials", "\(hash)")
            // Never re-hashed on sign-in (User.Authenticate upgrades bcrypt costs only).
            #expect(try api.project.database.read { try $0.user(email: email, aud: "authenticated")?.encryptedPassword } == hash)
        }
        // What ParseArgon2Hash and ParseFirebaseScryptHash refuse is the 500 of any unknown hash.
        for refused in [
            "$argon2d$v=19$m=64,t=2,p=2$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",  // argon2d
            "$argon2id$v=16$m=64,t=2,p=2$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",  // version 16
            "$argon2id$v=19$m=64,t=2,p=2,keyid=k$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",
            "$argon2id$v=19$m=1048577,t=2,p=2$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",  // over 1 GiB
            "$argon2id$v=19$m=64,t=21,p=2$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",
            "$argon2id$v=19$m=64,t=2,p=17$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",
            "$argon2id$v=19$m=64,t=2,p=2$YWJjZGVmZ2gxMjM0NTY3OA==$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",  // padded
            "$argon2id$v=19$m=64,t=2,p=2$$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",  // no salt
            "$fbscrypt$v=2,n=10,r=8,p=1,ss=Bw==$nzphwtTltgcYKTpL$aGFzaA==",
            "$fbscrypt$v=1,n=0,r=8,p=1,ss=Bw==$nzphwtTltgcYKTpL$aGFzaA==",
            "$fbscrypt$v=1,n=10,r=8,p=256,ss=Bw==$nzphwtTltgcYKTpL$aGFzaA==",
            "$fbscrypt$v=1,n=10,r=8,p=1,ss=Bw==$nzphwtTltgcYKTpL$aGFzaA",  // unpadded
        ] {
            let response = api.admin("POST", "/admin/users", ["email": "refused@example.com", "password_hash": .string(refused)])
            #expect(response.status == 500, "\(refused)")
            #expect(response.json["msg"] == "Error creating user", "\(refused)")
        }
        // Go's base64 decoders skip CR and LF, and do not insist on zero padding bits.
        let lenient = api.createUser(["email": "lf@example.com", "email_confirm": true,
                                      "password_hash": "$argon2i$v=19$m=32,t=3,p=1$YWJjZGVmZ2gx\nMjM0NTY3OA$wPsumSjcGN8d63h61yNgCx"])
        #expect(lenient["id"] != nil)
        #expect(api.signIn("lf@example.com", "imported-secret-1").status == 200)
        // Parameters that parse but make GoTrue's comparison panic (argon2 with t=0, scrypt with
        // n=64, which Go's shift turns into N=0): the sign-in is the recovered panic's 500.
        for (email, hash) in [("t0@example.com", "$argon2id$v=19$m=64,t=0,p=2$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O"),
                              ("n64@example.com", "$fbscrypt$v=1,n=64,r=8,p=1,ss=Bw==$nzphwtTltgcYKTpL$aGFzaA==")] {
            _ = api.createUser(["email": .string(email), "password_hash": .string(hash), "email_confirm": true])
            let signIn = api.signIn(email, "imported-secret-1")
            #expect(signIn.status == 500, "\(hash)")
            #expect(errorCode(signIn) == "unexpected_failure", "\(hash)")
        }
        let garbage = api.admin("POST", "/admin/users", ["email": "gb@example.com", "password_hash": "$2a$10$tooshort"])
        #expect(garbage.status == 500)
        #expect(garbage.json["msg"] == "Error creating user")
        // Nothing was created for the refused hashes: the eight users are the accepted ones.
        #expect(api.admin("GET", "/admin/users").headers["X-Total-Count"] == "8")
    }

    @Test func randomPasswordWhenNoneGiven() throws {
        let api = try makeAPI()
        _ = api.createUser(["email": "nopw@example.com", "email_confirm": true])
        let stored = try api.project.database.read { try $0.user(email: "nopw@example.com", aud: "authenticated")?.encryptedPassword }
        #expect(stored?.hasPrefix("$pbkdf2-sha256$") == true)
        #expect(errorCode(api.signIn("nopw@example.com", "")) != nil)
    }

    @Test func banDuration() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let banned = api.createUser(["email": "ban@example.com", "password": "secret-pw", "email_confirm": true, "ban_duration": "1h30m"])
        #expect(banned["banned_until"] == .string(clock.now().adding(seconds: 5400).rfc3339))
        #expect(errorCode(api.signIn("ban@example.com", "secret-pw")) == "user_banned")
        #expect(api.createUser(["email": "none@example.com", "ban_duration": "none"])["banned_until"] == nil)
        let bad = api.admin("POST", "/admin/users", ["email": "bad@example.com", "ban_duration": "forever"])
        #expect(bad.status == 400)
        #expect(bad.json["msg"] == #"invalid format for ban duration: time: invalid duration "forever""#)
    }

    @Test func auditEntry() throws {
        let api = try makeAPI()
        let user = api.createUser(["email": "audit@example.com"])
        let entry = try #require(api.auditEntries().first)
        #expect(entry["payload"]?["action"] == "user_signedup")
        #expect(entry["payload"]?["log_type"] == "team")
        #expect(entry["payload"]?["actor_id"] == .string(Validation.nilUUID))
        #expect(entry["payload"]?["actor_username"] == "service_role")
        #expect(entry["payload"]?["traits"] == ["user_id": user["id"]!, "user_email": "audit@example.com", "user_phone": "",
                                                "provider": "email"])
    }
}

@Suite struct AdminGetListTests {
    @Test func getUser() throws {
        let api = try makeAPI()
        let id = api.createUser(["email": "g@example.com"])["id"]!.stringValue!
        let got = api.admin("GET", "/admin/users/\(id)")
        #expect(got.status == 200)
        #expect(got.json["email"] == "g@example.com")
        #expect(got.json["identities"]?.arrayValue?.count == 1)
        #expect(got.json["factors"] == nil)
        try api.project.database.write { conn in
            var factor = FactorRecord(id: "11111111-2222-4333-8444-555555555555", userID: id, factorType: "totp", status: "verified",
                                      at: 1_767_225_600_000_000)
            factor.friendlyName = "phone app"
            try conn.insertFactor(factor)
        }
        let withFactor = api.admin("GET", "/admin/users/\(id.uppercased())").json
        #expect(withFactor["factors"]?.arrayValue?.count == 1)
        #expect(withFactor.objectValue!.keys.firstIndex(of: "factors")! + 1 == withFactor.objectValue!.keys.firstIndex(of: "identities")!)

        let notUUID = api.admin("GET", "/admin/users/nope")
        #expect(notUUID.status == 404)
        #expect(notUUID.text == #"{"code":404,"error_code":"validation_failed","msg":"user_id must be an UUID"}"#)
        // A combining mark right after the slash still reaches the handler (chi routes on bytes).
        let combining = api.admin("GET", "/admin/users/%CC%81")
        #expect(combining.text == #"{"code":404,"error_code":"validation_failed","msg":"user_id must be an UUID"}"#)
        let unknown = api.admin("GET", "/admin/users/\(Validation.nilUUID)")
        #expect(unknown.status == 404)
        #expect(unknown.text == #"{"code":404,"error_code":"user_not_found","msg":"User not found"}"#)
    }

    @Test func listNewestFirstWithPaginationHeaders() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        for name in ["a", "b", "c"] {
            _ = api.createUser(["email": .string("\(name)@example.com"), "user_metadata": ["full_name": .string("Person \(name.uppercased())")]])
            clock.advance(seconds: 1)
        }
        let all = api.admin("GET", "/admin/users")
        #expect(all.status == 200)
        #expect(all.json["aud"] == "authenticated")
        #expect(all.json["users"]?.arrayValue?.map { $0["email"] } == ["c@example.com", "b@example.com", "a@example.com"])
        // The listing does not load identities (null) or factors (omitted).
        #expect(all.json["users"]?[0]?["identities"] == .null)
        #expect(all.headers["X-Total-Count"] == "3")
        #expect(all.headers["Link"] == #"</admin/users?page=1>; rel="last""#)

        let first = api.admin("GET", "/admin/users?per_page=1")
        #expect(first.json["users"]?.arrayValue?.map { $0["email"] } == ["c@example.com"])
        #expect(first.headers["Link"] == #"</admin/users?page=2&per_page=1>; rel="next", </admin/users?page=3&per_page=1>; rel="last""#)
        let last = api.admin("GET", "/admin/users?per_page=1&page=3")
        #expect(last.json["users"]?.arrayValue?.map { $0["email"] } == ["a@example.com"])
        #expect(last.headers["Link"] == #"</admin/users?page=3&per_page=1>; rel="last""#)
        let beyond = api.admin("GET", "/admin/users?page=9&per_page=2")
        #expect(beyond.json["users"] == [])

        let ascending = api.admin("GET", "/admin/users?sort=created_at%20asc")
        #expect(ascending.json["users"]?.arrayValue?.map { $0["email"] } == ["a@example.com", "b@example.com", "c@example.com"])
        #expect(api.admin("GET", "/admin/users?sort=created_at+DESC").json["users"]?[0]?["email"] == "c@example.com")

        // filter: email substring (case-sensitive LIKE) or full_name (ILIKE).
        let byEmail = api.admin("GET", "/admin/users?filter=b%40")
        #expect(byEmail.json["users"]?.arrayValue?.map { $0["email"] } == ["b@example.com"])
        #expect(byEmail.headers["X-Total-Count"] == "1")
        #expect(byEmail.headers["Link"] == #"</admin/users?filter=b%40&page=1>; rel="last""#)
        #expect(api.admin("GET", "/admin/users?filter=person%20a").json["users"]?.arrayValue?.map { $0["email"] } == ["a@example.com"])
        #expect(api.admin("GET", "/admin/users?filter=B%40").json["users"] == [])

        // Through the gateway the links still carry GoTrue's own path.
        let viaGateway = api.admin("GET", "/auth/v1/admin/users?per_page=2", headers: ["apikey": api.serviceRole])
        #expect(viaGateway.headers["Link"] == #"</admin/users?page=2&per_page=2>; rel="next", </admin/users?page=2&per_page=2>; rel="last""#)
    }

    @Test func listErrorsAndEdgeCases() throws {
        let api = try makeAPI()
        let empty = api.admin("GET", "/admin/users")
        #expect(empty.json["users"] == [])
        #expect(empty.headers["Link"] == #"</admin/users?page=0>; rel="last""#)
        #expect(empty.headers["X-Total-Count"] == "0")
        #expect(api.admin("GET", "/admin/users?sort=email").json["msg"] == "Bad Sort Parameters: bad field for sort 'email'")
        #expect(api.admin("GET", "/admin/users?sort=created_at%20up").json["msg"]
                == "Bad Sort Parameters: bad direction for sort 'up', only 'asc' and 'desc' allowed")
        let badPage = api.admin("GET", "/admin/users?page=x")
        #expect(badPage.status == 400)
        #expect(badPage.json["msg"] == #"Bad Pagination Parameters: strconv.ParseUint: parsing "x": invalid syntax"#)
        #expect(api.admin("GET", "/admin/users?per_page=-1").json["msg"]
                == #"Bad Pagination Parameters: strconv.ParseUint: parsing "-1": invalid syntax"#)
        #expect(api.admin("GET", "/admin/users?page=99999999999999999999").json["msg"]
                == #"Bad Pagination Parameters: strconv.ParseUint: parsing "99999999999999999999": value out of range"#)
        // per_page=0 divides by zero in the real server's header code: a 500.
        #expect(api.admin("GET", "/admin/users?per_page=0").status == 500)
    }

    /// `SetRole` trims a non-empty `role`: white space alone makes the role "".
    @Test func aBlankRoleIsEmpty() throws {
        let api = try makeAPI()
        let created = api.createUser(["email": "blank-role@example.com", "role": "   "])
        #expect(created["role"] == "")
        let id = try #require(created["id"]?.stringValue)
        #expect(api.admin("PUT", "/admin/users/\(id)", ["role": " editor "]).json["role"] == "editor")
        #expect(api.admin("PUT", "/admin/users/\(id)", ["role": " \t "]).json["role"] == "")
        #expect(api.admin("PUT", "/admin/users/\(id)", ["role": ""]).json["role"] == "")
    }

    @Test func audienceFromHeader() throws {
        let api = try makeAPI()
        _ = api.createUser(["email": "p@example.com", "aud": "partners"])
        _ = api.createUser(["email": "q@example.com"])
        let partners = api.admin("GET", "/admin/users", headers: ["X-JWT-AUD": "partners"])
        #expect(partners.json["aud"] == "partners")
        #expect(partners.json["users"]?.arrayValue?.map { $0["email"] } == ["p@example.com"])
        #expect(api.admin("GET", "/admin/users").json["users"]?.arrayValue?.map { $0["email"] } == ["q@example.com"])
    }

    /// GoTrue looks for another account with the email only within the request's audience
    /// (`IsDuplicatedEmail`), but `users_email_partial_key` covers them all: an email another
    /// audience holds passes the check and Postgres refuses the row. In the initial API version
    /// the client sees that error (`utilities.NewPostgresError`); nothing is stored.
    @Test func emailAnotherAudienceHoldsIsTheIndexRefusal() throws {
        let api = try makeAPI()
        _ = api.createUser(["email": "p@example.com", "aud": "partners"])
        let refusal = #"{"code":"23505","message":"duplicate key value violates unique constraint \"users_email_partial_key\"","detail":"Key (email)=(p@example.com) already exists."}"#
        let created = api.admin("POST", "/admin/users", ["email": "p@example.com", "password": "secret-123"])
        #expect(created.status == 500)
        #expect(created.headers["x-sb-error-code"] == "unexpected_failure")
        #expect(created.text == refusal)
        let versioned = api.admin("POST", "/admin/users", ["email": "p@example.com"], headers: ["X-Supabase-Api-Version": "2024-01-01"])
        #expect(versioned.text == #"{"code":"unexpected_failure","message":"Database error creating new user"}"#)
        let signedUp = api.call("POST", "/signup", ["email": "P@example.com", "password": "secret-123"])
        #expect(signedUp.status == 500)
        #expect(signedUp.text == refusal)
        let signedUpVersioned = api.call("POST", "/signup", ["email": "p@example.com", "password": "secret-123"],
                                         headers: ["X-Supabase-Api-Version": "2024-01-01"])
        #expect(signedUpVersioned.text == #"{"code":"unexpected_failure","message":"Database error saving new user"}"#)
        let invited = api.admin("POST", "/invite", ["email": "p@example.com"])
        #expect(invited.status == 500)
        #expect(invited.text == refusal)
        let linked = api.admin("POST", "/admin/generate_link", ["type": "signup", "email": "p@example.com", "password": "secret-123"])
        #expect(linked.status == 500)
        #expect(linked.text == refusal)
        // Within its own audience the check answers first, as GoTrue's.
        #expect(api.admin("POST", "/admin/users", ["email": "p@example.com", "aud": "partners"]).json["error_code"] == "email_exists")
        #expect(api.admin("GET", "/admin/users").json["users"]?.arrayValue?.count == 0)
        #expect(api.admin("GET", "/admin/users", headers: ["X-JWT-AUD": "partners"]).json["users"]?.arrayValue?.count == 1)
    }
}

@Suite struct AdminUpdateDeleteTests {
    @Test func updatesEmailPhoneMetadataAndRole() throws {
        let api = try makeAPI()
        let id = api.createUser(["email": "old@example.com", "user_metadata": ["keep": 1, "drop": 2],
                                 "app_metadata": ["tier": "free"]])["id"]!.stringValue!
        let response = api.admin("PUT", "/admin/users/\(id)", [
            "email": "New@Example.com", "email_confirm": true, "phone": "+15550002222", "role": "editor",
            "user_metadata": ["drop": .null, "added": true], "app_metadata": ["tier": "pro"],
        ])
        #expect(response.status == 200)
        let user = response.json
        #expect(user["email"] == "new@example.com")
        #expect(user["phone"] == "15550002222")
        #expect(user["role"] == "editor")
        #expect(user["email_confirmed_at"]?.stringValue != nil)
        #expect(user["user_metadata"] == ["keep": 1, "added": true, "email_verified": true])
        // A new phone identity does not list the provider in app_metadata (admin update, as coded).
        #expect(user["app_metadata"] == ["provider": "email", "providers": ["email"], "tier": "pro"])
        // The answer is GoTrue's user as loaded and changed in memory: no `confirmed_at` (the
        // database generates it), the email identity with its old data, the new one appended.
        #expect(user["confirmed_at"] == nil)
        let identities = try #require(user["identities"]?.arrayValue)
        #expect(identities.map { $0["provider"] } == ["email", "phone"])
        #expect(identities[0]["identity_data"]?["email"] == "old@example.com")
        #expect(identities[0]["identity_data"]?["email_verified"] == false)
        #expect(identities[1]["identity_data"] == ["sub": .string(id), "phone": "15550002222", "email_verified": false,
                                                   "phone_verified": false])
        // What was stored: the next read shows it.
        let stored = api.admin("GET", "/admin/users/\(id)").json
        #expect(stored["confirmed_at"] == stored["email_confirmed_at"] && stored["confirmed_at"] != nil)
        #expect(stored["identities"]?[0]?["identity_data"]?["email"] == "new@example.com")
        #expect(stored["identities"]?[0]?["identity_data"]?["email_verified"] == true)
        #expect(stored["identities"]?.arrayValue?.count == 2)
        let entry = try #require(api.auditEntries().first)
        #expect(entry["payload"]?["action"] == "user_modified")
        #expect(entry["payload"]?["log_type"] == "user")
        #expect(entry["payload"]?["traits"]?["user_email"] == "new@example.com")
    }

    @Test func passwordChangeEndsSessions() throws {
        let api = try makeAPI()
        let session = api.signUp("pw@example.com", "first-pw")
        let id = session["user"]!["id"]!.stringValue!
        let weak = api.admin("PUT", "/admin/users/\(id)", ["password": "123"])
        #expect(weak.status == 422)
        #expect(errorCode(weak) == "weak_password")
        #expect(api.admin("PUT", "/admin/users/\(id)", ["password": "second-pw"]).status == 200)
        #expect(errorCode(api.call("GET", "/user", bearer: session["access_token"]!.stringValue!)) == "session_not_found")
        #expect(api.refresh(session["refresh_token"]!.stringValue!).status == 400)
        #expect(api.signIn("pw@example.com", "second-pw").status == 200)
        #expect(errorCode(api.signIn("pw@example.com", "first-pw")) == "invalid_credentials")
    }

    @Test func banAndUnban() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let session = api.signUp("b@example.com")
        let id = session["user"]!["id"]!.stringValue!
        let banned = api.admin("PUT", "/admin/users/\(id)", ["ban_duration": "24h"]).json
        #expect(banned["banned_until"] == .string(clock.now().adding(seconds: 86_400).rfc3339))
        #expect(errorCode(api.call("GET", "/user", bearer: session["access_token"]!.stringValue!)) == "user_banned")
        // The admin routes load a session's user without the ban check (`requireAdminCredentials`):
        // a banned user is refused for its role, and a banned admin-role user is let through.
        #expect(errorCode(api.call("GET", "/admin/users", bearer: session["access_token"]!.stringValue!)) == "not_admin")
        let operator_ = api.signUp("ops@example.com")
        let operatorID = operator_["user"]!["id"]!.stringValue!
        #expect(api.admin("PUT", "/admin/users/\(operatorID)", ["role": "service_role"]).status == 200)
        let operatorToken = api.signIn("ops@example.com").json["access_token"]?.stringValue
        #expect(api.admin("PUT", "/admin/users/\(operatorID)", ["ban_duration": "24h"]).status == 200)
        #expect(api.call("GET", "/admin/users", bearer: operatorToken).status == 200)
        #expect(errorCode(api.call("GET", "/user", bearer: operatorToken)) == "user_banned")
        #expect(api.admin("PUT", "/admin/users/\(id)", ["ban_duration": "none"]).json["banned_until"] == nil)
        #expect(api.call("GET", "/user", bearer: session["access_token"]!.stringValue!).status == 200)
        #expect(api.admin("PUT", "/admin/users/\(id)", ["ban_duration": "1"]).json["msg"]
                == #"invalid format for ban duration: time: missing unit in duration "1""#)
    }

    @Test func anonymousUserBecomesPermanent() throws {
        let api = try makeAPI { $0.external.anonymousUsersEnabled = true }
        let anonymous = api.call("POST", "/signup", .object(JSONObject())).json
        let id = anonymous["user"]!["id"]!.stringValue!
        let unconfirmed = api.admin("PUT", "/admin/users/\(id)", ["email": "anon@example.com"]).json
        #expect(unconfirmed["is_anonymous"] == true)
        let confirmed = api.admin("PUT", "/admin/users/\(id)", ["email": "anon@example.com", "email_confirm": true]).json
        #expect(confirmed["is_anonymous"] == false)
        #expect(confirmed["email"] == "anon@example.com")
        // A confirmed phone number does the same, with a verified phone identity.
        let other = api.call("POST", "/signup", .object(JSONObject())).json["user"]!["id"]!.stringValue!
        let unconfirmedPhone = api.admin("PUT", "/admin/users/\(other)", ["phone": "+15550003333"]).json
        #expect(unconfirmedPhone["is_anonymous"] == true)
        let phone = api.admin("PUT", "/admin/users/\(other)", ["phone": "+15550003333", "phone_confirm": true]).json
        #expect(phone["is_anonymous"] == false)
        #expect(phone["phone"] == "15550003333")
        // The phone identity the first update made, as loaded: GoTrue answers its old data.
        #expect(phone["identities"]?[0]?["identity_data"] == ["sub": .string(other), "phone": "15550003333",
                                                             "email_verified": false, "phone_verified": false])
        #expect(api.admin("GET", "/admin/users/\(other)").json["identities"]?[0]?["identity_data"]
                == ["sub": .string(other), "phone": "15550003333", "email_verified": false, "phone_verified": true])
    }

    /// A body that asks for no change writes only the audit entry: `updated_at` stays.
    @Test func anEmptyUpdateKeepsUpdatedAt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let created = api.createUser(["email": "still@example.com"])
        let id = try #require(created["id"]?.stringValue)
        clock.advance(seconds: 5)
        let same = api.admin("PUT", "/admin/users/\(id)", .object([:]))
        #expect(same.status == 200)
        #expect(same.json["updated_at"] == created["updated_at"])
        let changed = api.admin("PUT", "/admin/users/\(id)", ["user_metadata": ["a": 1]])
        #expect(changed.json["updated_at"] == .string(clock.now().rfc3339))
        #expect(api.admin("GET", "/admin/audit").json.arrayValue?.filter { $0["payload"]?["action"] == "user_modified" }.count == 2)
    }

    @Test func takenEmailRollsBack() throws {
        let api = try makeAPI()
        _ = api.createUser(["email": "taken@example.com"])
        let id = api.createUser(["email": "mine@example.com"])["id"]!.stringValue!
        let clash = api.admin("PUT", "/admin/users/\(id)", ["email": "taken@example.com", "user_metadata": ["x": 1]])
        // adminUserUpdate checks no other account: Postgres refuses the row and GoTrue, in the
        // initial API version, answers with that database error (utilities.NewPostgresError).
        #expect(clash.status == 500)
        #expect(clash.headers["x-sb-error-code"] == "unexpected_failure")
        #expect(clash.text == #"{"code":"23505","message":"duplicate key value violates unique constraint \"users_email_partial_key\"","detail":"Key (email)=(taken@example.com) already exists."}"#)
        let versioned = api.admin("PUT", "/admin/users/\(id)", ["email": "Taken@Example.com"], headers: ["X-Supabase-Api-Version": "2024-01-01"])
        #expect(versioned.status == 500)
        #expect(versioned.text == #"{"code":"unexpected_failure","message":"Error updating user"}"#)
        _ = api.createUser(["phone": "15550001111"])
        let phone = api.admin("PUT", "/admin/users/\(id)", ["phone": "+1 555 000 1111"])
        #expect(phone.status == 500)
        #expect(phone.text == #"{"code":"23505","message":"duplicate key value violates unique constraint \"users_phone_key\"","detail":"Key (phone)=(15550001111) already exists."}"#)
        let after = api.admin("GET", "/admin/users/\(id)").json
        #expect(after["email"] == "mine@example.com")
        #expect(after["user_metadata"] == .object(JSONObject()))
        #expect(after["identities"]?[0]?["identity_data"]?["email"] == "mine@example.com")
        #expect(api.admin("PUT", "/admin/users/nope", ["role": "x"]).status == 404)
    }

    @Test func hardDelete() throws {
        let api = try makeAPI()
        let session = api.signUp("gone@example.com")
        let id = session["user"]!["id"]!.stringValue!
        let deleted = api.admin("DELETE", "/admin/users/\(id)")
        #expect(deleted.status == 200)
        #expect(deleted.text == "{}")
        #expect(api.admin("GET", "/admin/users/\(id)").status == 404)
        let (identities, sessions) = try api.project.database.read { conn in
            (try conn.identities(userID: id).count, try conn.sessions(userID: id).count)
        }
        #expect(identities == 0 && sessions == 0)
        let entry = try #require(api.auditEntries().first)
        #expect(entry["payload"]?["action"] == "user_deleted")
        #expect(entry["payload"]?["traits"]?["user_email"] == "gone@example.com")
        // A body of the wrong shape is refused; an empty one is fine.
        let other = api.createUser(["email": "other@example.com"])["id"]!.stringValue!
        #expect(api.admin("DELETE", "/admin/users/\(other)", ["should_soft_delete": "yes"]).json["msg"]
                == "Could not parse request body as JSON: json: cannot unmarshal string into Go struct field adminUserDeleteParams.should_soft_delete of type bool")
    }

    @Test func softDelete() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let session = api.signUp("soft@example.com", data: ["full_name": "Soft"])
        let id = session["user"]!["id"]!.stringValue!
        let response = api.admin("DELETE", "/admin/users/\(id)", ["should_soft_delete": true])
        #expect(response.status == 200)
        let user = api.admin("GET", "/admin/users/\(id)").json
        #expect(user["deleted_at"] == .string(clock.now().rfc3339))
        let expectedEmail = Base64URL.encode(SHA256.hash(data: Array((id + "soft@example.com").utf8)))
        #expect(user["email"] == .string(expectedEmail))
        #expect(user["phone"]?.stringValue?.count == 15)
        #expect(user["user_metadata"] == .object(JSONObject()))
        #expect(user["app_metadata"] == .object(JSONObject()))
        let identity = try #require(user["identities"]?[0])
        #expect(identity["identity_data"] == nil)  // emptied, so omitted
        #expect(identity["id"] == .string(Base64URL.encode(SHA256.hash(data: Array((id + "email:" + id).utf8)))))
        #expect(errorCode(api.call("GET", "/user", bearer: session["access_token"]!.stringValue!)) == "session_not_found")
        #expect(errorCode(api.signIn("soft@example.com")) == "invalid_credentials")
        // The address is free again, and a second soft delete changes nothing.
        #expect(api.signUp("soft@example.com")["access_token"]?.stringValue != nil)
        clock.advance(seconds: 5)
        #expect(api.admin("DELETE", "/admin/users/\(id)", ["should_soft_delete": true]).status == 200)
        #expect(api.admin("GET", "/admin/users/\(id)").json["deleted_at"] == user["deleted_at"])
    }
}

@Suite struct AdminFactorTests {
    func seed(_ api: GoTrueAPI) throws -> (user: String, factor: String, session: JSON) {
        let session = api.signUp("mfa@example.com")
        let user = session["user"]!["id"]!.stringValue!
        let sessionID = claims(of: session["access_token"]!.stringValue!)["session_id"]!.stringValue!
        let factor = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
        try api.project.database.write { conn in
            var record = FactorRecord(id: factor, userID: user, factorType: "phone", status: "verified", at: 1_767_225_600_000_000)
            record.phone = "15550003333"
            try conn.insertFactor(record)
            try conn.execute(portable: "UPDATE sessions SET aal = 'aal2', factor_id = ? WHERE id = ?", .text(factor), .text(sessionID))
            try conn.addAMRClaim(id: "ffffffff-bbbb-4ccc-8ddd-eeeeeeeeeeee", sessionID: sessionID, method: "mfa/phone",
                                 at: 1_767_225_600_000_000)
        }
        return (user, factor, session)
    }

    /// The real server answers a rename onto another factor's name (or phone) with
    /// `handleResponseErrorDefault`'s 500: its unique index rejects the row and the plain
    /// database error carries no code header. Nothing changes.
    @Test func renameOntoATakenNameIsGoTruesUnexpectedFailure() throws {
        let api = try makeAPI()
        let (user, factor, _) = try seed(api)
        try api.project.database.write { conn in
            var other = FactorRecord(id: "bbbbbbbb-bbbb-4ccc-8ddd-eeeeeeeeeeee", userID: user, factorType: "phone",
                                     status: "verified", at: 1_767_225_600_000_000)
            other.friendlyName = "home"
            other.phone = "15550009999"
            try conn.insertFactor(other)
        }
        for body: JSON in [["friendly_name": "home"], ["phone": "+1 555 000 9999"]] {
            let taken = api.admin("PUT", "/admin/users/\(user)/factors/\(factor)", body)
            #expect(taken.status == 500)
            #expect(taken.text == #"{"code":500,"error_code":"unexpected_failure","msg":"Unexpected failure, please check server logs for more information"}"#)
            #expect(taken.headers["x-sb-error-code"] == nil)
        }
        let stored = try api.project.database.read { conn in try conn.factors(userID: user) }.first { $0.id == factor }
        #expect(stored?.friendlyName == nil && stored?.phone == "15550003333")
        // Its own name again is no conflict.
        #expect(api.admin("PUT", "/admin/users/\(user)/factors/bbbbbbbb-bbbb-4ccc-8ddd-eeeeeeeeeeee", ["friendly_name": "home"]).status == 200)
    }

    @Test func listUpdateAndDelete() throws {
        let api = try makeAPI()
        let empty = api.createUser(["email": "nof@example.com"])["id"]!.stringValue!
        let none = api.admin("GET", "/admin/users/\(empty)/factors")
        #expect(none.status == 200)
        #expect(none.text == "[]")

        let (user, factor, session) = try seed(api)
        let list = api.admin("GET", "/admin/users/\(user)/factors")
        #expect(list.text == #"[{"id":"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","status":"verified","factor_type":"phone","phone":"15550003333","last_challenged_at":null}]"#)

        let renamed = api.admin("PUT", "/admin/users/\(user)/factors/\(factor)", ["friendly_name": "work phone", "phone": "+1 555 000 4444"])
        #expect(renamed.json["friendly_name"] == "work phone")
        #expect(renamed.json["phone"] == "15550004444")
        #expect(api.admin("PUT", "/admin/users/\(user)/factors/\(factor)", ["phone": "12a"]).json["msg"]
                == "Invalid phone number format (E.164 required)")

        let notUUID = api.admin("DELETE", "/admin/users/\(user)/factors/nope")
        #expect(notUUID.status == 404)
        #expect(notUUID.json["msg"] == "factor_id must be an UUID")
        let foreign = api.admin("DELETE", "/admin/users/\(empty)/factors/\(factor)")
        #expect(foreign.status == 404)
        #expect(foreign.text == #"{"code":404,"error_code":"mfa_factor_not_found","msg":"Factor not found"}"#)

        // GetIPAddress: the first address of X-Forwarded-For Go parses, as `IP.String()` prints it.
        let deleted = api.admin("DELETE", "/admin/users/\(user)/factors/\(factor)", headers: ["X-Forwarded-For": "01.2.3.4, ::FFFF:203.0.113.9"])
        #expect(deleted.status == 200)
        #expect(deleted.json["id"] == .string(factor))
        #expect(api.admin("GET", "/admin/users/\(user)/factors").text == "[]")
        let sessionID = claims(of: session["access_token"]!.stringValue!)["session_id"]!.stringValue!
        let (downgraded, methods) = try api.project.database.read { conn in
            (try conn.session(id: sessionID), try conn.amrClaims(sessionID: sessionID).map(\.method))
        }
        #expect(downgraded?.aal == "aal1" && downgraded?.factorID == nil)
        #expect(!methods.contains("mfa/phone"))
        // The real server records the factor deletion with the user as the actor.
        let entry = try #require(api.auditEntries().first)
        #expect(entry["payload"]?["action"] == "factor_deleted")
        #expect(entry["payload"]?["actor_id"] == .string(user))
        #expect(entry["payload"]?["traits"] == ["user_id": .string(user), "factor_id": .string(factor)])
        #expect(entry["ip_address"] == "203.0.113.9")
    }
}

@Suite struct AdminAuditTests {
    /// The guard before the metadata parse lets through every text that can hold `full_name`,
    /// an escaped spelling too.
    @Test func theFullNameGuardMissesNoSpelling() {
        #expect(Core.mayContainFullName(#"{"full_name":"Ada"}"#))
        #expect(Core.mayContainFullName(#"{"full\u005fname":"Ada"}"#))
        #expect(!Core.mayContainFullName(#"{"name":"Ada","full":"x"}"#))
        #expect(!Core.mayContainFullName("{}"))
    }

    /// A refresh is audited twice, as the real server writes it: `token_refreshed`, then
    /// `GrantRefreshTokenSwap`'s `token_revoked` for the swapped token (none when the active
    /// token is handed out again within the reuse interval).
    @Test func aRefreshRecordsTheRevokedToken() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let session = api.signUp("refresh-audit@example.com")
        clock.advance(seconds: 1)
        let first = session["refresh_token"]?.stringValue ?? ""
        #expect(api.refresh(first).status == 200)
        var actions = api.admin("GET", "/admin/audit").json.arrayValue?.map { $0["payload"]?["action"]?.stringValue ?? "" }
        #expect(actions == ["token_revoked", "token_refreshed", "login", "user_signedup"])
        // The parent again, within the reuse interval: the active token, no swap.
        #expect(api.refresh(first).status == 200)
        actions = api.admin("GET", "/admin/audit").json.arrayValue?.map { $0["payload"]?["action"]?.stringValue ?? "" }
        #expect(actions?.prefix(2) == ["token_refreshed", "token_revoked"])
    }

    @Test func listingFilteringAndPaging() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        _ = api.signUp("self@example.com", data: ["full_name": "Self Person"])  // user_signedup + login by the user
        clock.advance(seconds: 1)
        let id = api.createUser(["email": "byadmin@example.com"])["id"]!.stringValue!
        clock.advance(seconds: 1)
        _ = api.admin("DELETE", "/admin/users/\(id)")

        let all = api.admin("GET", "/admin/audit")
        #expect(all.status == 200)
        let actions = all.json.arrayValue?.map { $0["payload"]?["action"]?.stringValue ?? "" }
        #expect(actions == ["user_deleted", "user_signedup", "login", "user_signedup"])
        #expect(all.headers["X-Total-Count"] == "4")
        let first = try #require(all.json[0]?.objectValue)
        #expect(first.keys == ["id", "payload", "created_at", "ip_address"])
        #expect(first["created_at"] == .string(clock.now().rfc3339))
        // Payloads are Go maps: sorted keys; `actor_name` only when the actor has a full_name
        // (the admin actor has none, the self-registered user has one).
        #expect(first["payload"]?.objectValue?.keys == ["action", "actor_id", "actor_username", "actor_via_sso", "log_type", "traits"])
        let last = try #require(all.json[3]?.objectValue)
        #expect(last["payload"]?["actor_name"] == "Self Person")

        #expect(api.admin("GET", "/admin/audit?query=action:user_signedup").json.arrayValue?.count == 2)
        #expect(api.admin("GET", "/admin/audit?query=type:TEAM").json.arrayValue?.count == 3)
        let byAuthor = api.admin("GET", "/admin/audit?query=author:self%20pers")
        #expect(byAuthor.json.arrayValue?.count == 2)
        #expect(api.admin("GET", "/admin/audit?query=author:service").json.arrayValue?.count == 2)
        #expect(api.admin("GET", "/admin/audit?query=action:").json.arrayValue?.count == 4)
        let bad = api.admin("GET", "/admin/audit?query=who:me")
        #expect(bad.status == 400)
        #expect(bad.json["msg"] == "Invalid query scope: who:me")
        #expect(api.admin("GET", "/admin/audit?query=action").json["msg"] == "Invalid query scope: action")

        let paged = api.admin("GET", "/admin/audit?per_page=3&query=type:team")
        #expect(paged.json.arrayValue?.count == 3)
        #expect(paged.headers["Link"] == #"</admin/audit?page=1&per_page=3&query=type%3Ateam>; rel="last""#)
        #expect(api.admin("GET", "/admin/audit?page=2&per_page=3").json.arrayValue?.count == 1)
        #expect(errorCode(api.call("GET", "/admin/audit", bearer: api.project.configuration.apiKeys.anon)) == "not_admin")
    }
}

@Suite struct AdminHelperTests {
    @Test func queryEscapingAndUUIDs() {
        #expect(GoURL.queryEscape("a b&c=d/é~") == "a+b%26c%3Dd%2F%C3%A9~")
        #expect(GoURL.encode([.init(name: "z", value: "1"), .init(name: "a", value: "x y"), .init(name: "z", value: "0")])
                == "a=x+y&z=1&z=0")
        #expect(AdminEndpoints.canonicalUUID("{01234567-89AB-CDEF-0123-456789ABCDEF}") == "01234567-89ab-cdef-0123-456789abcdef")
        #expect(AdminEndpoints.canonicalUUID("urn:uuid:01234567-89ab-cdef-0123-456789abcdef") == "01234567-89ab-cdef-0123-456789abcdef")
        #expect(AdminEndpoints.canonicalUUID("01234567-89ab-cdef-0123-456789abcdeg") == nil)
        #expect(Mailer.encodeRedirect("http://a.example/x?y=1") == "http%3A%2F%2Fa.example%2Fx%3Fy%3D1")
        #expect(Mailer.encodeRedirect("http://a.example/x") == "http://a.example/x")
    }

    @Test func redirectPolicy() {
        var configuration = Configuration()
        configuration.siteURL = "https://app.example.com"
        configuration.uriAllowList = ["https://*.preview.example.com/**", "myapp://callback"]
        let policy = RedirectPolicy(configuration: configuration)
        #expect(policy.isValid("https://app.example.com/welcome"))
        #expect(!policy.isValid("http://app.example.com/welcome"))
        #expect(!policy.isValid("https://app.example.com:8443/"))
        #expect(policy.isValid("http://127.0.0.1:5173/cb"))
        #expect(policy.isValid("http://[::1]:5173/cb"))
        #expect(!policy.isValid("http://localhost:5173/cb"))  // localhost only counts when SITE_URL is local
        #expect(policy.isValid("https://pr-12.preview.example.com/deep/path"))
        #expect(!policy.isValid("https://a.b.preview.example.com/"))
        #expect(policy.isValid("myapp://callback#frag"))
        #expect(!policy.isValid("https://evil.example/"))
        #expect(!policy.isValid("not a url"))
        var local = Configuration()
        local.siteURL = "http://localhost:3000"
        #expect(RedirectPolicy(configuration: local).isValid("http://localhost:4000/x"))
        #expect(RedirectPolicy(configuration: local).resolve("https://evil.example/", nil) == "http://localhost:3000")
    }
}

extension JSONObject {
    func with(_ key: String, _ value: JSON) -> JSONObject {
        var copy = self
        copy[key] = value
        return copy
    }
}

/// `models.NewAuditLogEntry`: the payload is a Go map stored through `JSONMap.Value`
/// (`json.Marshal`), so its text has sorted keys, and `actor_name` is whatever the metadata's
/// `full_name` holds.
@Suite struct AuditLogPayloadTests {
    private func storedPayloads(_ api: GoTrueAPI) throws -> [String] {
        try api.project.database.read { conn in
            try conn.auditLogEntries(columns: [], value: "", paging: Paging(page: 1, perPage: 50)).items.map(\.payload)
        }
    }

    /// A `null` full_name is gone from user_metadata before the entry is made (the sign-up's
    /// `UpdateUserMetaData` deletes null values), so that entry has no `actor_name`.
    @Test(arguments: [
        (JSON.number(42), "42"), (.null, nil), (.string("Ada <L>"), #""Ada \u003cL\u003e""#),
        (.object(["b": 1, "a": .object(["z": true, "y": false])]), #"{"a":{"y":false,"z":true},"b":1}"#),
    ] as [(JSON, String?)])
    func storedTextHasSortedKeysAndAnyFullName(name: JSON, written: String?) throws {
        let api = try makeAPI()
        let user = api.signUp("named@example.com", data: .object(["full_name": name, "plan": "pro"]))
        let id = try #require(user["user"]?["id"]?.stringValue ?? user["id"]?.stringValue)
        let payloads = try storedPayloads(api)
        let signedUp = try #require(payloads.first { $0.contains(#""action":"user_signedup""#) })
        let actorName = written.map { #""actor_name":\#($0),"# } ?? ""
        #expect(signedUp == """
            {"action":"user_signedup","actor_id":"\(id)",\(actorName)"actor_username":"named@example.com",\
            "actor_via_sso":false,"log_type":"team","traits":{"provider":"email"}}
            """)
    }

    @Test func withoutFullNameThereIsNoActorName() throws {
        let api = try makeAPI()
        _ = api.signUp("plain@example.com", data: .object(["fullname": "x"]))
        for payload in try storedPayloads(api) {
            #expect(!payload.contains("actor_name"))
            #expect(payload.hasPrefix(#"{"action":"#))
        }
    }

    /// A refresh's two entries are written together but stored as two entries, each with its
    /// own id, in GoTrue's order.
    @Test func aRefreshStoresTwoEntries() throws {
        let api = try makeAPI()
        let session = api.signUp("pair@example.com", data: .object(["full_name": "Pat Pair"]))
        let userID = try #require(session["user"]?["id"]?.stringValue)
        #expect(api.refresh(session["refresh_token"]?.stringValue ?? "").status == 200)
        let entries = try api.project.database.read { conn in
            try conn.auditLogEntries(columns: [], value: "", paging: Paging(page: 1, perPage: 2)).items
        }
        #expect(entries.map(\.payload) == ["token_revoked", "token_refreshed"].map { action in
            """
            {"action":"\(action)","actor_id":"\(userID)","actor_name":"Pat Pair","actor_username":"pair@example.com",\
            "actor_via_sso":false,"log_type":"token"}
            """
        })
        #expect(entries.count == 2 && entries[0].id != entries[1].id)
        #expect(entries.allSatisfy { $0.ipAddress == "" })
    }

    /// `ActionLogTypeMap`: e.g. an OAuth invite acceptance is an `account` event, not a `user` one.
    @Test func eachActionHasGoTruesLogType() {
        let byType = Dictionary(grouping: [AuditAction.login, .logout, .inviteAccepted, .userSignedUp, .userInvited, .userDeleted,
                                           .tokenRevoked, .tokenRefreshed, .userModified, .identityLinked, .passkeyDeleted,
                                           .factorInProgress, .verificationAttempted], by: \.logType)
        #expect(byType["account"]?.map(\.rawValue) == ["login", "logout", "invite_accepted"])
        #expect(byType["team"]?.map(\.rawValue) == ["user_signedup", "user_invited", "user_deleted"])
        #expect(byType["token"]?.map(\.rawValue) == ["token_revoked", "token_refreshed"])
        #expect(byType["user"]?.map(\.rawValue) == ["user_modified", "identity_linked", "passkey_deleted"])
        #expect(byType["factor"]?.map(\.rawValue) == ["factor_in_progress", "verification_attempted"])
    }

    @Test func idsAreVersionFourUUIDsInGoTruesForm() throws {
        #expect(UUIDText.format(Array(0..<16)) == "00010203-0405-0607-0809-0a0b0c0d0e0f")
        #expect(UUIDText.format([UInt8](repeating: 0xFF, count: 16)) == "ffffffff-ffff-ffff-ffff-ffffffffffff")
        let environment = try makeAPI().project.environment
        for _ in 0..<64 {
            let id = Array(environment.uuid().utf8)
            #expect(id.count == 36)
            for (i, c) in id.enumerated() {
                if [8, 13, 18, 23].contains(i) {
                    #expect(c == UInt8(ascii: "-"))
                } else {
                    #expect(Array("0123456789abcdef".utf8).contains(c))
                }
            }
            #expect(id[14] == UInt8(ascii: "4"))  // RFC 9562 §5.4: version 4
            #expect(Array("89ab".utf8).contains(id[19]))  // variant 10xx
        }
    }

    /// `GOTRUE_AUDIT_LOG_DISABLE_POSTGRES`: GoTrue logs the event and stores nothing.
    @Test func disablePostgresStoresNothing() throws {
        let api = try makeAPI { $0.auditLogDisablePostgres = true }
        let session = api.signUp("quiet@example.com")
        #expect(session["access_token"]?.stringValue != nil)
        #expect(api.signIn("quiet@example.com").status == 200)
        #expect(try storedPayloads(api).isEmpty)
        let listed = api.admin("GET", "/admin/audit")
        #expect(listed.status == 200)
        #expect(listed.json.arrayValue?.isEmpty == true)
        #expect(listed.headers["X-Total-Count"] == "0")
    }
}
