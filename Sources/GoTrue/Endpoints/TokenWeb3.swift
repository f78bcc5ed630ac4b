import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /token?grant_type=web3` (`Web3Grant` in internal/api/web3.go): sign in with a Solana
/// or Ethereum wallet by presenting a signed SIWS / EIP-4361 message. There is no server nonce:
/// the message is bound to this app by its domain and URI and to a time window by its
/// timestamps, so a message may be presented again while it is still valid, as with GoTrue.
extension TokenEndpoints {
    func web3(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let external = api.snapshot.configuration.external
        // Checked before the body is read.
        if !external.web3Solana.enabled && !external.web3Ethereum.enabled {
            throw AuthError(422, .web3ProviderDisabled, "Web3 provider is disabled")
        }
        let body = try RequestBody(context.request, as: "Web3GrantParams")
        let message = try body.string("message") ?? ""
        let signature = try body.string("signature") ?? ""
        let chainName = try body.string("chain") ?? ""
        guard let chain = Web3Chain(rawValue: chainName) else {
            throw AuthError(400, .web3UnsupportedChain, "Unsupported chain")
        }
        let settings = chain == .solana ? external.web3Solana : external.web3Ethereum
        if !settings.enabled {
            throw AuthError(422, .web3ProviderDisabled, "\(chain.title) Web3 provider is disabled")
        }

        let parsed = try verifiedMessage(message, signature: signature, chain: chain)
        try TokenEndpoints.checkBinding(parsed, api.snapshot.configuration)
        try checkTimes(parsed, validity: settings.maximumValiditySeconds)
        return try signIn(parsed, context)
    }

    /// Lengths, signature encoding, parsing and the signature itself, in GoTrue's order.
    private func verifiedMessage(_ message: String, signature: String, chain: Web3Chain) throws(AuthError) -> Web3Message {
        let length = message.utf8.count
        if length < 64 { throw AuthError(400, .validationFailed, "message is too short") }
        if length > 20 * 1024 { throw AuthError(400, .validationFailed, "message must not exceed 20KB") }
        let mismatch = AuthError.oauth("invalid_grant", "Signature does not match address in message")
        switch chain {
        case .solana:
            // 64 bytes in standard or URL-safe base64, padded (88 characters) or not (86).
            let count = signature.utf8.count
            if count != 86 && count != 88 {
                throw AuthError(400, .validationFailed, "signature must be 64 bytes encoded as base64 with or without padding")
            }
            var unpadded = Substring(signature)
            while unpadded.hasSuffix("=") { unpadded = unpadded.dropLast() }
            let urlSafe = String(unpadded.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
            guard let bytes = try? Web3Message.decodeRawBase64URL(urlSafe) else {
                throw AuthError(400, .validationFailed, "signature does not contain valid base64 characters")
            }
            let parsed = try parse(message, chain)
            guard let valid = parsed.verifySolana(signature: bytes) else {
                // Go's `ed25519.Verify` panics on a key that is not 32 bytes; the recoverer
                // answers 500.
                logError("web3: Solana address \(parsed.address) does not decode to a 32-byte key")
                throw AuthError.internalServerError
            }
            if !valid { throw mismatch }
            return parsed
        case .ethereum:
            // The length check allows a missing "0x"; verification then requires it.
            let hex = signature.hasPrefix("0x") ? signature.dropFirst(2) : Substring(signature)
            if hex.utf8.count != 130 {
                throw AuthError(400, .validationFailed, "signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string")
            }
            let parsed = try parse(message, chain)
            if !parsed.verifyEthereum(signature: signature) { throw mismatch }
            return parsed
        }
    }

    private func parse(_ message: String, _ chain: Web3Chain) throws(AuthError) -> Web3Message {
        do {
            return try Web3Message.parse(message, chain: chain)
        } catch {
            throw AuthError(400, .validationFailed, error.message)
        }
    }

    /// The message must name this app: an https URI (any scheme on localhost) that is a valid
    /// redirect target, and, off localhost, a domain equal to the URI's host that is itself
    /// allowed as `https://<domain>/`.
    package static func checkBinding(_ m: Web3Message, _ config: Configuration) throws(AuthError) {
        let title = m.chain.title
        let policy = RedirectPolicy(configuration: config)
        let hostname = m.parsedURI.hostname
        if m.parsedURI.scheme != "https" && hostname != "localhost" {
            throw .oauth("invalid_grant", "Signed \(title) message is using URI which does not use HTTPS")
        }
        if !policy.isValid(m.uri) {
            throw .oauth("invalid_grant", "Signed \(title) message is using URI which is not allowed on this server, message was signed for another app")
        }
        if hostname != "localhost" && (m.parsedURI.host != m.domain || !policy.isValid("https://\(m.domain)/")) {
            throw .oauth("invalid_grant", "Signed \(title) message is using a Domain that does not match the one in URI which is not allowed on this server")
        }
    }

    /// Not Before, Expiration Time, then Issued At within the maximum validity either way, on
    /// the emulator's clock.
    private func checkTimes(_ m: Web3Message, validity: Double) throws(AuthError) {
        let title = m.chain.title
        let now = api.project.environment.now()
        if let notBefore = m.notBefore, now < notBefore {
            throw .oauth("invalid_grant", "Signed \(title) message becomes valid in the future")
        }
        // GoTrue's Ethereum branch checks the expiration time only when the message also has a
        // Not Before; its Solana branch always does. Reproduced as is; the validity window
        // below still bounds an Ethereum message without Not Before.
        let checksExpiry = m.chain == .solana || m.notBefore != nil
        if checksExpiry, let expiration = m.expirationTime, now > expiration {
            throw .oauth("invalid_grant", "Signed \(title) message is expired")
        }
        let window = Int64(validity * 1_000_000)
        if now > m.issuedAt.adding(microseconds: window) {
            throw .oauth("invalid_grant", "\(title) message was issued too long ago")
        }
        if now < m.issuedAt.adding(microseconds: -window) {
            throw .oauth("invalid_grant", "\(title) message was issued too far in the future")
        }
    }

    /// `createAccountFromExternalIdentity` with provider `web3` (no email), a `login` audit entry
    /// with the wallet's details, and a session whose `amr` method is `web3`; the
    /// before- and after-user-created hooks see a new account.
    private func signIn(_ m: Web3Message, _ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let provider = "web3"
        let subject = "\(provider):\(m.chain.rawValue):\(m.address)"
        var data = ProviderUserData()
        data.metadata.subject = subject
        data.metadata.customClaims = [
            "address": .string(m.address), "chain": .string(m.chain.rawValue), "network": .string(m.chainID),
            "domain": .string(m.domain), "statement": m.statement.map(JSON.string) ?? .null,
        ]
        let accounts = ExternalAccounts(api: api, context: context)
        try accounts.beforeUserCreated(data: data, provider: provider)
        let (issued, user, created): (Tokens.Issued, JSON, Bool) = try api.write { [data] conn, round in
            guard case .user(var user, let created, _) = try accounts.signIn(conn, data: data, provider: provider, emailOptional: true,
                                                                          round: &round) else {
                // Without an email no confirmation can be pending.
                throw AuthError.unexpected
            }
            try api.audit(conn, context, actor: user, action: .login, traits: [
                "provider": .string(provider), "chain": .string(m.chain.rawValue), "network": .string(m.chainID),
                "address": .string(m.address), "domain": .string(m.domain), "uri": m.uriAuditValue,
            ])
            let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "web3", request: context.request)
            return (issued, Models.user(user, identities: try conn.identities(userID: user.id), factors: try conn.factors(userID: user.id)),
                    created)
        }
        // `triggerAfterUserCreated`, after the commit: a refusal fails the request, the user stays.
        if created { try Hooks(api: api, request: context.request).afterUserCreated(user) }
        return .json(.object(issued.response(user: user)), headers: issued.headers)
    }
}

extension Web3Message {
    /// `base64.RawURLEncoding.DecodeString`, which also skips "\r" and "\n".
    static func decodeRawBase64URL(_ text: String) throws(DecodingError) -> [UInt8] {
        // By scalar: "\r\n" is one `Character`.
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
        // One leftover symbol cannot encode a byte.
        if cleaned.utf8.count % 4 == 1 { throw DecodingError(offset: cleaned.utf8.count - 1) }
        return try Base64URL.decode(cleaned)
    }
}
