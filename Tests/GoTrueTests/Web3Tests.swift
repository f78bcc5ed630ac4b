import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// `POST /token?grant_type=web3` (internal/api/web3.go) and the software wallet.
@Suite struct Web3GrantTests {
    static let siteURL = "https://supabase.com"

    static func time(_ text: String) -> Int64 { Timestamp(rfc3339: text)!.microseconds }

    /// Both chains on, the real server's test allow list (site URL supabase.com, localhost:5173).
    static func makeWeb3API(at now: String = "2026-01-01T00:00:00Z", _ configure: (inout Configuration) -> Void = { _ in })
        throws -> (GoTrueAPI, ManualClock)
    {
        let base = ManualClock(time(now))
        let (api, _) = try makeControlAPI(base: base) { c in
            c.siteURL = siteURL
            c.uriAllowList = ["http://localhost:5173/**"]
            c.external.web3Solana.enabled = true
            c.external.web3Ethereum.enabled = true
            configure(&c)
        }
        return (api, base)
    }

    static func grant(_ api: GoTrueAPI, _ chain: String, _ message: String, _ signature: String) -> HTTPResponse {
        api.call("POST", "/token?grant_type=web3", ["chain": .string(chain), "message": .string(message), "signature": .string(signature)])
    }

    static func expectOAuth(_ response: HTTPResponse, _ description: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 400, sourceLocation: sourceLocation)
        #expect(response.json["error"]?.stringValue == "invalid_grant", sourceLocation: sourceLocation)
        #expect(response.json["error_description"]?.stringValue == description, "\(response.text)", sourceLocation: sourceLocation)
    }

    static func expectError(_ response: HTTPResponse, _ status: Int, _ code: String, _ message: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        #expect(errorCode(response) == code, sourceLocation: sourceLocation)
        #expect(response.json["msg"]?.stringValue == message, sourceLocation: sourceLocation)
    }

    /// A message built and signed by the software wallet (`label` picks the wallet).
    static func signed(_ api: GoTrueAPI, _ chain: String, label: String = "alice", _ options: JSONObject = [:]) -> (String, String) {
        var body = options
        body["chain"] = .string(chain)
        body["label"] = .string(label)
        let built = api.control("POST", "/emulator/v1/web3/message", .object(body))
        let message = built.json["message"]?.stringValue ?? "(\(built.text))"
        return (message, sign(api, chain, message, ["label": .string(label)]))
    }

    /// Any text signed by a software wallet (`wallet`: its `label` or `address`).
    static func sign(_ api: GoTrueAPI, _ chain: String, _ message: String, _ wallet: JSONObject) -> String {
        var body = wallet
        body["chain"] = .string(chain)
        body["message"] = .string(message)
        return api.control("POST", "/emulator/v1/web3/sign", .object(body)).json["signature"]?.stringValue ?? ""
    }

    // MARK: Enabling

    @Test func disabledUnlessAChainIsOn() throws {
        let (api, _) = try Self.makeWeb3API { c in
            c.external.web3Solana.enabled = false
            c.external.web3Ethereum.enabled = false
        }
        for chain in ["solana", "ethereum", "bitcoin"] {
            Self.expectError(api.call("POST", "/token?grant_type=web3", ["chain": .string(chain)]), 422, "web3_provider_disabled",
                             "Web3 provider is disabled")
        }
        // Checked before the body is read.
        Self.expectError(api.call("POST", "/token?grant_type=web3", raw: "{"), 422, "web3_provider_disabled", "Web3 provider is disabled")
    }

    @Test func eachChainHasItsOwnSwitch() throws {
        let (api, _) = try Self.makeWeb3API { c in c.external.web3Ethereum.enabled = false }
        Self.expectError(api.call("POST", "/token?grant_type=web3", ["chain": "ethereum"]), 422, "web3_provider_disabled",
                         "Ethereum Web3 provider is disabled")
        let (other, _) = try Self.makeWeb3API { c in c.external.web3Solana.enabled = false }
        Self.expectError(other.call("POST", "/token?grant_type=web3", ["chain": "solana"]), 422, "web3_provider_disabled",
                         "Solana Web3 provider is disabled")
    }

    @Test func unsupportedChain() throws {
        let (api, _) = try Self.makeWeb3API()
        Self.expectError(api.call("POST", "/token?grant_type=web3", ["chain": "blockchain"]), 400, "web3_unsupported_chain", "Unsupported chain")
        Self.expectError(api.call("POST", "/token?grant_type=web3", [:]), 400, "web3_unsupported_chain", "Unsupported chain")
    }

    @Test func settingsDoNotListWeb3() throws {
        // GoTrue's `ProviderSettings` has no web3 field.
        let (api, _) = try Self.makeWeb3API()
        let external = api.call("GET", "/settings").json["external"]?.objectValue ?? [:]
        #expect(external["web3"] == nil && external["solana"] == nil && external["ethereum"] == nil && external["email"] != nil)
    }

    // MARK: Messages signed by real wallets (internal/api/web3_test.go)

    @Test(arguments: [
        ("2025-03-29T00:09:59Z", "solana",
         "supabase.com wants you to sign in with your Solana account:\n2EZEiBdw47VHT6SpZSW9VnuSvBe7DxuYHBTxj19gxvv8\n\nStatement\n\nURI: https://supabase.com/\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z\nExpiration Time: 2025-03-29T00:10:00Z\nNot Before: 2025-03-29T00:00:00Z",
         "aiKn+PAoB1OoXxS8H34HrB456YD4sKAVjeTjsxgkaQy3bkdV51WBTmUUE9lBU9kuXr0hTLI+1aTn5TFRbIF8CA=="),
        ("2025-05-16T15:01:59Z", "solana",
         "localhost:5173 wants you to sign in with your Solana account:\n4UPcfLX6rHuunkDiCnrVdN2BxnaKUAT1m2KCrzaAAct6\n\nSign in on localhost\n\nURI: http://localhost:5173/\nVersion: 1\nIssued At: 2025-05-16T14:52:03.613Z",
         "RT2JCFpZQtPwGONApGZn1dZnxOBB3zJZHAQPr+cOaI+eQ4ecw/N6zJ6TNw8a+g8n6Xm/Ky1TVZRuWHSxMU1jDg=="),
        // Signed on a Ledger device: the off-chain message envelope.
        ("2025-07-29T22:30:52.235Z", "solana",
         "supabase.com wants you to sign in with your Solana account:\nEqzxWVyBpLD34SV9w1FFpPPvbfrfAXdiDVg1cyHTR1Rv\n\nI confirm ownership of this wallet\n\nVersion: 1\nURI: https://supabase.com/\nIssued At: 2025-07-29T22:29:52.235Z",
         "9slc0BBJw16TzWYs4/op8na3vt9E0CKt0FL5pqhzTDxvqF/txpbdo+ULDCeSzrDE/uJWmpMQw+hF0rkDj4Q0Bw=="),
        ("2025-03-29T00:09:59Z", "ethereum",
         "supabase.com wants you to sign in with your Ethereum account:\n0xa1E993d09257291470e86778399D79A0864F327E\n\nStatement\n\nURI: https://supabase.com\nVersion: 1\nIssued At: 2025-03-29T00:00:00.000Z\nExpiration Time: 2025-03-29T00:10:00Z\nNot Before: 2025-03-29T00:00:00Z",
         "0x37495c9ac73f7a3acb589820699db39e1ab290f6756e41e16c2ddeb8588669440c9df95027597d518e3afb7db6f692fb63c44f56d266b2c65ac78a5d317bf5ef1c"),
        ("2025-05-16T15:01:59Z", "ethereum",
         "localhost:5173 wants you to sign in with your Ethereum account:\n0x57c039062a750c7fe197b20E12406dB4f7d8833B\n\nSign in on localhost\n\nURI: http://localhost:5173/\nVersion: 1\nIssued At: 2025-05-16T14:52:03.613Z\n",
         "0x0ca657558a144c88d768acb48e31f92bae195d3c7feb4496bd43ad6211ff904e733a0ccc29ed96da5b9f941b2a6b4363f7551d40d3fedb9b239819301c5c42731b"),
    ])
    func realWalletSignaturesSignIn(now: String, chain: String, message: String, signature: String) throws {
        let (api, _) = try Self.makeWeb3API(at: now)
        let response = Self.grant(api, chain, message, signature)
        #expect(response.status == 200, "\(response.text)")
        let access = response.json["access_token"]?.stringValue ?? ""
        #expect(claims(of: access)["amr"]?.arrayValue?.first?.objectValue?["method"]?.stringValue == "web3")
        #expect((response.json["refresh_token"]?.stringValue ?? "").isEmpty == false)
        // A flipped signature bit no longer matches.
        var tampered = Array(signature.utf8)
        tampered[10] = tampered[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        Self.expectOAuth(Self.grant(api, chain, message, String(decoding: tampered, as: UTF8.self)),
                         "Signature does not match address in message")
    }

    // MARK: Users and identities

    @Test(arguments: ["solana", "ethereum"])
    func signInCreatesTheUserThenReusesIt(chain: String) throws {
        let (api, _) = try Self.makeWeb3API()
        let wallet = api.control("POST", "/emulator/v1/web3/wallets", ["chain": .string(chain), "label": "alice"]).json
        let address = wallet["address"]?.stringValue ?? ""
        let (message, signature) = Self.signed(api, chain, ["statement": "Welcome"])
        let first = Self.grant(api, chain, message, signature)
        #expect(first.status == 200, "\(first.text)")
        let user = first.json["user"]?.objectValue ?? [:]
        let subject = "web3:\(chain):\(address)"
        #expect(user["email"]?.stringValue == "")
        #expect(user["app_metadata"] == ["provider": "web3", "providers": ["web3"]])
        let expectedData: JSON = [
            "sub": .string(subject),
            "custom_claims": ["address": .string(address), "chain": .string(chain), "network": .string(chain == "ethereum" ? "1" : ""),
                              "domain": "supabase.com", "statement": "Welcome"],
            "email_verified": false, "phone_verified": false,
        ]
        #expect(user["user_metadata"] == expectedData)
        let identities = user["identities"]?.arrayValue ?? []
        try #require(identities.count == 1)
        let identity = identities[0].objectValue ?? [:]
        #expect(identity["provider"]?.stringValue == "web3")
        #expect(identity["id"]?.stringValue == subject)
        #expect(identity["identity_data"] == expectedData)
        #expect((identity["email"]?.stringValue ?? "") == "")

        // The admin API shows the same identity.
        let userID = user["id"]?.stringValue ?? ""
        let admin = api.control("GET", "/admin/users/\(userID)").json
        #expect(admin["identities"]?.arrayValue?.first?.objectValue?["provider_id"] == identity["provider_id"])
        #expect(admin["identities"]?.arrayValue?.first?.objectValue?["id"]?.stringValue == subject)

        // The same wallet again: the same user, still one identity.
        let (again, againSignature) = Self.signed(api, chain, ["statement": "Welcome back"])
        let second = Self.grant(api, chain, again, againSignature)
        #expect(second.status == 200)
        let reused = second.json["user"]?.objectValue ?? [:]
        #expect(reused["id"]?.stringValue == userID)
        #expect(reused["identities"]?.arrayValue?.count == 1)
        #expect(reused["user_metadata"]?.objectValue?["custom_claims"]?.objectValue?["statement"]?.stringValue == "Welcome back")
    }

    @Test func anEthereumMessageWithoutStatementStoresNull() throws {
        let (api, _) = try Self.makeWeb3API()
        let (message, signature) = Self.signed(api, "ethereum")
        let response = Self.grant(api, "ethereum", message, signature)
        #expect(response.status == 200)
        let claims = response.json["user"]?.objectValue?["user_metadata"]?.objectValue?["custom_claims"]?.objectValue
        #expect(claims?["statement"] == .null)
        // Solana keeps "" for an absent statement.
        let (solana, solanaSignature) = Self.signed(api, "solana")
        let other = Self.grant(api, "solana", solana, solanaSignature)
        #expect(other.json["user"]?.objectValue?["user_metadata"]?.objectValue?["custom_claims"]?.objectValue?["statement"] == "")
    }

    @Test func signupsOffRefuseNewWallets() throws {
        let (api, _) = try Self.makeWeb3API { c in c.disableSignup = true }
        let (message, signature) = Self.signed(api, "solana")
        Self.expectError(Self.grant(api, "solana", message, signature), 422, "signup_disabled", "Signups not allowed for this instance")
    }

    @Test func auditLogHasTheWalletDetails() throws {
        let (api, _) = try Self.makeWeb3API()
        let (message, signature) = Self.signed(api, "ethereum")
        #expect(Self.grant(api, "ethereum", message, signature).status == 200)
        let entries = api.control("GET", "/admin/audit").json.arrayValue ?? []
        let traits = entries.compactMap { $0.objectValue?["payload"]?.objectValue?["traits"]?.objectValue }.filter { $0["chain"] != nil }
        // createAccountFromExternalIdentity logs a plain login too.
        #expect(entries.count == 2)
        try #require(traits.count == 1)
        #expect(traits[0]["provider"] == "web3" && traits[0]["network"] == "1" && traits[0]["domain"] == "supabase.com")
        #expect(traits[0]["uri"]?.objectValue?["Host"] == "supabase.com" && traits[0]["uri"]?.objectValue?["Scheme"] == "https")
    }

    /// The `uri` trait is Go's `*url.URL`: `setPath` keeps the path as written in `RawPath` only
    /// when escaping `Path` again would not give it back.
    @Test func auditURIPathAsSetPathSplitsIt() throws {
        let (api, _) = try Self.makeWeb3API()
        func uri(_ path: String) throws -> JSONObject? {
            let (message, signature) = Self.signed(api, "ethereum", ["uri": .string("https://supabase.com" + path)])
            #expect(Self.grant(api, "ethereum", message, signature).status == 200)
            let entries = api.control("GET", "/admin/audit").json.arrayValue ?? []
            return entries.compactMap { $0.objectValue?["payload"]?.objectValue?["traits"]?.objectValue }
                .first { $0["chain"] != nil }?["uri"]?.objectValue
        }
        let slash = try uri("/a%2Fb")
        #expect(slash?["Path"] == "/a/b" && slash?["RawPath"] == "/a%2Fb")
        let space = try uri("/a%20b")
        #expect(space?["Path"] == "/a b" && space?["RawPath"] == "")
    }

    // MARK: Input checks, in the grant's order

    @Test(arguments: ["solana", "ethereum"])
    func messageLength(chain: String) throws {
        let (api, _) = try Self.makeWeb3API()
        Self.expectError(Self.grant(api, chain, "short", ""), 400, "validation_failed", "message is too short")
        Self.expectError(Self.grant(api, chain, String(repeating: "x", count: 20 * 1024 + 1), ""), 400, "validation_failed",
                         "message must not exceed 20KB")
    }

    @Test func signatureEncodings() throws {
        let (api, _) = try Self.makeWeb3API()
        let (message, signature) = Self.signed(api, "solana")
        Self.expectError(Self.grant(api, "solana", message, "abc"), 400, "validation_failed",
                         "signature must be 64 bytes encoded as base64 with or without padding")
        Self.expectError(Self.grant(api, "solana", message, String(repeating: "!", count: 88)), 400, "validation_failed",
                         "signature does not contain valid base64 characters")
        // Unpadded and URL-safe forms of the same signature are accepted.
        let urlSafe = String(signature.replacingOccurrences("=", "").map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        #expect(Self.grant(api, "solana", message, urlSafe).status == 200)

        let (ethMessage, ethSignature) = Self.signed(api, "ethereum")
        Self.expectError(Self.grant(api, "ethereum", ethMessage, "0x1234"), 400, "validation_failed",
                         "signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string")
        // Without "0x" the length passes but `hexutil.Decode` refuses it.
        Self.expectOAuth(Self.grant(api, "ethereum", ethMessage, String(ethSignature.dropFirst(2))), "Signature does not match address in message")
        // v: 27/28 as wallets write it, 0/1, and the compact-signature codes with the compressed
        // bit (31/32, 4/5) that go-ethereum's pure-Go recovery accepts; nothing above 34.
        let parity = String(ethSignature.suffix(2)) == "1b" ? 0 : 1
        func withV(_ v: Int) -> String { String(ethSignature.dropLast(2)) + Hex.encode([UInt8(v)]) }
        for v in [0, 4, 27, 31] {
            #expect(Self.grant(api, "ethereum", ethMessage, withV(v + parity)).status == 200, "v = \(v + parity)")
        }
        for v in [2, 8, 29, 35, 229] {
            Self.expectOAuth(Self.grant(api, "ethereum", ethMessage, withV(v + parity)), "Signature does not match address in message")
        }
    }

    /// An address that passes the parser's pattern but is not 32 bytes of base58 makes Go's
    /// `ed25519.Verify` panic; the recoverer answers a bare 500.
    @Test func aSolanaAddressThatIsNotAKeyIsA500() throws {
        let (api, _) = try Self.makeWeb3API()
        let message = Self.body("solana", ["", "URI: https://supabase.com/", "Version: 1", "Issued At: 2026-01-01T00:00:00Z"])
            .replacingOccurrences(Self.solanaAddress, String(repeating: "0", count: 32))
        let response = Self.grant(api, "solana", message, Self.solanaSignature)
        #expect(response.status == 500)
        #expect(response.json["msg"]?.stringValue == "Internal Server Error")
    }

    @Test func aWalletCannotSignForAnotherAddress() throws {
        let (api, _) = try Self.makeWeb3API()
        for chain in ["solana", "ethereum"] {
            let (message, _) = Self.signed(api, chain, label: "alice")
            let (_, mallory) = Self.signed(api, chain, label: "mallory")
            Self.expectOAuth(Self.grant(api, chain, message, mallory), "Signature does not match address in message")
        }
    }

    static let solanaAddress = "2EZEiBdw47VHT6SpZSW9VnuSvBe7DxuYHBTxj19gxvv8"
    static let ethereumAddress = "0xa1E993d09257291470e86778399D79A0864F327E"
    static let solanaSignature = String(repeating: "A", count: 86) + "=="
    static let ethereumSignature = "0x" + String(repeating: "0", count: 130)

    static func body(_ chain: String, _ lines: [String]) -> String {
        let header = "supabase.com wants you to sign in with your \(chain == "solana" ? "Solana" : "Ethereum") account:"
        let address = chain == "solana" ? solanaAddress : ethereumAddress
        return ([header, address] + lines).joined(separator: "\n")
    }

    /// `siws.ParseMessage` / `siwe.ParseMessage` errors, each answered 400 validation_failed with
    /// the parser's message.
    @Test(arguments: ["solana", "ethereum"])
    func parserErrors(chain: String) throws {
        let (api, _) = try Self.makeWeb3API()
        let p = chain == "solana" ? "siws" : "siwe"
        let title = chain == "solana" ? "Solana" : "Ethereum"
        let signature = chain == "solana" ? Self.solanaSignature : Self.ethereumSignature
        let valid = ["", "URI: https://supabase.com/", "Version: 1", "Issued At: 2026-01-01T00:00:00Z"]
        let cases: [(String, String)] = [
            (String(repeating: "a", count: 70) + "\n\n\n", "message needs at least 6 lines"),
            (Self.body(chain, valid).replacingOccurrences("wants you", "would like you"),
             "message first line does not end in \" wants you to sign in with your \(title) account:\""),
            (Self.body(chain, valid).replacingOccurrences("supabase.com wants", "supabase_com wants"), "domain in first line of message is not valid"),
            (Self.body(chain, valid).replacingOccurrences(chain == "solana" ? Self.solanaAddress : Self.ethereumAddress, "0xnothex"),
             chain == "solana" ? "wallet address is not in base58 format" : "wallet address is not a valid Ethereum address"),
            (Self.body(chain, ["x"] + valid.dropFirst()), "third line must be empty"),
            // Lines end at "\n" only: with CRLF endings the header ends in "\r".
            (Self.body(chain, valid).split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n"),
             "message first line does not end in \" wants you to sign in with your \(title) account:\""),
            (Self.body(chain, valid + ["no colon here"]), "encountered unparsable line at index 6"),
            (Self.body(chain, ["", "URI: not a uri", "Version: 1", "Issued At: 2026-01-01T00:00:00Z"]), "URI is not valid"),
            (Self.body(chain, ["", "URI: https://supabase.com/", "Version: 2", "Issued At: 2026-01-01T00:00:00Z"]),
             "Version value is not supported, expected 1 got \"2\""),
            (Self.body(chain, ["", "URI: https://supabase.com/", "Issued At: 2026-01-01T00:00:00Z", ""]),
             "Version value is not supported, expected 1 got \"\""),
            (Self.body(chain, ["", "URI: https://supabase.com/", "Version: 1", ""]), "Issued At is not specified"),
            (Self.body(chain, ["", "URI: https://supabase.com/", "Version: 1", "Issued At: yesterday"]),
             "Issued At is not a valid ISO8601 timestamp"),
            (Self.body(chain, valid + ["Expiration Time: soon"]), "Expiration Time is not a valid ISO8601 timestamp"),
            (Self.body(chain, valid + ["Not Before: later"]), "Not Before is not a valid ISO8601 timestamp"),
            (Self.body(chain, ["", "Version: 1", "Issued At: 2026-01-01T00:00:00Z", ""]), "URI is not specified"),
            (Self.body(chain, valid + ["Expiration Time: 2025-12-31T00:00:00Z"]), "Issued At is after Expiration Time"),
            (Self.body(chain, valid + ["Expiration Time: 2026-01-01T00:10:00Z", "Not Before: 2026-01-01T00:20:00Z"]),
             "Not Before is after Expiration Time"),
            (Self.body(chain, valid + ["Chain ID: \(chain == "solana" ? "solana:moonnet" : "0")"]), "Chain ID is not valid"),
            (Self.body(chain, valid + ["Resources:", "- https://supabase.com/a", "- not a uri"]), "Resource at position 1 has invalid URI"),
        ]
        for (message, error) in cases {
            Self.expectError(Self.grant(api, chain, message, signature), 400, "validation_failed", "\(p): \(error)")
        }
    }

    @Test func chainIDs() throws {
        let (api, _) = try Self.makeWeb3API()
        for chainID in ["solana:mainnet", "solana:devnet", "solana:testnet", "solana:localnet"] {
            let (message, signature) = Self.signed(api, "solana", ["chain_id": .string(chainID)])
            #expect(Self.grant(api, "solana", message, signature).status == 200, "\(chainID)")
        }
        for chainID in ["1", "137", "+5", "11155111"] {
            let (message, signature) = Self.signed(api, "ethereum", ["chain_id": .string(chainID)])
            #expect(Self.grant(api, "ethereum", message, signature).status == 200, "\(chainID)")
        }
        for chainID in ["-1", "mainnet", "0x1"] {
            let (message, signature) = Self.signed(api, "ethereum", ["chain_id": .string(chainID)])
            Self.expectError(Self.grant(api, "ethereum", message, signature), 400, "validation_failed", "siwe: Chain ID is not valid")
        }
    }

    /// Go's zero time (0001-01-01T00:00:00Z) as Issued At: siwe refuses it on reading the line,
    /// siws (a plain `time.Time`, `IsZero` checked after the loop) only at the end, so there a
    /// later unparsable line wins. As Expiration Time, siwe keeps it (Issued At is then after
    /// it); siws takes it for no expiration.
    @Test func zeroTimes() throws {
        let (api, _) = try Self.makeWeb3API()
        let zero = ["", "URI: https://supabase.com/", "Version: 1", "Issued At: 0001-01-01T00:00:00Z"]
        Self.expectError(Self.grant(api, "ethereum", Self.body("ethereum", zero), Self.ethereumSignature), 400, "validation_failed",
                         "siwe: Issued At is not specified")
        Self.expectError(Self.grant(api, "solana", Self.body("solana", zero), Self.solanaSignature), 400, "validation_failed",
                         "siws: Issued At is not specified")
        Self.expectError(Self.grant(api, "ethereum", Self.body("ethereum", zero + ["no colon"]), Self.ethereumSignature), 400,
                         "validation_failed", "siwe: Issued At is not specified")
        Self.expectError(Self.grant(api, "solana", Self.body("solana", zero + ["no colon"]), Self.solanaSignature), 400,
                         "validation_failed", "siws: encountered unparsable line at index 6")

        for chain in ["solana", "ethereum"] {
            let address = api.control("POST", "/emulator/v1/web3/wallets", ["chain": .string(chain), "label": "alice"]).json["address"]?
                .stringValue ?? ""
            let message = ["supabase.com wants you to sign in with your \(Web3Chain(rawValue: chain)!.title) account:", address,
                           "", "URI: https://supabase.com/", "Version: 1", "Issued At: 2026-01-01T00:00:00Z",
                           "Expiration Time: 0001-01-01T00:00:00Z"].joined(separator: "\n")
            let response = Self.grant(api, chain, message, Self.sign(api, chain, message, ["label": "alice"]))
            if chain == "solana" {
                #expect(response.status == 200, "\(response.text)")
            } else {
                Self.expectError(response, 400, "validation_failed", "siwe: Issued At is after Expiration Time")
            }
        }
    }

    /// `Web3Grant` picks the parser by `chain` alone: a message for the other chain fails that
    /// chain's signature-format check, or, with a signature of the right shape, its parser's
    /// first-line check. Nothing is created.
    @Test func aMessageForTheOtherChain() throws {
        let (api, _) = try Self.makeWeb3API()
        let (siwe, ethereumSignature) = Self.signed(api, "ethereum")
        let (siws, solanaSignature) = Self.signed(api, "solana")
        Self.expectError(Self.grant(api, "solana", siwe, ethereumSignature), 400, "validation_failed",
                         "signature must be 64 bytes encoded as base64 with or without padding")
        Self.expectError(Self.grant(api, "solana", siwe, solanaSignature), 400, "validation_failed",
                         "siws: message first line does not end in \" wants you to sign in with your Solana account:\"")
        Self.expectError(Self.grant(api, "ethereum", siws, solanaSignature), 400, "validation_failed",
                         "signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string")
        Self.expectError(Self.grant(api, "ethereum", siws, ethereumSignature), 400, "validation_failed",
                         "siwe: message first line does not end in \" wants you to sign in with your Ethereum account:\"")
        #expect(api.control("GET", "/admin/users").json["users"]?.arrayValue?.count == 0)
    }

    // MARK: Requests as supabase-swift sends them

    /// The key of the web3.js `eth.accounts` documentation (address
    /// 0x2c7536E3605D9C16a7a3D7b1898e529396a65c23), which supabase-swift's tests sign with.
    static let web3jsKey = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

    /// supabase-swift's `AuthClient` headers: its client info and API version, the key as
    /// `apikey` and, as its integration tests configure it, as bearer too.
    static func swiftHeaders(_ api: GoTrueAPI) -> HTTPHeaders {
        let key = api.project.configuration.apiKeys.anon
        return ["Content-Type": "application/json", "X-Client-Info": "auth-swift/0.0.0", "X-Supabase-Api-Version": "2024-01-01",
                "apikey": key, "Authorization": "Bearer \(key)"]
    }

    /// `signInWithWeb3` posts `Web3Credentials` through its JSONEncoder: keys sorted and
    /// snake_cased, "/" written "\/", and `gotrue_meta_security` only with a captcha token
    /// (none here).
    static func swiftSignIn(_ api: GoTrueAPI, chain: String, message: String, signature: String) -> HTTPResponse {
        let body = [("chain", chain), ("message", message), ("signature", signature)]
            .map { "\(JSON.string($0.0).serialized()):\(JSON.string($0.1).serialized())" }.joined(separator: ",")
        return api.call("POST", "/auth/v1/token?grant_type=web3", headers: swiftHeaders(api),
                        raw: "{" + body.replacingOccurrences("/", "\\/") + "}")
    }

    /// The bodies of supabase-swift's `signInWithWeb3Ethereum` / `Solana` request snapshots
    /// (Tests/AuthTests/AuthClientTests.swift), byte for byte, the first with its captcha token.
    /// Their signatures are placeholders, so the real server refuses them: the Ethereum one
    /// does not match the address, the Solana one is 55 bytes, not 64. The Ethereum body with
    /// a real signature signs in.
    @Test func supabaseSwiftRequestSnapshots() throws {
        let (api, _) = try Self.makeWeb3API { c in c.siteURL = "https://example.com" }
        let ethereum = #"{"chain":"ethereum","gotrue_meta_security":{"captcha_token":"captcha-token"},"message":"example.com wants you to sign in with your Ethereum account:\n0x2c7536E3605D9C16a7a3D7b1898e529396a65c23\n\nURI: https:\/\/example.com\nVersion: 1\nChain ID: 1\nNonce: abc123\nIssued At: 2026-01-01T00:00:00.000Z","signature":"0x468cc42ece552183597cbbbd0418a5d3efff707a1021a222ad16e55124327ee670d363a8ee08976b5bd5f7af5e3ac53a4e43983a9ac7f4853a75423fcc387ddc1c"}"#
        let solana = #"{"chain":"solana","message":"example.com wants you to sign in with your Solana account:\n4Cw1koUQtqybLFem7uqhzMBznMPGARbFS4cjaYbM9RnR\n\nURI: https:\/\/example.com\nVersion: 1\nIssued At: 2026-01-01T00:00:00.000Z","signature":"dGVzdC1zaWduYXR1cmUtYnl0ZXMtdGhhdC1hcmUtNjQtYnl0ZXMtbG9uZy1mb3ItdGVzdGluZw=="}"#
        // The snapshots' Content-Length.
        #expect(ethereum.utf8.count == 448 && solana.utf8.count == 305)
        var headers = Self.swiftHeaders(api)
        headers["Authorization"] = nil
        Self.expectOAuth(api.call("POST", "/auth/v1/token?grant_type=web3", headers: headers, raw: ethereum),
                         "Signature does not match address in message")
        // API version 2024-01-01: `code` and `message`.
        let short = api.call("POST", "/auth/v1/token?grant_type=web3", headers: headers, raw: solana)
        #expect(short.status == 400 && short.json["code"] == "validation_failed")
        #expect(short.json["message"] == "signature must be 64 bytes encoded as base64 with or without padding")
        // The key behind the snapshot's address, in the wallet, signs the same message.
        _ = api.control("POST", "/emulator/v1/web3/wallets", ["chain": "ethereum", "seed": .string(Self.web3jsKey)])
        let snapshot = try JSON(parsing: Array(ethereum.utf8))
        let placeholder = snapshot["signature"]?.stringValue ?? ""
        let signed = ethereum.replacingOccurrences(placeholder, Self.sign(api, "ethereum", snapshot["message"]?.stringValue ?? "", [:]))
        let response = api.call("POST", "/auth/v1/token?grant_type=web3", headers: headers, raw: signed)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["user"]?["identities"]?[0]?["id"] == "web3:ethereum:0x2c7536E3605D9C16a7a3D7b1898e529396a65c23")
    }

    /// Messages as supabase-swift's integration tests build them (AuthClientIntegrationTests:
    /// `signInWithWeb3Solana` / `Ethereum`): Issued At from `ISO8601DateFormatter` (seconds, no
    /// fraction), no Expiration Time, Solana's without Nonce or Chain ID; against that suite's
    /// config.toml (site URL http://127.0.0.1:3000, http://localhost:3000 allowed).
    @Test(arguments: ["solana", "ethereum"])
    func supabaseSwiftIntegrationMessages(chain: String) throws {
        let (api, clock) = try Self.makeWeb3API { c in
            c.siteURL = "http://127.0.0.1:3000"
            c.uriAllowList = ["https://127.0.0.1:3000", "http://localhost:3000"]
        }
        let wallet: JSONObject = chain == "solana"
            ? ["chain": "solana", "label": "swift"]
            : ["chain": "ethereum", "seed": .string(Self.web3jsKey)]
        let address = api.control("POST", "/emulator/v1/web3/wallets", .object(wallet)).json["address"]?.stringValue ?? ""
        let title = Web3Chain(rawValue: chain)!.title
        var lines = ["localhost:3000 wants you to sign in with your \(title) account:", address, "",
                     "I accept the Terms of Service", "", "URI: http://localhost:3000", "Version: 1"]
        if chain == "ethereum" { lines += ["Chain ID: 1", "Nonce: supabaseswiftintegrationtest"] }
        lines.append("Issued At: 2026-01-01T00:00:00Z")
        let message = lines.joined(separator: "\n")
        let signature = Self.sign(api, chain, message, ["address": .string(address)])

        let response = Self.swiftSignIn(api, chain: chain, message: message, signature: signature)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["user"]?["identities"]?[0]?["id"]?.stringValue == "web3:\(chain):\(address)")
        // Without Expiration Time only the validity window (10 minutes) ends the message.
        clock.advance(seconds: 600)
        #expect(Self.swiftSignIn(api, chain: chain, message: message, signature: signature).status == 200)
        clock.advance(seconds: 1)
        Self.expectOAuth(Self.swiftSignIn(api, chain: chain, message: message, signature: signature),
                         "\(title) message was issued too long ago")
    }

    /// supabase-js adds `gotrue_meta_security: {captcha_token}` when given a captcha token; GoTrue
    /// decodes the grant's three fields and ignores the rest (captcha is checked, when enabled,
    /// by a middleware the emulator does not model).
    @Test(arguments: ["solana", "ethereum"])
    func captchaFieldIsIgnored(chain: String) throws {
        let (api, _) = try Self.makeWeb3API()
        let (message, signature) = Self.signed(api, chain)
        let response = api.call("POST", "/token?grant_type=web3", [
            "chain": .string(chain), "message": .string(message), "signature": .string(signature),
            "gotrue_meta_security": ["captcha_token": "10000000-aaaa-bbbb-cccc-000000000001"],
        ])
        #expect(response.status == 200, "\(response.text)")
    }

    // MARK: The dashboard

    @Test func dashboardShowsTheWeb3Identity() throws {
        let (api, _) = try Self.makeWeb3API()
        api.project.dashboard.configure(enabled: true, requiresKey: false)
        let (message, signature) = Self.signed(api, "ethereum")
        let user = Self.grant(api, "ethereum", message, signature).json["user"]
        let id = user?["id"]?.stringValue ?? ""
        let subject = user?["identities"]?[0]?["id"]?.stringValue ?? ""
        #expect(subject.hasPrefix("web3:ethereum:0x"))
        var browser = DashboardBrowser(api)
        let list = browser.get("/emulator").text
        #expect(list.contains("<span class=\"badge\">web3</span>"))
        let page = browser.get("/emulator/users/\(id)").text
        #expect(page.contains("Identities (1)"))
        #expect(page.contains("<tr><td>web3</td><td>\(subject)</td>"), "the identity row: provider web3, the identity id")
        // The wallet's details, in the identity data.
        #expect(page.contains("&#34;chain&#34;: &#34;ethereum&#34;"))
    }

    // MARK: Binding to this app

    @Test(arguments: ["solana", "ethereum"])
    func uriAndDomainChecks(chain: String) throws {
        let (api, _) = try Self.makeWeb3API()
        let title = chain == "solana" ? "Solana" : "Ethereum"
        func attempt(uri: String, domain: String) -> HTTPResponse {
            let (message, signature) = Self.signed(api, chain, ["uri": .string(uri), "domain": .string(domain)])
            return Self.grant(api, chain, message, signature)
        }
        Self.expectOAuth(attempt(uri: "http://supabase.com/", domain: "supabase.com"),
                         "Signed \(title) message is using URI which does not use HTTPS")
        Self.expectOAuth(attempt(uri: "ftp://supabase.com/", domain: "supabase.com"),
                         "Signed \(title) message is using URI which does not use HTTPS")
        Self.expectOAuth(attempt(uri: "https://supabase.green/", domain: "supabase.green"),
                         "Signed \(title) message is using URI which is not allowed on this server, message was signed for another app")
        Self.expectOAuth(attempt(uri: "https://supabase.com/", domain: "supabase.green"),
                         "Signed \(title) message is using a Domain that does not match the one in URI which is not allowed on this server")
        // localhost: any scheme, and the domain is not compared.
        #expect(attempt(uri: "http://localhost:5173/", domain: "example.com").status == 200)
    }

    // MARK: Time window, on the emulator's clock

    @Test(arguments: ["solana", "ethereum"])
    func timeChecks(chain: String) throws {
        let (api, clock) = try Self.makeWeb3API()
        let title = chain == "solana" ? "Solana" : "Ethereum"
        var (message, signature) = Self.signed(api, chain, ["not_before": "2026-01-01T00:01:00Z", "expires_in": 600])
        Self.expectOAuth(Self.grant(api, chain, message, signature), "Signed \(title) message becomes valid in the future")

        (message, signature) = Self.signed(api, chain, ["issued_at": "2025-12-31T23:55:00Z", "expires_in": 60,
                                                        "not_before": "2025-12-31T23:55:00Z"])
        Self.expectOAuth(Self.grant(api, chain, message, signature), "Signed \(title) message is expired")

        (message, signature) = Self.signed(api, chain, ["issued_at": "2025-12-31T23:49:59Z"])
        Self.expectOAuth(Self.grant(api, chain, message, signature), "\(title) message was issued too long ago")

        (message, signature) = Self.signed(api, chain, ["issued_at": "2026-01-01T00:10:01Z"])
        Self.expectOAuth(Self.grant(api, chain, message, signature), "\(title) message was issued too far in the future")

        // Up to the window's edges it is accepted...
        (message, signature) = Self.signed(api, chain, ["issued_at": "2026-01-01T00:10:00Z"])
        #expect(Self.grant(api, chain, message, signature).status == 200)

        // ...and a message may be presented again while valid (GoTrue keeps no nonce), but not
        // once the clock passes its expiry.
        (message, signature) = Self.signed(api, chain, ["expires_in": 120, "not_before": "2026-01-01T00:00:00Z"])
        #expect(Self.grant(api, chain, message, signature).status == 200)
        clock.advance(seconds: 60)
        #expect(Self.grant(api, chain, message, signature).status == 200)
        clock.advance(seconds: 61)
        Self.expectOAuth(Self.grant(api, chain, message, signature), "Signed \(title) message is expired")
    }

    /// GoTrue's Ethereum branch checks Expiration Time only alongside Not Before; the validity
    /// window still ends such a message.
    @Test func ethereumExpiryNeedsNotBefore() throws {
        let (api, clock) = try Self.makeWeb3API()
        let (message, signature) = Self.signed(api, "ethereum", ["expires_in": 60])
        clock.advance(seconds: 120)
        #expect(Self.grant(api, "ethereum", message, signature).status == 200)
        clock.advance(seconds: 600)
        Self.expectOAuth(Self.grant(api, "ethereum", message, signature), "Ethereum message was issued too long ago")
        // Solana's branch refuses the same case.
        let (solana, solanaSignature) = Self.signed(api, "solana", ["expires_in": 60])
        clock.advance(seconds: 120)
        Self.expectOAuth(Self.grant(api, "solana", solana, solanaSignature), "Signed Solana message is expired")
    }

    @Test func validityWindowIsASetting() throws {
        let (api, clock) = try Self.makeWeb3API { c in c.external.web3Solana.maximumValiditySeconds = 60 }
        let (message, signature) = Self.signed(api, "solana")
        clock.advance(seconds: 61)
        Self.expectOAuth(Self.grant(api, "solana", message, signature), "Solana message was issued too long ago")
    }

    @Test func hasItsOwnRateLimitBucket() throws {
        // The `tiny` preset: 3 per bucket (the real web3 limiter has a burst of 30).
        let (api, _) = try Self.makeWeb3API { c in
            c.rateLimits.preset = .tiny
            c.rateLimits.header = "X-Forwarded-For"
        }
        let (message, signature) = Self.signed(api, "solana")
        let body: JSON = ["chain": "solana", "message": .string(message), "signature": .string(signature)]
        let key: HTTPHeaders = ["X-Forwarded-For": "203.0.113.7"]
        let statuses = (0..<4).map { _ in api.call("POST", "/token?grant_type=web3", body, headers: key).status }
        #expect(statuses == [200, 200, 200, 429])
        // Its own bucket: the other grants still pass.
        #expect(api.call("POST", "/token?grant_type=password", ["email": "a@b.co", "password": "x"], headers: key).status == 400)
    }
}

