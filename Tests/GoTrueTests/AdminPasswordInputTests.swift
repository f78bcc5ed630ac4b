import AuthCrypto
import AuthHTTP
import AuthJSON
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// Passwords and password hashes the admin API and fixtures refuse, answered as the real server
/// answers them (internal/api/admin.go, models/user.go `NewUserWithPasswordHash`, crypto/password.go,
/// golang.org/x/crypto/bcrypt `Cost`).
@Suite struct AdminPasswordInputTests {
    /// 60 characters, cost 10, nothing but `!` after the prefix: bcrypt.Cost reads only the
    /// prefix, so the real server stores it; no password matches it.
    static let laxBcrypt = "$2a$10$" + String(repeating: "!", count: 53)

    @Test func createWithAPasswordOverBcryptsLimitIsTheRecoveredPanic() throws {
        let api = try makeAPI()
        let long = api.admin("POST", "/admin/users", ["email": "long@example.com", "password": .string(String(repeating: "p", count: 73))])
        // `must(bcrypt.GenerateFromPassword(...))` panics; `recoverer` answers an HTTPError with
        // no code and the status text.
        #expect(long.status == 500)
        #expect(long.json["msg"] == "Internal Server Error")
        #expect(long.json["error_code"] == "unexpected_failure")
        #expect(long.headers["x-sb-error-code"] == nil)
        // 72 bytes (36 two-byte characters) is within the limit.
        let atLimit = api.admin("POST", "/admin/users", ["email": "at@example.com", "password": .string(String(repeating: "é", count: 36))])
        #expect(atLimit.status == 200)
        #expect(api.admin("GET", "/admin/users").headers["X-Total-Count"] == "1")
    }

    @Test func updateChecksTheLengthFirst() throws {
        let api = try makeAPI()
        let id = try #require(api.createUser(["email": "u@example.com", "password": "secret12", "email_confirm": true])["id"]?.stringValue)
        for password in [String(repeating: "p", count: 73), String(repeating: "é", count: 37)] {
            let response = api.admin("PUT", "/admin/users/\(id)", ["password": .string(password)])
            #expect(response.status == 400)
            #expect(errorCode(response) == "validation_failed")
            #expect(response.json["msg"] == "Password cannot be longer than 72 characters")
        }
        // `password_hash` is not read by the update, as in adminUserUpdate.
        #expect(api.admin("PUT", "/admin/users/\(id)", ["password_hash": "plain"]).status == 200)
        #expect(api.signIn("u@example.com", "secret12").status == 200)
    }

    @Test(arguments: [
        "plain",
        "$2a$99$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki",  // cost above 31
        "$2a$03$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki",  // cost below 4
        "$2a$1x$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki",  // not a number
        "$3a$10$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki",  // version above 2
        "x2a$10$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki",
    ])
    func hashesBcryptCostRefusesAreErrorCreatingUser(_ hash: String) throws {
        let api = try makeAPI()
        let response = api.admin("POST", "/admin/users", ["email": "h@example.com", "password_hash": .string(hash)])
        #expect(response.status == 500)
        #expect(errorCode(response) == "unexpected_failure")
        #expect(response.json["msg"] == "Error creating user")
        #expect(AdminEndpoints.goBcryptCostError(hash) != nil)
        #expect(api.admin("GET", "/admin/users").headers["X-Total-Count"] == "0")
    }

    @Test func goBcryptCostErrorTexts() {
        #expect(AdminEndpoints.goBcryptCostError("plain") == "crypto/bcrypt: hashedSecret too short to be a bcrypt password")
        #expect(AdminEndpoints.goBcryptCostError("$2a$99$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki")
                == "crypto/bcrypt: cost 99 is outside allowed inclusive range 4..31")
        #expect(AdminEndpoints.goBcryptCostError("$2a$1x$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki")
                == #"strconv.Atoi: parsing "1x": invalid syntax"#)
        #expect(AdminEndpoints.goBcryptCostError(bcryptFixture) == nil)
        #expect(AdminEndpoints.goBcryptCostError(Self.laxBcrypt) == nil)
        #expect(AdminEndpoints.goBcryptCostError("$2$+5$" + String(repeating: "a", count: 53)) == nil)
    }

    @Test func aHashBcryptCostAcceptsIsStoredAsGiven() throws {
        let api = try makeAPI()
        let response = api.admin("POST", "/admin/users", ["email": "lax@example.com", "password_hash": .string(Self.laxBcrypt),
                                                          "email_confirm": true])
        #expect(response.status == 200)
        #expect(errorCode(api.signIn("lax@example.com", "anything")) == "invalid_credentials")
    }

    /// The emulator's own PBKDF2 strings: only what its verifier checks (a cost up to
    /// 10,000,000), so no imported hash can hold a worker for minutes at sign-in.
    @Test(arguments: [
        "$pbkdf2-sha256$i=99999999,l=32$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$pbkdf2-sha256$i=99999999999999,l=32$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$pbkdf2-sha256$i=0,l=32$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$pbkdf2-sha256$i=1000,l=33$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$pbkdf2-sha256$i=1000$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
    ])
    func pbkdf2HashesOutsideTheVerifiersLimitsAre400(_ hash: String) throws {
        let api = try makeAPI()
        let response = api.admin("POST", "/admin/users", ["email": "p@example.com", "password_hash": .string(hash)])
        #expect(response.status == 400)
        #expect(errorCode(response) == "validation_failed")
        #expect(response.json["msg"]?.stringValue?.hasPrefix("Invalid $pbkdf2-sha256$ password hash") == true)
        #expect(api.admin("GET", "/admin/users").headers["X-Total-Count"] == "0")

        let (control, _) = try makeControlAPI()
        let fixture = control.controlRaw("POST", "/emulator/v1/seed",
                                         body: #"{"users":[{"email":"f@example.com","password_hash":"\#(hash)"}]}"#)
        #expect(fixture.status == 400)
        #expect(fixture.json["msg"]?.stringValue?.hasPrefix("invalid fixture: users[0].password_hash: Invalid $pbkdf2-sha256$") == true)
    }

    @Test func fixturesNameBcryptsReason() throws {
        let (api, _) = try makeControlAPI()
        let fixture = api.controlRaw("POST", "/emulator/v1/seed",
                                     body: #"{"users":[{"email":"f@example.com","password_hash":"$2a$99$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki"}]}"#)
        #expect(fixture.status == 400)
        #expect(fixture.json["msg"] == "invalid fixture: users[0].password_hash: not a supported hash (bcrypt $2a$/$2b$/$2y$, $argon2i$, $argon2id$, $fbscrypt$ or $pbkdf2-sha256$): crypto/bcrypt: cost 99 is outside allowed inclusive range 4..31")
    }
}
