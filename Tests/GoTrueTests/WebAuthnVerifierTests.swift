import AuthCrypto
import AuthFormats
import AuthJSON
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: WebAuthn Level 3 §7.1 (registration) and §7.2 (authentication) as
// go-webauthn v0.16.5 applies them for the real server (protocol/client.go,
// protocol/authenticator.go, protocol/attestation*.go, protocol/assertion.go,
// webauthn/login.go), RFC 8949 for CBOR, RFC 9053 for COSE keys.

/// Builds authenticator output by hand, so each test can break exactly one thing.
struct HandAuthenticator {
    let key = P256PrivateKey.generate(random: SystemRandom())
    let credentialID: [UInt8] = Array(0..<16)
    var rpID = "localhost"
    var origin = "http://localhost:3000"

    var cose: [UInt8] { COSEKey.encodeP256(key.publicKey) }

    func clientData(_ type: String, challenge: String, origin: String? = nil) -> [UInt8] {
        Array(JSON.object(["type": .string(type), "challenge": .string(challenge), "origin": .string(origin ?? self.origin)]).serialized().utf8)
    }

    func authData(flags: UInt8, count: UInt32, attested: Bool, rpID: String? = nil) -> [UInt8] {
        var data = WebAuthn.sha256(Array((rpID ?? self.rpID).utf8)) + [flags | (attested ? 0x40 : 0)]
        data += [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)]
        if attested { data += [UInt8](repeating: 0, count: 16) + [0, UInt8(credentialID.count)] + credentialID + cose }
        return data
    }

    func attestationObject(fmt: String = "none", statement: [CBOR.Pair] = [], authData: [UInt8]) -> [UInt8] {
        CBOR.map([.init(.text("fmt"), .text(fmt)), .init(.text("attStmt"), .map(statement)), .init(.text("authData"), .bytes(authData))]).encoded
    }

    func registration(clientData: [UInt8], object: [UInt8]) -> JSON {
        let id = Base64URL.encode(credentialID)
        return ["id": .string(id), "rawId": .string(id), "type": "public-key",
                "response": ["clientDataJSON": .string(Base64URL.encode(clientData)), "attestationObject": .string(Base64URL.encode(object))]]
    }

    func assertion(clientData: [UInt8], authData: [UInt8], signature: [UInt8]? = nil, userHandle: [UInt8] = Array("user".utf8)) -> JSON {
        let sig = signature ?? DERSignature.encode(raw: key.signature(for: authData + WebAuthn.sha256(clientData)))
        let id = Base64URL.encode(credentialID)
        return ["id": .string(id), "rawId": .string(id), "type": "public-key",
                "response": ["clientDataJSON": .string(Base64URL.encode(clientData)), "authenticatorData": .string(Base64URL.encode(authData)),
                             "signature": .string(Base64URL.encode(sig)), "userHandle": .string(Base64URL.encode(userHandle))]]
    }
}

private let rp = RelyingParty(id: "localhost", name: "Test", origins: ["http://localhost:3000"])
private let challenge = Base64URL.encode([UInt8](repeating: 7, count: 32))
private func session(uv: String = "preferred") -> WebAuthnSession {
    WebAuthnSession(challenge: challenge, rpID: "localhost", userID: Array("user".utf8), userVerification: uv,
                    credParams: WebAuthn.offeredAlgorithms)
}
private let upUV: UInt8 = 0x05

private func registrationFailure(_ json: JSON, session s: WebAuthnSession = session()) -> WebAuthnFailure? {
    do {
        _ = try RegistrationResponse(json).verify(session: s, relyingParty: rp)
        return nil
    } catch {
        return error
    }
}

private func assertionResult(_ a: HandAuthenticator, _ json: JSON, stored: UInt32 = 0, backupEligible: Bool = false,
                             session s: WebAuthnSession = session()) -> Result<AssertionResponse.Outcome, WebAuthnFailure> {
    do {
        let parsed = try AssertionResponse(json)
        return .success(try parsed.verify(session: s, relyingParty: rp, credential: .init(publicKey: a.cose, signCount: stored, backupEligible: backupEligible)))
    } catch {
        return .failure(error)
    }
}