@Suite struct SoftwareWalletTests {
    @Test func walletsAreDeterministicPerLabelAndChain() throws {
        let (api, _) = try Web3GrantTests.makeWeb3API()
        let (other, _) = try Web3GrantTests.makeWeb3API()
        for chain in ["solana", "ethereum"] {
            let a = api.control("POST", "/emulator/v1/web3/wallets", ["chain": .string(chain), "label": "alice"])
            #expect(a.status == 200)
            let again = other.control("POST", "/emulator/v1/web3/wallets", ["chain": .string(chain), "label": "alice"])
            #expect(a.json["address"] == again.json["address"])
            let b = api.control("POST", "/emulator/v1/web3/wallets", ["chain": .string(chain), "label": "bob"])
            #expect(a.json["address"] != b.json["address"])
        }
        // A seed picks the key: private key 1 is Ethereum's well-known first account.
        let seeded = api.control("POST", "/emulator/v1/web3/wallets",
                                 ["chain": "ethereum", "seed": .string(String(repeating: "0", count: 63) + "1")])
        #expect(seeded.json["address"] == "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf")
    }

    @Test func listsTheWalletsItHolds() throws {
        let (api, _) = try Web3GrantTests.makeWeb3API()
        #expect(api.control("GET", "/emulator/v1/web3/wallets").json == ["wallets": []])
        let alice = api.control("POST", "/emulator/v1/web3/wallets", ["chain": "solana", "label": "alice"]).json
        let seeded = api.control("POST", "/emulator/v1/web3/wallets",
                                 ["chain": "ethereum", "seed": .string(String(repeating: "0", count: 63) + "1")]).json
        // Naming a label elsewhere makes the wallet too.
        _ = Web3GrantTests.signed(api, "ethereum", label: "bob")
        // Made again: listed once, where it was first made.
        _ = api.control("POST", "/emulator/v1/web3/wallets", ["chain": "solana", "label": "alice"])
        let listed = api.control("GET", "/emulator/v1/web3/wallets")
        #expect(listed.status == 200)
        let wallets = listed.json["wallets"]?.arrayValue ?? []
        try #require(wallets.count == 3)
        #expect(wallets[0] == alice)
        #expect(wallets[1] == seeded && wallets[1]["label"] == .null)
        #expect(wallets[2]["label"] == "bob" && wallets[2]["chain"] == "ethereum")
        #expect(wallets[2]["address"] == api.control("POST", "/emulator/v1/web3/wallets", ["chain": "ethereum", "label": "bob"]).json["address"])
        // Another project holds its own.
        let (other, _) = try Web3GrantTests.makeWeb3API()
        #expect(other.control("GET", "/emulator/v1/web3/wallets").json["wallets"]?.arrayValue?.count == 0)
    }

