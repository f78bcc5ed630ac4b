import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import GoFormats
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §5.16-5.19 and §11 (internal/api/token_oidc.go, external.go,
// identity.go, models/linking.go).

/// A project with Google and Apple enabled for the id_token grant and the OAuth flow.
/// Google on, with the client id `google-client` (and `secret` when given) the tests' id tokens
/// and fake-provider flows use.
func enableGoogle(_ config: inout Configuration, secret: String? = "google-secret") {
    var google = OAuthProviderSettings()
    google.enabled = true
    google.clientIDs = ["google-client"]
    if let secret { google.secret = secret }
    config.external.providers["google"] = google
}

private func socialAPI(clock: ManualClock = ManualClock(), configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    try makeAPI(clock: clock) { config in
        enableGoogle(&config)
        var apple = OAuthProviderSettings()
        apple.enabled = true
        apple.clientIDs = ["com.example.service"]
        apple.secret = "apple-secret"
        config.external.providers["apple"] = apple
        config.external.iosBundleID = "com.example.app"
        configure(&config)
    }
}

private func sha256Hex(_ text: String) -> String { Hex.encode(SHA256.hash(data: Array(text.utf8))) }

/// An unsigned-looking foreign JWT (as from a real provider): header and claims, any signature.
private func foreignToken(_ claims: JSONObject) -> String {
    let header: JSONObject = ["alg": "RS256", "kid": "real-provider-key", "typ": "JWT"]
    return Base64URL.encode(header.serializedBytes()) + "." + Base64URL.encode(claims.serializedBytes()) + "."
        + Base64URL.encode(Array(repeating: 7, count: 256))
}

extension GoTrueAPI {
    var serviceHeaders: HTTPHeaders { ["apikey": project.configuration.apiKeys.serviceRole] }

    func idTokenGrant(_ body: JSONObject, bearer: String? = nil) -> HTTPResponse {
        call("POST", "/token?grant_type=id_token", .object(body), bearer: bearer)
    }

    func mint(_ provider: String, _ body: JSONObject) -> String {
        call("POST", "/emulator/v1/idp/\(provider)/id_token", .object(body), headers: serviceHeaders)
            .json["id_token"]?.stringValue ?? ""
    }

    /// Follows a redirect to this server in-process (scheme and host stripped).
    func follow(_ location: String) -> HTTPResponse {
        var target = Substring(location)
        if let scheme = target.firstIndex(of: ":"), target[scheme...].hasPrefix("://") {
            let rest = target[target.index(scheme, offsetBy: 3)...]
            target = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
        }
        return call("GET", String(target))
    }
}

/// `IsDuplicatedEmail`: an address is taken when another account of the audience has it on an
/// identity, even after that account's own email moved on.
@Suite struct DuplicateEmailThroughIdentitiesTests {
    @Test func anIdentitysEmailIsTaken() throws {
        let api = try socialAPI()
        let other = api.idTokenGrant(["provider": "google", "id_token": .string(api.mint("google", ["sub": "g-9", "email": "held@example.com"]))])
        let otherID = try #require(other.json["user"]?["id"]?.stringValue)
        #expect(api.admin("PUT", "/admin/users/\(otherID)", ["email": "moved@example.com"]).status == 200)
        let token = api.signUp("asker@example.com")["access_token"]?.stringValue
        let change = api.call("PUT", "/user", ["email": "held@example.com"], bearer: token)
        #expect(change.status == 422)
        #expect(errorCode(change) == "email_exists")
        #expect(try api.messages(to: "held@example.com").isEmpty)
        // Admin create and an email-change link ask the same question.
        #expect(errorCode(api.admin("POST", "/admin/users", ["email": "held@example.com"])) == "email_exists")
        let link = api.admin("POST", "/admin/generate_link", ["type": "email_change_new", "email": "asker@example.com",
                                                              "new_email": "held@example.com"])
        #expect(errorCode(link) == "email_exists")
    }
}

@Suite struct IdTokenGrantTests {
    /// `parseSnapchatIDToken`: the generic claims, an email always verified; `updated_at` is a
    /// `UnixTimeOrString` (seconds or RFC 3339), stored as Go marshals a time.
    @Test func snapchatTokensAndTheUpdatedAtClaim() throws {
        let api = try socialAPI { config in
            config.enableProvider("snapchat", clientID: "snapcid")
            config.mailer.autoconfirm = false
        }
        func grant(_ claims: String) -> HTTPResponse { api.idTokenGrant(["provider": "snapchat", "id_token": .string(claims)]) }
        let first = grant(#"{"sub":"s1","aud":"snapcid","email":"snap@example.com","updated_at":1700000000}"#)
        #expect(first.status == 200, "\(first.text)")
        #expect(first.json["user"]?["email_confirmed_at"]?.stringValue != nil)
        let data = first.json["user"]?["identities"]?[0]?["identity_data"]
        #expect(data?["email_verified"] == true)
        #expect(data?["updated_at"] == "2023-11-14T22:13:20Z")
        #expect(first.json["user"]?["user_metadata"]?["updated_at"] == "2023-11-14T22:13:20Z")
        let offset = grant(#"{"sub":"s2","aud":"snapcid","email":"snap2@example.com","updated_at":"2024-01-02T03:04:05.500+02:00"}"#)
        #expect(offset.json["user"]?["identities"]?[0]?["identity_data"]?["updated_at"] == "2024-01-02T01:04:05.5Z")
        for bad in [#""yesterday""#, "true", "{}"] {
            let refused = grant(#"{"sub":"s3","aud":"snapcid","email":"snap3@example.com","updated_at":\#(bad)}"#)
            #expect(refused.text == #"{"error":"invalid request","error_description":"Bad ID token"}"#, "\(bad)")
        }
    }

    /// Two accounts already answer to one email in the default linking domain (an unverified
    /// sign-up keeps its identity's email but not the account's): a third identity with that
    /// email is `NewInternalServerError`'s 500, code `unexpected_failure`.
    @Test func multipleAccountsForOneEmailIsAnUnexpectedFailure() throws {
        // Mailer autoconfirm off, or every provider email counts as verified.
        let api = try socialAPI { $0.mailer.autoconfirm = false }
        let first = api.idTokenGrant(["provider": "apple", "id_token": .string(api.mint("apple", ["sub": "a-1", "email": "twice@example.com"]))])
        #expect(first.status == 200, "\(first.text)")
        let second = api.idTokenGrant(["provider": "google", "id_token": .string(api.mint("google", [
            "sub": "g-1", "email": "twice@example.com", "email_verified": false,
        ]))])
        // A new account, stored though its email still needs confirming.
        #expect(errorCode(second) == "provider_email_needs_verification")
        let third = api.idTokenGrant(["provider": "google", "id_token": .string(api.mint("google", [
            "sub": "g-2", "email": "twice@example.com", "email_verified": true,
        ]))])
        #expect(third.status == 500)
        #expect(third.json["error_code"] == "unexpected_failure")
        #expect(third.json["msg"] == "Multiple accounts with the same email address in the same linking domain detected: default")
    }

    @Test func parameterErrors() throws {
        let api = try socialAPI()
        let missing = api.idTokenGrant(["provider": "google"])
        #expect(missing.status == 400)
        #expect(missing.text == #"{"error":"invalid request","error_description":"id_token required"}"#)
        let noProvider = api.idTokenGrant(["id_token": "x"])
        #expect(noProvider.json["error_description"] == "provider or client_id and issuer required")
        let link = api.idTokenGrant(["id_token": "x", "provider": "google", "link_identity": true])
        #expect(link.json["error_description"] == "Linking requires a valid user access token in Authorization")
        let custom = api.idTokenGrant(["id_token": "x", "provider": "custom:acme"])
        #expect(errorCode(custom) == "validation_failed")
        let unknown = api.idTokenGrant(["id_token": "x", "client_id": "c", "issuer": "https://issuer.example"])
        #expect(unknown.json["msg"] == "Custom OIDC provider \"\" not allowed")
    }

    @Test func disabledProvider() throws {
        let api = try socialAPI()
        let response = api.idTokenGrant(["id_token": #"{"sub":"1","aud":"k"}"#, "provider": "kakao"])
        #expect(response.status == 400)
        #expect(errorCode(response) == "provider_disabled")
        #expect(response.json["msg"] == #"Provider (issuer "https://kauth.kakao.com") is not enabled"#)
    }

    @Test func plainClaimsSignInAndAccountReuse() throws {
        let api = try socialAPI()
        let plain = #"{"sub":"10769150350006150715113082367","aud":"google-client","email":"Ann@Example.com","email_verified":true,"name":"Ann","picture":"https://img/ann.png"}"#
        let first = api.idTokenGrant(["id_token": .string(plain), "provider": "google"])
        #expect(first.status == 200)
        let user = try #require(first.json["user"])
        #expect(user["email"] == "ann@example.com")
        #expect(user["email_confirmed_at"]?.stringValue != nil)
        #expect(user["app_metadata"] == ["provider": "google", "providers": ["google"]])
        #expect(user["user_metadata"]?["full_name"] == "Ann")
        #expect(user["user_metadata"]?["avatar_url"] == "https://img/ann.png")
        let identity = try #require(user["identities"]?[0])
        #expect(identity["provider"] == "google")
        #expect(identity["id"] == "10769150350006150715113082367")
        #expect(identity["identity_data"]?["provider_id"] == "10769150350006150715113082367")
        #expect(identity["identity_data"]?["email_verified"] == true)
        let amr = claims(of: first.json["access_token"]!.stringValue!)["amr"]
        #expect(amr?[0]?["method"] == "oauth")

        // The same subject signs in to the same account.
        let again = api.idTokenGrant(["id_token": .string(plain), "provider": "google"])
        #expect(again.json["user"]?["id"] == user["id"])
    }

    /// `models.NewUser` without a password stores an empty hash; a new user with an email then
    /// goes through `RemoveUnconfirmedIdentities` before its confirmation (external.go), which
    /// sets the hash to NULL. So: NULL with an email, '' without one (a provider whose email
    /// is optional, `GOTRUE_EXTERNAL_GOOGLE_EMAIL_OPTIONAL`).
    @Test func aProviderMadeUserKeepsAnEmptyHashOnlyWithoutAnEmail() throws {
        let api = try socialAPI { $0.external.providers["google"]?.emailOptional = true }
        func storedHash(_ claims: String) throws -> String? {
            let grant = api.idTokenGrant(["id_token": .string(claims), "provider": "google"])
            #expect(grant.status == 200)
            let id = try #require(grant.json["user"]?["id"]?.stringValue)
            return try api.project.database.read {
                try $0.scalar(portable: "SELECT encrypted_password FROM users WHERE id = ?", .text(id)).stringValue
            }
        }
        #expect(try storedHash(#"{"sub":"42","aud":"google-client","email":"bo@example.com","email_verified":true}"#) == nil)
        #expect(try storedHash(#"{"sub":"43","aud":"google-client"}"#) == "")
    }

    @Test func audienceAndSubjectChecks() throws {
        let api = try socialAPI()
        let wrong = api.idTokenGrant(["id_token": #"{"sub":"1","aud":["x","y"]}"#, "provider": "google"])
        #expect(wrong.text == #"{"error":"invalid request","error_description":"Unacceptable audience in id_token: [x y]"}"#)
        let noSub = api.idTokenGrant(["id_token": #"{"aud":"google-client"}"#, "provider": "google"])
        #expect(noSub.json["error_description"] == "Missing sub claim in id_token")
        let bad = api.idTokenGrant(["id_token": "{not json", "provider": "google"])
        #expect(bad.json["error_description"] == "Bad ID token")
        let wrongType = api.idTokenGrant(["id_token": #"{"sub":"1","aud":"google-client","email_verified":"yes"}"#, "provider": "google"])
        #expect(wrongType.json["error_description"] == "Bad ID token")
    }

    @Test func nonceRules() throws {
        let api = try socialAPI()
        let hashed = sha256Hex("raw-nonce")
        let token = #"{"sub":"n1","aud":"com.example.app","email":"n@example.com","nonce":"\#(hashed)"}"#
        let right = api.idTokenGrant(["id_token": .string(token), "provider": "apple", "nonce": "raw-nonce"])
        #expect(right.status == 200)
        let wrong = api.idTokenGrant(["id_token": .string(token), "provider": "apple", "nonce": "other"])
        #expect(wrong.text == #"{"error":"invalid nonce","error_description":"Nonces mismatch"}"#)
        let missing = api.idTokenGrant(["id_token": .string(token), "provider": "apple"])
        #expect(missing.json["error_description"] == "Passed nonce and nonce in id_token should either both exist or not.")
        let unexpected = api.idTokenGrant(["id_token": #"{"sub":"n1","aud":"com.example.app"}"#, "provider": "apple", "nonce": "raw"])
        #expect(unexpected.json["error_description"] == "Passed nonce and nonce in id_token should either both exist or not.")
        // SKIP_NONCE_CHECK turns the rule off.
        api.project.configuration.external.providers["apple"]?.skipNonceCheck = true
        #expect(api.idTokenGrant(["id_token": .string(token), "provider": "apple", "nonce": "other"]).status == 200)
    }

    @Test func appleIssuerDetectionAndPrivateRelay() throws {
        let api = try socialAPI()
        let notApple = api.idTokenGrant(["id_token": #"{"iss":"https://accounts.google.com","sub":"1","aud":"com.example.app"}"#,
                                         "provider": "apple"])
        #expect(notApple.json["msg"] == "Detected ID token issuer is not an Apple ID token issuer")
        let mismatch = api.idTokenGrant(["id_token": #"{"iss":"https://appleid.apple.com","sub":"1","aud":"com.example.app"}"#,
                                         "provider": "apple", "issuer": "https://account.apple.com"])
        #expect(mismatch.json["msg"] == "Provided issuer does not match ID token issuer")
        // Apple vouches for relay addresses even when `email_verified` is absent.
        let relay = api.idTokenGrant(["id_token": #"{"iss":"https://appleid.apple.com","sub":"001.abc.002","aud":"com.example.service","email":"x1@privaterelay.appleid.com","is_private_email":"true"}"#,
                                      "provider": "apple"])
        #expect(relay.status == 200)
        #expect(relay.json["user"]?["email_confirmed_at"]?.stringValue != nil)
        #expect(relay.json["user"]?["identities"]?[0]?["identity_data"]?["custom_claims"] == ["is_private_email": true])
    }

    /// Azure runs the same three issuer checks as Apple, with its own name in the messages.
    @Test func azureIssuerDetection() throws {
        let api = try socialAPI()
        let unreadable = api.idTokenGrant(["id_token": "{not json", "provider": "azure"])
        #expect(unreadable.status == 400)
        #expect(unreadable.json["msg"] == "Unable to detect issuer in ID token for Azure provider")
        let appleUnreadable = api.idTokenGrant(["id_token": "{not json", "provider": "apple"])
        #expect(appleUnreadable.json["msg"] == "Unable to detect issuer in ID token for Apple provider")
        // A JWT's payload is read into a struct with a string `iss`: absent or null is "", so
        // the issuer is the wrong one; another type cannot be read. The header is not read.
        func jwt(_ payload: String, header: String = #"{"alg":"RS256"}"#) -> JSON {
            .string(Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + ".c2ln")
        }
        for payload in [#"{"sub":"1"}"#, #"{"iss":null}"#, "null"] {
            for (provider, name) in [("apple", "Apple"), ("azure", "Azure")] {
                let answer = api.idTokenGrant(["id_token": jwt(payload, header: "not a header"), "provider": .string(provider)])
                #expect(answer.json["msg"] == .string("Detected ID token issuer is not an \(name) ID token issuer"), "\(payload)")
            }
        }
        for payload in [#"{"iss":7}"#, "[1]", "{"] {
            let answer = api.idTokenGrant(["id_token": jwt(payload), "provider": "azure"])
            #expect(answer.json["msg"] == "Unable to detect issuer in ID token for Azure provider", "\(payload)")
        }
        #expect(api.idTokenGrant(["id_token": "a.b", "provider": "apple"]).json["msg"]
                == "Unable to detect issuer in ID token for Apple provider")
        let notAzure = api.idTokenGrant(["id_token": #"{"iss":"https://accounts.google.com","sub":"1","aud":"x"}"#,
                                         "provider": "azure"])
        #expect(notAzure.json["msg"] == "Detected ID token issuer is not an Azure ID token issuer")
        let mismatch = api.idTokenGrant(["id_token": #"{"iss":"https://login.microsoftonline.com/t1/v2.0","sub":"1","aud":"x"}"#,
                                         "provider": "azure", "issuer": "https://login.microsoftonline.com/t2/v2.0"])
        #expect(mismatch.status == 400)
        #expect(mismatch.json["error_code"] == "validation_failed")
        #expect(mismatch.json["msg"] == "Provided issuer does not match ID token issuer")
    }

    @Test func realProviderTokenAcceptedUnlessStrict() throws {
        let clock = ManualClock()
        let api = try socialAPI(clock: clock)
        let now = clock.now().unixSeconds
        let token = foreignToken(["iss": "https://accounts.google.com", "aud": "google-client", "sub": "real-1",
                                  "email": "real@example.com", "email_verified": true, "exp": .number(now + 600)])
        #expect(api.idTokenGrant(["id_token": .string(token), "provider": "google"]).status == 200)
        let expired = foreignToken(["iss": "https://accounts.google.com", "aud": "google-client", "sub": "real-1",
                                    "exp": .number(now - 1)])
        #expect(api.idTokenGrant(["id_token": .string(expired), "provider": "google"]).json["error_description"] == "Bad ID token")
        let otherIssuer = foreignToken(["iss": "https://evil.example", "aud": "google-client", "sub": "real-1",
                                        "exp": .number(now + 600)])
        #expect(api.idTokenGrant(["id_token": .string(otherIssuer), "provider": "google"]).json["error_description"] == "Bad ID token")
        api.project.configuration.identityProviders.strictIDTokens = true
        #expect(api.idTokenGrant(["id_token": .string(token), "provider": "google"]).json["error_description"] == "Bad ID token")
        #expect(api.idTokenGrant(["id_token": #"{"sub":"1","aud":"google-client"}"#, "provider": "google"])
            .json["error_description"] == "Bad ID token")
    }

    @Test func emulatorSignedTokensAreVerified() throws {
        let clock = ManualClock()
        let api = try socialAPI(clock: clock)
        let token = api.mint("google", ["email": "minted@example.com", "nonce": "n-1"])
        #expect(token.split(separator: ".").count == 3)
        let ok = api.idTokenGrant(["id_token": .string(token), "provider": "google", "nonce": "n-1"])
        #expect(ok.status == 200)
        #expect(ok.json["user"]?["email"] == "minted@example.com")
        // A flipped signature byte fails the check.
        var parts = token.split(separator: ".").map(String.init)
        var signature = try Base64URL.decode(parts[2])
        signature[5] ^= 1
        parts[2] = Base64URL.encode(signature)
        let tampered = parts.joined(separator: ".")
        #expect(api.idTokenGrant(["id_token": .string(tampered), "provider": "google", "nonce": "n-1"])
            .json["error_description"] == "Bad ID token")
        // Expiry follows the virtual clock.
        clock.advance(seconds: 3601)
        #expect(api.idTokenGrant(["id_token": .string(token), "provider": "google", "nonce": "n-1"])
            .json["error_description"] == "Bad ID token")
    }

    @Test func linkingByVerifiedEmailAndLinkIdentity() throws {
        let api = try socialAPI()
        let session = api.signUp("link@example.com")
        let userID = session["user"]?["id"]
        // A verified provider email matching an existing account links to it.
        let google = api.idTokenGrant(["id_token": #"{"sub":"g-1","aud":"google-client","email":"link@example.com","email_verified":true}"#,
                                       "provider": "google"])
        #expect(google.json["user"]?["id"] == userID)
        #expect(google.json["user"]?["app_metadata"]?["providers"] == ["email", "google"])
        // The answer's identities are the ones loaded before the link (GoTrue does not reload
        // them): the new Google identity is stored but not listed yet.
        #expect(google.json["user"]?["identities"]?.arrayValue?.map { $0["provider"] } == ["email"])
        // `link_identity` adds an Apple identity to the signed-in user.
        let bearer = google.json["access_token"]!.stringValue!
        let linked = api.idTokenGrant(["id_token": #"{"sub":"a-1","aud":"com.example.app","email":"other@example.com"}"#,
                                       "provider": "apple", "link_identity": true], bearer: bearer)
        #expect(linked.status == 200)
        #expect(linked.json["user"]?["identities"]?.arrayValue?.map { $0["provider"] } == ["email", "google"])
        let stored = api.call("GET", "/user", bearer: linked.json["access_token"]?.stringValue)
        #expect(stored.json["identities"]?.arrayValue?.map { $0["provider"] } == ["email", "google", "apple"])
        // A returning identity's new data is stored; the answer shows the identity as loaded.
        let returning = api.idTokenGrant(["id_token": #"{"sub":"g-1","aud":"google-client","email":"link@example.com","email_verified":true,"name":"Second"}"#,
                                          "provider": "google"])
        #expect(returning.status == 200)
        #expect(returning.json["user"]?["user_metadata"]?["name"] == "Second")
        let listed = returning.json["user"]?["identities"]?.arrayValue?.first { $0["provider"] == "google" }
        #expect(listed?["identity_data"]?["name"] == nil)
        let storedGoogle = api.call("GET", "/user", bearer: returning.json["access_token"]?.stringValue).json["identities"]?
            .arrayValue?.first { $0["provider"] == "google" }
        #expect(storedGoogle?["identity_data"]?["name"] == "Second")
        let again = api.idTokenGrant(["id_token": #"{"sub":"a-1","aud":"com.example.app"}"#, "provider": "apple",
                                      "link_identity": true], bearer: bearer)
        #expect(again.status == 422)
        #expect(errorCode(again) == "identity_already_exists")
        #expect(again.json["msg"] == "Identity is already linked")
    }

    @Test func unverifiedEmailNeedsConfirmationWhenAutoconfirmOff() throws {
        let api = try socialAPI { $0.mailer.autoconfirm = false }
        let response = api.idTokenGrant(["id_token": #"{"sub":"u-1","aud":"google-client","email":"unv@example.com","email_verified":false}"#,
                                         "provider": "google"])
        #expect(response.status == 422)
        #expect(errorCode(response) == "provider_email_needs_verification")
        #expect(response.json["msg"] == "Unverified email with google. A confirmation email has been sent to your google email")
        // The account and its confirmation email were kept (the error commits).
        let count = try api.project.database.read { try $0.scalar(portable: "SELECT count(*) FROM users").int64Value }
        #expect(count == 1)
    }

    @Test func anonymousUserUpgradedByLinking() throws {
        let api = try socialAPI { $0.external.anonymousUsersEnabled = true }
        let anon = api.call("POST", "/signup", [:]).json
        let bearer = anon["access_token"]!.stringValue!
        let linked = api.idTokenGrant(["id_token": #"{"sub":"g-anon","aud":"google-client","email":"anon@example.com","email_verified":true}"#,
                                       "provider": "google", "link_identity": true], bearer: bearer)
        #expect(linked.status == 200)
        #expect(linked.json["user"]?["is_anonymous"] == false)
        #expect(linked.json["user"]?["email"] == "anon@example.com")
        #expect(linked.json["user"]?["id"] == anon["user"]?["id"])
    }
}

@Suite struct IdTokenProviderResolutionTests {
    /// `provider.IsAzureIssuer` picks Azure from the request's `issuer` only for
    /// `https://login.microsoftonline.com/<tenant>/v2.0`; any other Microsoft URL is an unknown
    /// custom issuer.
    @Test func azureIsPickedOnlyByItsV2Issuer() throws {
        let api = try socialAPI()
        for issuer in ["https://sts.windows.net/t/", "https://login.microsoftonline.com/t/oauth2"] {
            let r = api.idTokenGrant(["id_token": "a.b.c", "issuer": .string(issuer), "client_id": "cid"])
            #expect(r.json["msg"] == #"Custom OIDC provider "" not allowed"#, "\(issuer): \(r.text)")
        }
        let v2 = api.idTokenGrant(["id_token": "a.b.c", "issuer": "https://login.microsoftonline.com/t/v2.0/", "client_id": "cid"])
        #expect(v2.json["msg"] == "Unable to detect issuer in ID token for Azure provider")
    }

    @Test func deprecatedIssuerFormUsesTheRequestClientID() throws {
        let api = try socialAPI()
        let token = #"{"iss":"https://idp.example","sub":"c-1","aud":"my-client","email":"c@example.com","email_verified":true}"#
        let refused = api.idTokenGrant(["id_token": .string(token), "issuer": "https://idp.example", "client_id": "my-client"])
        #expect(refused.json["msg"] == #"Custom OIDC provider "" not allowed"#)
        api.project.configuration.external.allowedIDTokenIssuers.append("https://idp.example")
        let ok = api.idTokenGrant(["id_token": .string(token), "issuer": "https://idp.example", "client_id": "my-client"])
        #expect(ok.status == 200)
        // The provider type of such an identity is the issuer itself.
        #expect(ok.json["user"]?["identities"]?[0]?["provider"] == "https://idp.example")
        let otherClient = api.idTokenGrant(["id_token": .string(token), "issuer": "https://idp.example", "client_id": "x"])
        #expect(otherClient.json["error_description"] == "Unacceptable audience in id_token: [my-client]")
    }

    @Test func facebookNeverChecksTheNonceAndKeycloakMatchesItsURL() throws {
        let api = try socialAPI { config in
            var facebook = OAuthProviderSettings()
            facebook.enabled = true
            facebook.clientIDs = ["fb-app"]
            config.external.providers["facebook"] = facebook
            var keycloak = OAuthProviderSettings()
            keycloak.enabled = true
            keycloak.clientIDs = ["kc-client"]
            keycloak.url = "https://kc.example/realms/test"
            config.external.providers["keycloak"] = keycloak
        }
        let fb = api.idTokenGrant(["id_token": #"{"sub":"f-1","aud":"fb-app","email":"f@example.com","nonce":"whatever"}"#,
                                   "provider": "facebook", "nonce": "different"])
        #expect(fb.status == 200)
        #expect(fb.json["user"]?["email_confirmed_at"]?.stringValue != nil)
        let kc = api.idTokenGrant(["id_token": #"{"iss":"https://kc.example/realms/test","sub":"k-1","aud":"kc-client","email":"k@example.com","email_verified":true,"preferred_username":"kay"}"#,
                                   "issuer": "https://kc.example/realms/test", "client_id": "ignored"])
        #expect(kc.status == 200)
        #expect(kc.json["user"]?["identities"]?[0]?["provider"] == "keycloak")
        #expect(kc.json["user"]?["user_metadata"]?["preferred_username"] == "kay")
    }

    @Test func atHashIsCheckedWhenAnAccessTokenIsGiven() throws {
        let api = try socialAPI()
        let atHash = Base64URL.encode(Array(SHA256.hash(data: Array("provider-access".utf8)).prefix(16)))
        let token = #"{"sub":"h-1","aud":"google-client","at_hash":"\#(atHash)"}"#
        #expect(api.idTokenGrant(["id_token": .string(token), "provider": "google", "access_token": "provider-access"]).status == 200)
        #expect(api.idTokenGrant(["id_token": .string(token), "provider": "google", "access_token": "other"])
            .json["error_description"] == "Bad ID token")
        // Without an access token the hash is not checked.
        #expect(api.idTokenGrant(["id_token": .string(token), "provider": "google"]).status == 200)
    }

    @Test func signupDisabledAndBannedUsers() throws {
        let clock = ManualClock()
        let api = try socialAPI(clock: clock) { $0.disableSignup = true }
        let refused = api.idTokenGrant(["id_token": #"{"sub":"s-1","aud":"google-client","email":"s@example.com","email_verified":true}"#,
                                        "provider": "google"])
        #expect(refused.status == 422)
        #expect(errorCode(refused) == "signup_disabled")
        api.project.configuration.disableSignup = false
        let ok = api.idTokenGrant(["id_token": #"{"sub":"s-1","aud":"google-client","email":"s@example.com","email_verified":true}"#,
                                   "provider": "google"])
        #expect(ok.status == 200)
        try api.project.database.write { try $0.execute(portable: "UPDATE users SET banned_until = ?", $0.timestamp(clock.now().microseconds + 60_000_000)) }
        let banned = api.idTokenGrant(["id_token": #"{"sub":"s-1","aud":"google-client"}"#, "provider": "google"])
        #expect(banned.status == 403)
        #expect(errorCode(banned) == "user_banned")
    }
}

@Suite struct OAuthFlowTests {
    @Test func authorizeErrors() throws {
        let api = try socialAPI()
        let unknown = api.call("GET", "/authorize?provider=nope")
        #expect(unknown.status == 400)
        #expect(unknown.json["msg"] == "Unsupported provider: Provider nope could not be found")
        let disabled = api.call("GET", "/authorize?provider=github")
        #expect(disabled.json["msg"] == "Unsupported provider: provider is not enabled")
        let badPKCE = api.call("GET", "/authorize?provider=google&code_challenge=abc")
        #expect(badPKCE.status == 400)
        // Keycloak has no default server: without GOTRUE_EXTERNAL_KEYCLOAK_URL it is refused.
        api.project.configuration.enableProvider("keycloak", clientID: "kc", secret: "kc-secret")
        let keycloak = api.call("GET", "/authorize?provider=keycloak")
        #expect(keycloak.status == 400)
        #expect(keycloak.json["msg"] == "Unsupported provider: unable to find URL for the Keycloak provider")
        api.project.configuration.external.providers["keycloak"]?.url = "https://kc.example/realms/r"
        #expect(api.call("GET", "/authorize?provider=keycloak").status == 302)
    }

    /// Each provider's default scopes, then the request's split on commas without de-duplication
    /// (`strings.Split(scopes, ",")`); Apple, Bitbucket, Notion, WorkOS and Zoom take none.
    @Test func providersScopesAsGoTruesProviders() throws {
        let api = try socialAPI { config in
            for name in ["github", "x", "bitbucket", "figma"] {
                var settings = OAuthProviderSettings()
                settings.enabled = true
                settings.clientIDs = [name + "-client"]
                settings.secret = "secret"
                config.external.providers[name] = settings
            }
        }
        func scope(_ query: String) throws -> String? {
            let location = try #require(api.call("GET", "/authorize?" + query).headers["Location"], "\(query)")
            return RedirectURL(location).query.first { $0.name == "scope" }?.value
        }
        #expect(try scope("provider=github&scopes=repo,gist,user:email") == "user:email repo gist user:email")
        #expect(try scope("provider=github&scopes=repo%20gist") == "user:email repo gist")
        #expect(try scope("provider=x") == "users.email tweet.read users.read offline.access")
        #expect(try scope("provider=figma&scopes=file_content:read") == "current_user:read file_content:read")
        #expect(try scope("provider=apple&scopes=openid") == "email name")
        #expect(try scope("provider=bitbucket&scopes=repository") == "account email")
        // A `scope` the client sends is one of `AuthCodeURL`'s options: it replaces the
        // provider's (Apple takes no options at all).
        #expect(try scope("provider=github&scopes=gist&scope=repo") == "repo")
        #expect(try scope("provider=apple&scope=openid") == "email name")
    }

    /// The provider is found by its lowercased name, but the account keeps the name as the
    /// client wrote it (`getExternalProviderType`).
    @Test func aMixedCaseProviderNameIsKeptOnTheAccount() throws {
        let api = try socialAPI { config in
            config.enableProvider("github", clientID: "gh-client", secret: "secret")
            config.identityProviders.autoApprove = true
        }
        let start = api.call("GET", "/authorize?provider=GitHub&redirect_to=http://127.0.0.1:3000/cb&login_hint=mixed@example.com")
        #expect(start.status == 302)
        let callback = api.follow(api.follow(start.headers["Location"]!).headers["Location"]!)
        #expect(callback.headers["Location"]?.contains("#access_token=") == true, "\(callback.headers["Location"] ?? "")")
        let user = try #require(try api.storedUser(email: "mixed@example.com"))
        let shown = api.admin("GET", "/admin/users/\(user.id)").json
        #expect(shown["app_metadata"]?["provider"] == "GitHub")
        #expect(shown["app_metadata"]?["providers"] == ["GitHub"])
        #expect(shown["identities"]?[0]?["provider"] == "GitHub")
    }

    @Test func authorizeRedirectsToFakeProvider() throws {
        let api = try socialAPI()
        let response = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=a@b.co&scopes=openid")
        #expect(response.status == 302)
        let location = try #require(response.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:9999/emulator/v1/idp/google/authorize?"))
        let query = RedirectURL(location).query
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        #expect(value("client_id") == "google-client")
        #expect(value("redirect_uri") == "http://127.0.0.1:9999/auth/v1/callback")
        #expect(value("response_type") == "code")
        #expect(value("scope") == "email profile openid")
        #expect(value("login_hint") == "a@b.co")
        #expect(value("redirect_to") == "http://127.0.0.1:3000/cb")
        #expect(UUIDText.isValid(value("state") ?? ""))
    }

    // AppleProvider.AuthCodeURL drops the options GoTrue passes it: the client's extra query
    // parameters reach Google's URL, never Apple's, whose only extra is response_mode.
    @Test func appleURLCarriesNothingTheClientAdded() throws {
        let api = try socialAPI()
        for provider in ["google", "apple"] {
            let response = api.call("GET", "/authorize?provider=\(provider)&skip_http_redirect=true&login_hint=a@b.co&prompt=consent")
            let location = try #require(response.headers["Location"])
            let names = RedirectURL(location).query.map(\.name)
            if provider == "apple" {
                #expect(names == ["client_id", "redirect_uri", "response_mode", "response_type", "scope", "state"]
                    || names == ["client_id", "redirect_uri", "response_type", "scope", "state", "response_mode"])
            } else {
                #expect(names.contains("skip_http_redirect") && names.contains("login_hint") && names.contains("prompt"))
            }
        }
    }

    @Test func implicitFlowWithAutoApprove() throws {
        let api = try socialAPI { $0.identityProviders.autoApprove = true }
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=flow@example.com")
        let page = api.follow(start.headers["Location"]!)
        #expect(page.status == 302)
        let callback = api.follow(page.headers["Location"]!)
        #expect(callback.status == 302)
        let location = try #require(callback.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:3000/cb#access_token="))
        let fragment = RedirectURL(location).fragment
        let items = RedirectURL.parseQuery(fragment)
        #expect(items.map(\.name) == ["access_token", "expires_at", "expires_in", "provider_refresh_token", "provider_token",
                                       "refresh_token", "sb", "token_type"])
        let access = items.first { $0.name == "access_token" }!.value
        let user = api.call("GET", "/user", bearer: access).json
        #expect(user["email"] == "flow@example.com")
        #expect(user["app_metadata"]?["provider"] == "google")
        // The state is single use.
        let replay = api.follow(page.headers["Location"]!)
        #expect(replay.status == 303)
        #expect(replay.headers["Location"]?.contains("error_code=bad_oauth_state") == true)
    }

    /// external.go wraps a failure to issue the implicit flow's tokens (here the custom access
    /// token hook's refusal) as an OAuth `server_error` whose description is `HTTPError.Error()`,
    /// and such an error carries no `error_code`.
    @Test func implicitFlowTokenFailureIsAServerError() throws {
        let server = FakeHookServer { _ in FakeHookServer.json(["error": ["http_code": 403, "message": "no token"]]) }
        let api = try hookAPI(server, \.customAccessToken) { config in
            enableGoogle(&config)
            config.identityProviders.autoApprove = true
        }
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=hooked@example.com")
        let page = api.follow(try #require(start.headers["Location"]))
        let callback = api.follow(try #require(page.headers["Location"]))
        let location = try #require(callback.headers["Location"])
        let url = RedirectURL(location)
        #expect(url.query.map(\.name) == ["error", "error_description"], "\(location)")
        #expect(url.query.first { $0.name == "error" }?.value == "server_error")
        #expect(url.query.first { $0.name == "error_description" }?.value == "403: no token")
        #expect(!location.contains("access_token"))
    }

    /// The callback reads `state` as gofrs' `uuid.FromString` does: bare hex digits, braces
    /// and the URN form name the same flow state.
    @Test func theStateIsReadAsGoReadsAUUID() throws {
        let api = try socialAPI { $0.identityProviders.autoApprove = true }
        for (index, form) in ["bare", "braced", "urn"].enumerated() {
            let start = api.call("GET", "/authorize?provider=google&login_hint=state\(index)@example.com")
            let first = try #require(start.headers["Location"])
            let back = try #require(api.follow(first).headers["Location"])
            var items = RedirectURL(back).query
            let position = try #require(items.firstIndex { $0.name == "state" })
            let state = items[position].value
            items[position].value = form == "bare" ? String(state.filter { $0 != "-" })
                : form == "braced" ? "%7B" + state.uppercased() + "%7D" : "urn:uuid:" + state
            let query = items.map { $0.name + "=" + $0.value }
            let done = api.call("GET", "/callback?" + query.joined(separator: "&"))
            #expect(done.headers["Location"]?.contains("#access_token=") == true, "\(form): \(done.headers["Location"] ?? done.text)")
        }
    }

    @Test func pkceFlowExchangesCode() throws {
        let api = try socialAPI { $0.identityProviders.autoApprove = true }
        let verifier = "verifier-0123456789-0123456789-0123456789-abc"
        let challenge = Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=pkce@example.com&code_challenge=\(challenge)&code_challenge_method=s256")
        let page = api.follow(start.headers["Location"]!)
        let callback = api.follow(page.headers["Location"]!)
        let location = try #require(callback.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:3000/cb?code="))
        let code = RedirectURL(location).query.first { $0.name == "code" }!.value
        let session = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": .string(verifier)])
        #expect(session.status == 200)
        #expect(session.json["user"]?["email"] == "pkce@example.com")
        #expect(session.json["provider_token"]?.stringValue?.isEmpty == false)
    }

    @Test func callbackErrorsRedirect() throws {
        let api = try socialAPI()
        let missing = api.call("GET", "/callback")
        #expect(missing.status == 303)
        #expect(missing.headers["Location"] == "http://127.0.0.1:3000?error=invalid_request&error_code=bad_oauth_callback&error_description=OAuth+state+parameter+missing")
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb")
        let state = RedirectURL(start.headers["Location"]!).query.first { $0.name == "state" }!.value
        let denied = api.call("GET", "/callback?state=\(state)&error=access_denied&error_description=User+cancelled")
        #expect(denied.status == 302)
        #expect(denied.headers["Location"] == "http://127.0.0.1:3000/cb?error=access_denied&error_description=User+cancelled#error=access_denied&error_description=User+cancelled&sb=")
        // Without a description the query keeps the empty field, the fragment leaves it out.
        let again = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb")
        let secondState = RedirectURL(again.headers["Location"]!).query.first { $0.name == "state" }!.value
        #expect(api.call("GET", "/callback?state=\(secondState)&error=access_denied").headers["Location"]
                == "http://127.0.0.1:3000/cb?error=access_denied&error_description=#error=access_denied&sb=")
        let badCode = api.call("GET", "/callback?state=\(state)&code=nope")
        #expect(badCode.headers["Location"]?.contains("error_code=unexpected_failure") == true)
        #expect(badCode.headers["Location"]?.contains("Unable+to+exchange+external+code%3A+nope") == true)
        // `u.Fragment = hq.Encode()` then `u.String()`: the fragment's text is escaped twice.
        let fragment = badCode.headers["Location"]?.split(separator: "#").last.map(String.init) ?? ""
        #expect(fragment.contains("error_description=Unable+to+exchange+external+code%253A+nope"))
    }

    @Test func callbackSignupDisabledIsAccessDenied() throws {
        let api = try socialAPI { $0.identityProviders.autoApprove = true }
        api.project.configuration.disableSignup = true
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=new@example.com")
        let page = api.follow(start.headers["Location"]!)
        let callback = api.follow(page.headers["Location"]!)
        #expect(callback.status == 302)
        #expect(callback.headers["Location"] == "http://127.0.0.1:3000/cb?error=access_denied&error_code=signup_disabled&error_description=Signups+not+allowed+for+this+instance#error=access_denied&error_code=signup_disabled&error_description=Signups+not+allowed+for+this+instance&sb=")
    }

    @Test func callbackWithoutCodeAndExpiredState() throws {
        let clock = ManualClock()
        let api = try socialAPI(clock: clock)
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb")
        let state = RedirectURL(start.headers["Location"]!).query.first { $0.name == "state" }!.value
        let noCode = api.call("GET", "/callback?state=\(state)")
        #expect(noCode.headers["Location"]?.contains("error_code=bad_oauth_callback") == true)
        clock.advance(seconds: 301)
        let expired = api.call("GET", "/callback?state=\(state)&code=x")
        #expect(expired.status == 303)
        #expect(expired.headers["Location"]?.contains("error_description=OAuth+state+has+expired") == true)
    }

    @Test func invitedUserAcceptsThroughTheProvider() throws {
        let api = try socialAPI { $0.identityProviders.autoApprove = true }
        let invite = api.call("POST", "/invite", ["email": "invited@example.com"], bearer: api.project.configuration.apiKeys.serviceRole)
        #expect(invite.status == 200)
        let token = try api.project.database.read { conn in try conn.user(email: "invited@example.com", aud: "authenticated") }?
            .confirmationToken
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=invited@example.com&invite_token=\(try #require(token))")
        let page = api.follow(start.headers["Location"]!)
        let callback = api.follow(page.headers["Location"]!)
        let location = try #require(callback.headers["Location"])
        #expect(location.contains("#access_token="))
        let user = try api.project.database.read { conn in try conn.user(email: "invited@example.com", aud: "authenticated") }
        #expect(user?.emailConfirmedAt != nil)
        #expect(Models.object(user?.appMetadata ?? "{}")["providers"] == ["google"])
        let unknown = api.call("GET", "/authorize?provider=google&invite_token=nope")
        #expect(unknown.status == 404)
        #expect(errorCode(unknown) == "user_not_found")
    }

    /// `loadExternalState` loads the link's target user: one deleted meanwhile is a bad state,
    /// a 303 to the site URL with the error in the query only.
    @Test func aDeletedLinkTargetIsABadState() throws {
        let api = try socialAPI {
            $0.identityProviders.autoApprove = true
            $0.security.manualLinkingEnabled = true
        }
        let session = api.signUp("target@example.com")
        let bearer = session["access_token"]!.stringValue!
        let url = api.call("GET", "/user/identities/authorize?provider=google&skip_http_redirect=true&login_hint=t-g@example.com",
                           bearer: bearer).json["url"]?.stringValue
        let page = api.follow(try #require(url))
        #expect(api.admin("DELETE", "/admin/users/\(session["user"]!["id"]!.stringValue!)").status == 200)
        let callback = api.follow(page.headers["Location"]!)
        #expect(callback.status == 303)
        #expect(callback.headers["Location"]
                == "http://127.0.0.1:3000?error=server_error&error_code=user_not_found&error_description=Linking+target+user+not+found")
    }

    @Test func manualLinkingAndUnlinking() throws {
        let api = try socialAPI { $0.identityProviders.autoApprove = true }
        let session = api.signUp("manual@example.com")
        let bearer = session["access_token"]!.stringValue!
        let disabled = api.call("GET", "/user/identities/authorize?provider=google&skip_http_redirect=true", bearer: bearer)
        #expect(disabled.status == 404)
        #expect(errorCode(disabled) == "manual_linking_disabled")
        api.project.configuration.security.manualLinkingEnabled = true
        let url = api.call("GET", "/user/identities/authorize?provider=google&skip_http_redirect=true&login_hint=manual-g@example.com",
                           bearer: bearer).json["url"]?.stringValue
        let page = api.follow(try #require(url))
        let callback = api.follow(page.headers["Location"]!)
        #expect(callback.status == 302)
        let user = api.call("GET", "/user", bearer: bearer).json
        let identities = try #require(user["identities"]?.arrayValue)
        #expect(identities.map { $0["provider"] } == ["email", "google"])
        #expect(user["email"] == "manual@example.com")

        let notUUID = api.call("DELETE", "/user/identities/xyz", bearer: bearer)
        #expect(notUUID.status == 404)
        #expect(notUUID.json["msg"] == "identity_id must be an UUID")
        let unknown = api.call("DELETE", "/user/identities/00000000-0000-4000-8000-000000000000", bearer: bearer)
        #expect(errorCode(unknown) == "identity_not_found")
        let googleID = identities[1]["identity_id"]!.stringValue!
        let removed = api.call("DELETE", "/user/identities/\(googleID)", bearer: bearer)
        #expect(removed.status == 200)
        #expect(removed.text == "{}")
        let emailID = identities[0]["identity_id"]!.stringValue!
        let last = api.call("DELETE", "/user/identities/\(emailID)", bearer: bearer)
        #expect(last.status == 422)
        #expect(errorCode(last) == "single_identity_not_deletable")
    }
}

/// signup.go's `RemoveUnconfirmedIdentities`: a sign-up onto an unconfirmed account (one an
/// unverified provider made) keeps only the new email identity, its data and its provider.
@Suite struct SignupOntoAnUnconfirmedAccountTests {
    @Test func theOtherIdentitiesGo() throws {
        let clock = ManualClock()
        let api = try socialAPI(clock: clock) { $0.mailer.autoconfirm = false }
        let minted = api.mint("google", ["email": "g@example.com", "email_verified": false])
        let refused = api.idTokenGrant(["id_token": .string(minted), "provider": "google"])
        #expect(errorCode(refused) == "provider_email_needs_verification", "\(refused.text)")
        clock.advance(seconds: 61)  // past the confirmation email's send frequency
        let signedUp = api.call("POST", "/signup", ["email": "g@example.com", "password": "password1"])
        #expect(signedUp.status == 200)
        #expect(signedUp.json["app_metadata"] == ["provider": "email", "providers": ["email"]])
        let id = try #require(signedUp.json["id"]?.stringValue)
        let stored = api.admin("GET", "/admin/users/\(id)").json
        #expect(stored["identities"]?.arrayValue?.map { $0["provider"] } == ["email"])
        #expect(stored["user_metadata"]?["iss"] == nil)
    }
}

/// Unlinking the identity that holds the user's email (identity.go `DeleteIdentity`,
/// `UpdateUserEmailFromIdentities`): the next identity's address replaces it, and
/// `ClearAllPendingTokens` voids what was asked for under the old one, pending email and phone
/// changes included. The link and the unlink are audited with the client's address.
@Suite struct UnlinkReplacingTheEmailTests {
    @Test func pendingChangesGoAndTheAuditKeepsTheAddress() throws {
        let api = try socialAPI {
            $0.security.manualLinkingEnabled = true
            $0.sms.autoconfirm = false
        }
        let token = try #require(api.signUp("primary@example.com")["access_token"]?.stringValue)
        let from: HTTPHeaders = ["X-Forwarded-For": "198.51.100.9"]
        let minted = api.mint("google", ["email": "other@example.com", "email_verified": true])
        let linked = api.call("POST", "/token?grant_type=id_token", ["id_token": .string(minted), "provider": "google", "link_identity": true],
                              bearer: token, headers: from)
        #expect(linked.status == 200)
        #expect(api.call("PUT", "/user", ["email": "changed@example.com"], bearer: token).json["new_email"] == "changed@example.com")
        #expect(api.call("PUT", "/user", ["phone": "15550001111"], bearer: token).json["new_phone"] == "15550001111")

        let me = api.call("GET", "/user", bearer: token).json
        let emailIdentity = try #require(me["identities"]?.arrayValue?.first { $0["provider"] == "email" }?["identity_id"]?.stringValue)
        #expect(api.call("DELETE", "/user/identities/\(emailIdentity)", bearer: token, headers: ["X-Forwarded-For": "203.0.113.7"]).status == 200)
        let after = api.call("GET", "/user", bearer: token).json
        #expect(after["email"] == "other@example.com")
        #expect(after["new_email"] == nil)
        #expect(after["new_phone"] == nil)
        // resend.go: no pending change, nothing to send.
        let sent = try api.messages().count
        let resent = api.call("POST", "/resend", ["type": "email_change", "email": "other@example.com"])
        #expect(resent.status == 200)
        #expect(try api.messages().count == sent)

        let audit = api.admin("GET", "/admin/audit").json.arrayValue ?? []
        let address = { (action: String) in audit.first { $0["payload"]?["action"] == .string(action) }?["ip_address"] }
        #expect(address("identity_linked") == "198.51.100.9")
        #expect(address("identity_unlinked") == "203.0.113.7")
    }
}

/// `ensureEmailIdentityForPassword` (internal/api/identity.go), behind
/// `GOTRUE_EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED`: the cases of GoTrue's own
/// email_identity_on_password_test.go, for an account made by Google's id_token grant.
@Suite struct EmailIdentityOnPasswordSetTests {
    private func googleUser(_ api: GoTrueAPI, _ email: String, verified: Bool = true) throws -> (id: String, token: String) {
        let minted = api.mint("google", ["email": .string(email), "email_verified": .bool(verified)])
        let session = api.idTokenGrant(["id_token": .string(minted), "provider": "google"]).json
        return (try #require(session["user"]?["id"]?.stringValue), try #require(session["access_token"]?.stringValue))
    }

    private func identities(_ user: JSON) -> [String] {
        user["identities"]?.arrayValue?.compactMap { $0["provider"]?.stringValue } ?? []
    }

    @Test func offAsInGoTruesDefaultAFirstPasswordAddsNoIdentity() throws {
        let api = try socialAPI()
        let (_, token) = try googleUser(api, "g-off@example.com")
        let updated = api.call("PUT", "/user", ["password": "newpassword123"], bearer: token)
        #expect(updated.status == 200)
        #expect(identities(updated.json) == ["google"])
        #expect(updated.json["app_metadata"]?["providers"] == ["google"])
        #expect(api.signIn("g-off@example.com", "newpassword123").status == 200)
    }

    @Test func onAFirstPasswordAddsTheEmailIdentityOfTheStoredEmail() throws {
        let api = try socialAPI { $0.experimental.createEmailIdentityOnPasswordSet = true }
        let (id, token) = try googleUser(api, "g-on@example.com")
        // The request's email is only a pending change (secure email change): not the identity's.
        let updated = api.call("PUT", "/user", ["password": "newpassword123", "email": "other@example.com"], bearer: token)
        #expect(updated.status == 200)
        #expect(identities(updated.json) == ["google", "email"])
        let email = try #require(updated.json["identities"]?.arrayValue?.first { $0["provider"] == "email" })
        #expect(email["identity_data"] == ["sub": .string(id), "email": "g-on@example.com", "email_verified": true, "phone_verified": false])
        #expect(email["id"] == .string(id))
        #expect(updated.json["app_metadata"]?["providers"] == ["google", "email"])
        #expect(updated.json["app_metadata"]?["provider"] == "google")
        #expect(updated.json["new_email"] == "other@example.com")
        // A later password is not a first one: nothing more.
        let again = api.call("PUT", "/user", ["password": "newerpassword456"], bearer: token)
        #expect(identities(again.json) == ["google", "email"])
    }

    @Test func onAnUnconfirmedEmailGetsNoIdentity() throws {
        let api = try socialAPI {
            $0.experimental.createEmailIdentityOnPasswordSet = true
            $0.mailer.autoconfirm = false
        }
        // Google's unverified email, no autoconfirm: the grant answers no session, the user stays.
        let minted = api.mint("google", ["email": "g-unverified@example.com", "email_verified": false])
        let refused = api.idTokenGrant(["id_token": .string(minted), "provider": "google"])
        let listed = api.admin("GET", "/admin/users").json["users"]?.arrayValue ?? []
        let id = try #require(listed.first { $0["email"] == "g-unverified@example.com" }?["id"]?.stringValue, "\(refused.text)")
        let updated = api.admin("PUT", "/admin/users/\(id)", ["password": "newpassword123"])
        #expect(updated.status == 200)
        #expect(updated.json["email_confirmed_at"] == nil)
        #expect(identities(updated.json) == ["google"])
    }

    @Test func onTheAdminsFirstPasswordAddsItToo() throws {
        let api = try socialAPI { $0.experimental.createEmailIdentityOnPasswordSet = true }
        let (id, _) = try googleUser(api, "g-admin@example.com")
        let updated = api.admin("PUT", "/admin/users/\(id)", ["password": "newpassword123"])
        #expect(updated.status == 200)
        #expect(identities(updated.json) == ["google", "email"])
        #expect(updated.json["app_metadata"]?["providers"] == ["google", "email"])
        // With a new confirmed email as well, the email identity is the one that change makes.
        let (other, _) = try googleUser(api, "g-admin2@example.com")
        let moved = api.admin("PUT", "/admin/users/\(other)", ["password": "newpassword123", "email": "moved@example.com", "email_confirm": true])
        let emails = moved.json["identities"]?.arrayValue?.filter { $0["provider"] == "email" } ?? []
        #expect(emails.map { $0["identity_data"]?["email"] } == ["moved@example.com"])
    }
}