private func failure(_ r: Result<AssertionResponse.Outcome, WebAuthnFailure>) -> String? {
    if case .failure(let f) = r { return f.reason }
    return nil
}

@Suite struct WebAuthnRegistrationVerifierTests {
    let a = HandAuthenticator()

    @Test func acceptsANoneAttestation() throws {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true)))
        let credential = try RegistrationResponse(json).verify(session: session(), relyingParty: rp)
        #expect(credential.id == a.credentialID)
        #expect(credential.publicKey == a.cose)
        #expect(credential.attestationType == "none")
    }

    @Test func refusesAnotherOrigin() {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge, origin: "https://evil.example"),
                                  object: a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true)))
        #expect(registrationFailure(json)?.reason == "origin https://evil.example is not allowed")
    }

    @Test func originComparesSchemeHostAndPort() {
        #expect(CollectedClientData.originMatches("HTTP://LOCALHOST:3000", ["http://localhost:3000"]))
        #expect(CollectedClientData.originMatches("https://a.example", ["https://a.example:443"]))
        #expect(!CollectedClientData.originMatches("http://localhost:3001", ["http://localhost:3000"]))
        #expect(!CollectedClientData.originMatches("https://localhost:3000", ["http://localhost:3000"]))
        // Userinfo, path, query and fragment play no part; no scheme is no URL (compared verbatim).
        #expect(CollectedClientData.originMatches("http://u:p@localhost:3000/x?y#z", ["http://localhost:3000"]))
        #expect(!CollectedClientData.originMatches("://localhost:3000", ["http://localhost:3000"]))
        #expect(CollectedClientData.originMatches("://localhost:3000", ["://localhost:3000"]))
    }

    /// The site URL's origin (WebAuthn defaults) and host (the TOTP issuer) read one authority.
    @Test func siteURLOriginAndHost() {
        #expect(WebAuthnSettings.origin(of: "HTTP://User@LocalHost:3000/app?x#y") == "http://localhost:3000")
        #expect(WebAuthnSettings.origin(of: "http://") == nil)
        #expect(WebAuthnSettings.origin(of: "localhost:3000") == nil)
        #expect(MFAEndpoints.host(of: "https://u:p@Example.com:8443/path#f") == "Example.com:8443")
        #expect(MFAEndpoints.host(of: "http://") == "")
        #expect(MFAEndpoints.host(of: "example.com") == nil)
    }

    @Test func refusesAnotherChallenge() {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: Base64URL.encode([1, 2, 3])),
                                  object: a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true)))
        #expect(registrationFailure(json)?.reason == "challenge mismatch")
    }

    @Test func refusesTheWrongCeremonyType() {
        let json = a.registration(clientData: a.clientData("webauthn.get", challenge: challenge),
                                  object: a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true)))
        #expect(registrationFailure(json)?.reason == "ceremony type webauthn.get, expected webauthn.create")
    }

    @Test func refusesAnotherRPIDHash() {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true, rpID: "evil.example")))
        #expect(registrationFailure(json)?.reason == "RP id hash mismatch")
    }

    @Test func requiresUserPresence() {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(authData: a.authData(flags: 0x04, count: 0, attested: true)))
        #expect(registrationFailure(json)?.reason == "user presence required but flag not set by authenticator")
    }

    @Test func requiresUserVerificationOnlyWhenTheSessionDoes() {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(authData: a.authData(flags: 0x01, count: 0, attested: true)))
        #expect(registrationFailure(json) == nil)  // "preferred", the passkey setting
        #expect(registrationFailure(json, session: session(uv: "required"))?.reason == "user verification required but flag not set by authenticator")
    }

    @Test func noneAttestationMustHaveAnEmptyStatement() {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(statement: [.init(.text("alg"), .int(-7))],
                                                              authData: a.authData(flags: upUV, count: 0, attested: true)))
        #expect(registrationFailure(json)?.reason == "attestation format none with attestation present")
    }

    @Test func packedSelfAttestationIsVerified() throws {
        let clientData = a.clientData("webauthn.create", challenge: challenge)
        let authData = a.authData(flags: upUV, count: 0, attested: true)
        let good = DERSignature.encode(raw: a.key.signature(for: authData + WebAuthn.sha256(clientData)))
        let ok = a.registration(clientData: clientData, object: a.attestationObject(
            fmt: "packed", statement: [.init(.text("alg"), .int(-7)), .init(.text("sig"), .bytes(good))], authData: authData))
        #expect(try RegistrationResponse(ok).verify(session: session(), relyingParty: rp).attestationType == "packed")

        let other = HandAuthenticator()
        let forged = DERSignature.encode(raw: other.key.signature(for: authData + WebAuthn.sha256(clientData)))
        let bad = a.registration(clientData: clientData, object: a.attestationObject(
            fmt: "packed", statement: [.init(.text("alg"), .int(-7)), .init(.text("sig"), .bytes(forged))], authData: authData))
        #expect(registrationFailure(bad)?.reason == "packed: unable to verify signature")

        let wrongAlg = a.registration(clientData: clientData, object: a.attestationObject(
            fmt: "packed", statement: [.init(.text("alg"), .int(-257)), .init(.text("sig"), .bytes(good))], authData: authData))
        #expect(registrationFailure(wrongAlg)?.reason == "packed: alg does not match the credential key")
    }

    @Test func otherFormatsAreRefused() {
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(fmt: "fido-u2f", authData: a.authData(flags: upUV, count: 0, attested: true)))
        #expect(registrationFailure(json)?.reason == "attestation format fido-u2f is unsupported")
    }

    @Test func malformedAttestationObjectsFailToParse() {
        let clientData = a.clientData("webauthn.create", challenge: challenge)
        let good = a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true))
        for broken in [Array(good.dropLast()), good + [0], [0xBF] + Array(good.dropFirst()), [0xFF], []] {
            let failure = registrationFailure(a.registration(clientData: clientData, object: broken))
            #expect(failure?.stage == .parse, "\(broken.prefix(4))")
        }
        // Attested credential data missing although the flag is set.
        let short = a.attestationObject(authData: Array(a.authData(flags: upUV, count: 0, attested: true).prefix(50)))
        #expect(registrationFailure(a.registration(clientData: clientData, object: short))?.stage == .parse)
        // Leftover bytes after the credential public key.
        let leftover = a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true) + [0])
        #expect(registrationFailure(a.registration(clientData: clientData, object: leftover))?.reason == "leftover bytes decoding authenticator data")
    }

    @Test func credentialJSONShapeIsChecked() {
        let good = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true)))
        var noID = good.objectValue!
        noID["id"] = ""
        #expect(registrationFailure(.object(noID))?.reason == "missing id")
        var badType = good.objectValue!
        badType["type"] = "password"
        #expect(registrationFailure(.object(badType))?.reason == "type not public-key")
        var notJSON = good.objectValue!
        notJSON["response"] = ["clientDataJSON": .string(Base64URL.encode(Array("{".utf8))), "attestationObject": good["response"]!["attestationObject"]!]
        #expect(registrationFailure(.object(notJSON))?.reason == "clientDataJSON is not a JSON object")
    }

    @Test func anUnofferedAlgorithmIsRefused() {
        var s = session()
        s.credParams = [WebAuthn.rs256]
        let json = a.registration(clientData: a.clientData("webauthn.create", challenge: challenge),
                                  object: a.attestationObject(authData: a.authData(flags: upUV, count: 0, attested: true)))
        #expect(registrationFailure(json, session: s)?.reason == "credential public key algorithm not supported")
    }
}