    @Test func refusesAddressesItDidNotCreate() throws {
        let (api, _) = try Web3GrantTests.makeWeb3API()
        let message = Web3GrantTests.body("ethereum", ["", "URI: https://supabase.com/", "Version: 1", "Issued At: 2026-01-01T00:00:00Z"])
        let response = api.control("POST", "/emulator/v1/web3/sign", ["chain": "ethereum", "message": .string(message)])
        #expect(response.status == 404)
        #expect(response.json["msg"]?.stringValue?.contains("holds no Ethereum wallet with address 0xa1E993d09257291470e86778399D79A0864F327E") == true)
        let byAddress = api.control("POST", "/emulator/v1/web3/sign", ["chain": "solana", "message": "hi", "address": "abc"])
        #expect(byAddress.status == 404)
        // Once created, its address names it.
        let address = api.control("POST", "/emulator/v1/web3/wallets", ["chain": "solana", "label": "carol"]).json["address"]
        #expect(api.control("POST", "/emulator/v1/web3/sign", ["chain": "solana", "message": "hi", "address": address ?? .null]).status == 200)
    }

    @Test func messageNeedsASignableURL() throws {
        // `supabase start`'s site URL, http://127.0.0.1:3000, is neither https nor localhost.
        let (api, _) = try Web3GrantTests.makeWeb3API { c in
            c.siteURL = "http://127.0.0.1:3000"
            c.uriAllowList = []
        }
        let refused = api.control("POST", "/emulator/v1/web3/message", ["chain": "solana", "label": "alice"])
        #expect(refused.status == 400)
        #expect(refused.json["msg"]?.stringValue?.contains("http://127.0.0.1:3000") == true)
        #expect(refused.json["msg"]?.stringValue?.contains("GOTRUE_URI_ALLOW_LIST") == true)
        // An allow-list entry the grant accepts is used instead.
        let (allowed, _) = try Web3GrantTests.makeWeb3API { c in
            c.siteURL = "http://127.0.0.1:3000"
            c.uriAllowList = ["http://localhost:3000/**"]
        }
        let built = allowed.control("POST", "/emulator/v1/web3/message", ["chain": "ethereum", "label": "alice"])
        #expect(built.status == 200)
        #expect(built.json["uri"] == "http://localhost:3000/" && built.json["domain"] == "localhost:3000")
        // An entry without a wildcard (supabase-swift's integration config) is used as written:
        // the grant matches it only without a trailing slash. The message signs and the grant
        // takes it.
        let (exact, _) = try Web3GrantTests.makeWeb3API { c in
            c.siteURL = "http://127.0.0.1:3000"
            c.uriAllowList = ["http://localhost:3000"]
        }
        let message = exact.control("POST", "/emulator/v1/web3/message", ["chain": "solana", "label": "alice"])
        #expect(message.status == 200, "\(message.text)")
        #expect(message.json["uri"] == "http://localhost:3000" && message.json["domain"] == "localhost:3000")
    }

    @Test func requiresTheServiceRoleKey() throws {
        let (api, _) = try Web3GrantTests.makeWeb3API()
        let anon = api.project.configuration.apiKeys.anon
        let response = api.call("POST", "/emulator/v1/web3/wallets", ["chain": "solana"], bearer: anon)
        #expect(response.status == 401 || response.status == 403)
        let listing = api.call("GET", "/emulator/v1/web3/wallets", bearer: anon)
        #expect(listing.status == 401 || listing.status == 403)
        #expect(api.control("POST", "/emulator/v1/web3/wallets", ["chain": "bitcoin"]).status == 400)
        #expect(api.control("POST", "/emulator/v1/web3/wallets", ["chain": "solana", "nonsense": true]).status == 400)
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