@Suite struct WebAuthnAssertionVerifierTests {
    let a = HandAuthenticator()

    @Test func acceptsAValidAssertionAndAdvancesTheCounter() throws {
        let json = a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge), authData: a.authData(flags: upUV, count: 5, attested: false))
        let outcome = try assertionResult(a, json, stored: 4).get()
        #expect(outcome == AssertionResponse.Outcome(signCount: 5, cloneWarning: false))
    }

    @Test func refusesABadSignature() {
        let clientData = a.clientData("webauthn.get", challenge: challenge)
        let authData = a.authData(flags: upUV, count: 1, attested: false)
        var sig = a.key.signature(for: authData + WebAuthn.sha256(clientData))
        sig[40] ^= 1
        let json = a.assertion(clientData: clientData, authData: authData, signature: DERSignature.encode(raw: sig))
        #expect(failure(assertionResult(a, json)) == "assertion signature does not verify")
        // A signature over other client data (the challenge of another ceremony).
        let otherSig = DERSignature.encode(raw: a.key.signature(for: authData + WebAuthn.sha256(a.clientData("webauthn.get", challenge: "x"))))
        #expect(failure(assertionResult(a, a.assertion(clientData: clientData, authData: authData, signature: otherSig))) == "assertion signature does not verify")
        // The raw r||s form is not DER.
        let raw = a.key.signature(for: authData + WebAuthn.sha256(clientData))
        #expect(failure(assertionResult(a, a.assertion(clientData: clientData, authData: authData, signature: raw))) == "assertion signature does not verify")
    }

    @Test func refusesBadOriginChallengeAndRPID() {
        let authData = a.authData(flags: upUV, count: 1, attested: false)
        #expect(failure(assertionResult(a, a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge, origin: "http://localhost:9999"), authData: authData)))
                == "origin http://localhost:9999 is not allowed")
        #expect(failure(assertionResult(a, a.assertion(clientData: a.clientData("webauthn.get", challenge: "AAAA"), authData: authData))) == "challenge mismatch")
        #expect(failure(assertionResult(a, a.assertion(clientData: a.clientData("webauthn.create", challenge: challenge), authData: authData)))
                == "ceremony type webauthn.create, expected webauthn.get")
        #expect(failure(assertionResult(a, a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge),
                                                       authData: a.authData(flags: upUV, count: 1, attested: false, rpID: "example.com"))))
                == "RP id hash mismatch")
    }

    @Test func userVerificationRequiredNeedsTheUVFlag() {
        let json = a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge), authData: a.authData(flags: 0x01, count: 1, attested: false))
        #expect(failure(assertionResult(a, json)) == nil)
        #expect(failure(assertionResult(a, json, session: session(uv: "required"))) == "user verification required but flag not set by authenticator")
    }

    /// go-webauthn's `UpdateCounter` flags a counter that did not increase as a possible clone
    /// and keeps the stored value; the real server ignores the flag, so the sign-in succeeds.
    @Test func counterRegressionKeepsTheStoredCounter() throws {
        let json = a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge), authData: a.authData(flags: upUV, count: 3, attested: false))
        let outcome = try assertionResult(a, json, stored: 10).get()
        #expect(outcome.signCount == 10)
        #expect(outcome.cloneWarning)
        // Authenticators without a counter send 0 forever: no warning.
        let zero = a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge), authData: a.authData(flags: upUV, count: 0, attested: false))
        #expect(try assertionResult(a, zero, stored: 0).get() == AssertionResponse.Outcome(signCount: 0, cloneWarning: false))
    }

    @Test func backupFlagsMustStayConsistent() {
        let json = a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge), authData: a.authData(flags: upUV | 0x08, count: 1, attested: false))
        #expect(failure(assertionResult(a, json, backupEligible: false)) == "backup eligible flag inconsistency")
        #expect(failure(assertionResult(a, json, backupEligible: true)) == nil)
        let stateOnly = a.assertion(clientData: a.clientData("webauthn.get", challenge: challenge), authData: a.authData(flags: upUV | 0x10, count: 1, attested: false))
        #expect(failure(assertionResult(a, stateOnly)) == "backup state set without backup eligible")
    }

    @Test func malformedAuthenticatorDataFailsToParse() {
        let clientData = a.clientData("webauthn.get", challenge: challenge)
        for authData in [[UInt8](repeating: 0, count: 36), a.authData(flags: upUV, count: 1, attested: false) + [1]] {
            #expect(throws: WebAuthnFailure.self) { try AssertionResponse(a.assertion(clientData: clientData, authData: authData)) }
        }
    }
}

@Suite struct CBORTests {
    @Test func decodesRFC8949AppendixAExamples() throws {
        // RFC 8949 Appendix A.
        #expect(try CBOR.decode([0x00]) == .unsigned(0))
        #expect(try CBOR.decode([0x18, 0x64]) == .unsigned(100))
        #expect(try CBOR.decode([0x39, 0x03, 0xE7]) == .int(-1000))
        #expect(try CBOR.decode([0x1B, 0, 0, 0, 0xE8, 0xD4, 0xA5, 0x10, 0x00]) == .unsigned(1_000_000_000_000))
        #expect(try CBOR.decode([0x43, 1, 2, 3]) == .bytes([1, 2, 3]))
        #expect(try CBOR.decode([0x62, 0xC3, 0xBC]) == .text("ü"))
        #expect(try CBOR.decode([0x83, 1, 2, 3]) == .array([.unsigned(1), .unsigned(2), .unsigned(3)]))
        #expect(try CBOR.decode([0xA2, 0x61, 0x61, 0x01, 0x61, 0x62, 0x82, 0x02, 0x03])
                == .map([.init(.text("a"), .unsigned(1)), .init(.text("b"), .array([.unsigned(2), .unsigned(3)]))]))
        #expect(try CBOR.decode([0xF4]) == .bool(false))
        #expect(try CBOR.decode([0xF6]) == .null)
    }

    @Test func refusesWhatAStrictDecoderMust() {
        let cases: [([UInt8], String)] = [
            ([0x9F, 0x01, 0xFF], "indefinite length is not allowed"),  // RFC 8949 A: [_ 1]
            ([0x18, 0x05], "argument not in its shortest form"),
            ([0xC1, 0x1A, 0x51, 0x4B, 0x67, 0xB0], "tags are not allowed"),  // 1(1363896240)
            ([0xF9, 0x3C, 0x00], "simple value or float 25 is not allowed"),  // 1.0 as half float
            ([0xA2, 0x01, 0x02, 0x01, 0x03], "duplicate map key"),
            ([0x62, 0xC3, 0x28], "text string is not valid UTF-8"),
            ([0x5A, 0xFF, 0xFF, 0xFF, 0xF0, 0x00], "length 4294967280 exceeds the remaining input"),
            ([0x01, 0x02], "trailing bytes after the top-level item"),
            ([0x82, 0x01], "length 2 exceeds the remaining input"),
            ([0x19, 0x01], "unexpected end of input"),
        ]
        for (bytes, reason) in cases {
            #expect(throws: CBORError.self, "\(bytes)") { try CBOR.decode(bytes) }
            do { _ = try CBOR.decode(bytes) } catch { #expect(error.reason == reason, "\(bytes)") }
        }
        // Nesting is capped.
        let deep = [UInt8](repeating: 0x81, count: 40) + [0x00]
        #expect(throws: CBORError.self) { try CBOR.decode(deep) }
    }

    @Test func encodesThePreferredSerialization() throws {
        for value: CBOR in [.unsigned(23), .unsigned(24), .unsigned(65536), .int(-7), .int(-257), .bytes([UInt8](repeating: 1, count: 300)), .text("fmt")] {
            #expect(try CBOR.decode(value.encoded) == value)
        }
        #expect(CBOR.int(-257).encoded == [0x39, 0x01, 0x00])
    }

    @Test func derSignaturesAreStrict() {
        let raw = [UInt8](repeating: 0x80, count: 32) + [UInt8](repeating: 0x01, count: 32)
        let der = DERSignature.encode(raw: raw)
        #expect(DERSignature.rawP256(der) == raw)
        #expect(DERSignature.rawP256(der + [0]) == nil)
        var unpadded = der
        unpadded[3] = 32  // r's length without its 0x00 sign byte: negative
        #expect(DERSignature.rawP256(unpadded) == nil)
        #expect(DERSignature.rawP256([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]) == [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [1])
        #expect(DERSignature.rawP256([0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01]) == nil)  // non-minimal integer
    }
}
