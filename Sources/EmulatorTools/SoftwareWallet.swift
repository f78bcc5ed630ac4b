import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthPlatform
import GoFormats
import GoTrue

/// The software wallet (service_role): what a browser wallet extension does for Web3 sign-in,
/// so a headless test signs in with `grant_type=web3` without one.
///
/// - `POST /emulator/v1/web3/wallets` `{chain, label?, seed?}` creates (or re-creates) a test
///   wallet: its key is derived from the label, so the same label gives the same address on
///   every run and in every emulator; `seed` (32 bytes in hex) picks the key itself.
/// - `GET /emulator/v1/web3/wallets` lists the wallets this emulator holds (made by the route
///   above or named by label in the two below), oldest first, so a test can find the address it
///   must sign for without keeping it.
/// - `POST /emulator/v1/web3/message` builds a sign-in message for a wallet (SIWS for Solana,
///   EIP-4361 for Ethereum) that this server accepts now: the site URL (or the first allow-list
///   URL the grant would accept) as URI and domain, Issued At from the emulator's clock, a random
///   nonce. Options: `statement`, `uri` and `domain` (taken as given, unchecked, to build
///   messages the grant must refuse), `chain_id`, `nonce`, `issued_at`, `expires_in` (seconds),
///   `not_before`, `request_id`, `resources`.
/// - `POST /emulator/v1/web3/sign` `{chain, message, label? | address?}` signs any message with
///   a wallet this emulator created: Ed25519 over the message bytes (Solana, the signature in
///   base64) or EIP-191 `personal_sign` (Ethereum, 0x-prefixed r || s || v hex). Without a
///   wallet named, the message's second line (its address) names it. An address the emulator
///   did not create is refused: it holds no key for it.
struct SoftwareWalletEndpoints: EndpointGroup {
    let api: Core

    static let prefix = GoTrueAPI.emulatorPrefix + "/web3"

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", prefix + "/wallets", operation: "emulator.web3.wallets.list") { g, _ in g.list() },
            Endpoint("POST", prefix + "/wallets", operation: "emulator.web3.wallets") { g, c in try g.create(c) },
            Endpoint("POST", prefix + "/message", operation: "emulator.web3.message") { g, c in try g.message(c) },
            Endpoint("POST", prefix + "/sign", operation: "emulator.web3.sign") { g, c in try g.sign(c) },
        ]
    }

    private var wallets: SoftwareWallets { api.project.wallets }

    func create(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let fields = try ControlFields(context.request, allowed: ["chain", "label", "seed"])
        let chain = try Self.chain(fields)
        let wallet: SoftwareWallet
        if let seedText = try fields.nonEmptyString("seed") {
            guard let seed = try? Hex.decode(seedText), seed.count == 32 else {
                throw ControlRequest.invalid("\"seed\" must be 32 bytes in hex (64 hex digits)")
            }
            guard let made = SoftwareWallet(chain: chain, label: try fields.nonEmptyString("label"), secret: seed) else {
                throw ControlRequest.invalid("\"seed\" is not a valid secp256k1 private key (0 or not below the group order)")
            }
            wallet = made
        } else {
            wallet = SoftwareWallet(chain: chain, label: try fields.nonEmptyString("label") ?? "default", labelSecret: wallets.labelSecret)
        }
        wallets.remember(wallet)
        return .json(.object(wallet.json))
    }

    func list() -> HTTPResponse {
        .json(["wallets": .array(wallets.all.map { .object($0.json) })])
    }

    func message(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let fields = try ControlFields(context.request, allowed: [
            "chain", "label", "address", "statement", "uri", "domain", "chain_id", "nonce", "issued_at", "expires_in",
            "not_before", "request_id", "resources",
        ])
        let chain = try Self.chain(fields)
        let wallet = try resolve(fields, chain: chain, messageAddress: nil)
        let environment = api.project.environment
        let config = api.snapshot.configuration

        func time(_ key: String) throws(AuthError) -> Timestamp? {
            guard let text = try fields.nonEmptyString(key) else { return nil }
            guard let time = Web3Message.goParseRFC3339(text) else {
                throw ControlRequest.invalid("\"\(key)\" must be an RFC 3339 time such as 2026-01-02T03:04:05Z")
            }
            return time
        }
        let issuedAt = try time("issued_at") ?? environment.now()
        var expiration: Timestamp?
        if let seconds = fields["expires_in"] {
            guard let value = seconds.doubleValue else { throw ControlRequest.invalid("\"expires_in\" must be a number of seconds") }
            expiration = issuedAt.adding(microseconds: Int64(value * 1_000_000))
        }
        var resources: [String] = []
        if let list = fields["resources"] {
            guard let items = list.arrayValue?.compactMap(\.stringValue), items.count == list.arrayValue?.count else {
                throw ControlRequest.invalid("\"resources\" must be a list of URIs")
            }
            resources = items
        }
        var draft = Web3MessageDraft(
            chain: chain, domain: "", address: wallet.address, statement: try fields.string("statement"), uri: "",
            chainID: try fields.string("chain_id") ?? (chain == .ethereum ? "1" : nil),
            nonce: try fields.string("nonce") ?? Self.nonce(environment.randomBytes(16)),
            issuedAt: issuedAt, expirationTime: expiration, notBefore: try time("not_before"),
            requestID: try fields.string("request_id"), resources: resources)

        let uri = try fields.nonEmptyString("uri")
        let domain = try fields.nonEmptyString("domain")
        if uri != nil || domain != nil {
            // As asked, even when the grant will refuse it.
            let base = uri ?? config.siteURL
            draft.uri = base
            draft.domain = domain ?? GoParsedURL.parse(base)?.host ?? ""
        } else {
            try chooseURI(&draft, config)
        }
        let text = draft.text
        return .json([
            "chain": .string(chain.rawValue), "address": .string(wallet.address), "message": .string(text),
            "domain": .string(draft.domain), "uri": .string(draft.uri), "issued_at": .string(issuedAt.rfc3339),
            "expiration_time": draft.expirationTime.map { .string($0.rfc3339) } ?? .null,
        ])
    }

    func sign(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let fields = try ControlFields(context.request, allowed: ["chain", "message", "label", "address"])
        let chain = try Self.chain(fields)
        guard let message = try fields.string("message") else { throw ControlRequest.invalid("\"message\" is required") }
        // The address line of a sign-in message names the wallet when the request does not.
        let lines = Web3Message.lines(message)
        let messageAddress = lines.count > 1 ? GoStrings.trimSpace(lines[1]) : nil
        let wallet = try resolve(fields, chain: chain, messageAddress: messageAddress)
        return .json([
            "chain": .string(chain.rawValue), "address": .string(wallet.address),
            "signature": .string(wallet.sign(Array(message.utf8))),
        ])
    }

    // MARK: Helpers

    private static func chain(_ fields: ControlFields) throws(AuthError) -> Web3Chain {
        guard let name = try fields.string("chain") else { throw ControlRequest.invalid("\"chain\" is required (solana or ethereum)") }
        guard let chain = Web3Chain(rawValue: name) else {
            throw ControlRequest.invalid("\"chain\" must be solana or ethereum (found \(GoStrconv.quote(name)))")
        }
        return chain
    }

    /// The wallet named by `label` (derived, and remembered), else by `address`, else by the
    /// message's address; only wallets this emulator created can be named by address.
    private func resolve(_ fields: ControlFields, chain: Web3Chain, messageAddress: String?) throws(AuthError) -> SoftwareWallet {
        if let label = try fields.nonEmptyString("label") {
            let wallet = SoftwareWallet(chain: chain, label: label, labelSecret: wallets.labelSecret)
            wallets.remember(wallet)
            return wallet
        }
        guard let address = try fields.nonEmptyString("address") ?? messageAddress, !address.isEmpty else {
            throw ControlRequest.invalid("name the wallet with \"label\" or \"address\"")
        }
        guard let wallet = wallets.wallet(chain: chain, address: address) else {
            throw AuthError(404, ErrorCode("not_found"), "The emulator holds no \(chain.title) wallet with address \(address): "
                            + "it signs only for wallets it created (POST \(Self.prefix)/wallets)")
        }
        return wallet
    }

    /// EIP-4361's nonce: at least 8 alphanumeric characters.
    static func nonce(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        return String(decoding: bytes.map { alphabet[Int($0) % alphabet.count] }, as: UTF8.self)
    }

    /// The first of the site URL and the allow list's URLs (cut before any wildcard) for which
    /// a message passes the grant's URI and domain checks; otherwise why none does.
    private func chooseURI(_ draft: inout Web3MessageDraft, _ config: Configuration) throws(AuthError) {
        var candidates = [config.siteURL]
        for pattern in config.uriAllowList {
            let literal = String(pattern.prefix { $0 != "*" && $0 != "?" })
            if literal == pattern {
                // An entry without a wildcard matches only itself: `http://localhost:3000` as
                // written, not `http://localhost:3000/`.
                candidates.append(pattern)
            } else if let parsed = GoParsedURL.parse(literal), !parsed.host.isEmpty, !parsed.scheme.isEmpty {
                candidates.append("\(parsed.scheme)://\(parsed.host)/")
            }
        }
        var reasons: [String] = []
        for candidate in candidates {
            guard let parsed = GoParsedURL.parse(candidate), !parsed.host.isEmpty else { continue }
            // The domain line's syntax, then the grant's URI and domain rules; the other options
            // are the caller's, right or wrong.
            guard Web3Message.isValidDomain(parsed.host) else {
                reasons.append("\(candidate): \(parsed.host) is not a valid message domain (a host name or localhost)")
                continue
            }
            var trial = draft
            trial.uri = candidate
            trial.domain = parsed.host
            let probe = Web3Message(chain: draft.chain, raw: "", domain: parsed.host, address: draft.address, statement: nil,
                                    uri: candidate, parsedURI: parsed, issuedAt: draft.issuedAt)
            do {
                try TokenEndpoints.checkBinding(probe, config)
                draft = trial
                return
            } catch {
                reasons.append("\(candidate): \(error.message)")
            }
        }
        throw ControlRequest.invalid(
            "No URL of this server's configuration can be signed for: " + reasons.joined(separator: "; ")
            + ". The grant wants an https URI (or http://localhost) that is the site URL or on the allow list: "
            + "set GOTRUE_SITE_URL (site_url) or GOTRUE_URI_ALLOW_LIST (additional_redirect_urls), or pass \"uri\"")
    }
}

/// The fields of a sign-in message to write, in EIP-4361 section "Message Format" order (SIWS
/// uses the same layout).
struct Web3MessageDraft: Sendable {
    var chain: Web3Chain
    var domain: String
    var address: String
    var statement: String?
    var uri: String
    var chainID: String?
    var nonce: String?
    var issuedAt: Timestamp
    var expirationTime: Timestamp?
    var notBefore: Timestamp?
    var requestID: String?
    var resources: [String]

    var text: String {
        var lines = ["\(domain)\(chain.headerSuffix)", address, ""]
        if let statement, !statement.isEmpty { lines += [statement, ""] }
        lines += ["URI: \(uri)", "Version: 1"]
        if let chainID, !chainID.isEmpty { lines.append("Chain ID: \(chainID)") }
        if let nonce, !nonce.isEmpty { lines.append("Nonce: \(nonce)") }
        lines.append("Issued At: \(issuedAt.rfc3339)")
        if let expirationTime { lines.append("Expiration Time: \(expirationTime.rfc3339)") }
        if let notBefore { lines.append("Not Before: \(notBefore.rfc3339)") }
        if let requestID, !requestID.isEmpty { lines.append("Request ID: \(requestID)") }
        if !resources.isEmpty { lines += ["Resources:"] + resources.map { "- \($0)" } }
        return lines.joined(separator: "\n")
    }
}

/// One test wallet: a chain and a 32-byte secret (the Ed25519 seed for Solana, the secp256k1
/// private key for Ethereum).
struct SoftwareWallet: Sendable {
    let chain: Web3Chain
    let label: String?
    private let secret: [UInt8]
    /// Base58 of the Ed25519 public key, or the EIP-55 checksummed address.
    let address: String
    /// Base58 (Solana) or 0x-prefixed uncompressed SEC 1 hex (Ethereum).
    let publicKey: String

    /// The wallet of a label: SHA-256 of a fixed prefix, the chain and the label (hashed again
    /// in the rare case the digest is not a secp256k1 scalar).
    /// With `labelSecret` (a server listening beyond loopback), HMAC-SHA256 under that secret
    /// instead: anyone on the network may know or guess a label, and a key that follows from
    /// the label alone would let them sign in as the test's wallet user.
    init(chain: Web3Chain, label: String, labelSecret: [UInt8]? = nil) {
        let input = Array("supabase-auth-emulator web3 wallet \(chain.rawValue):\(label)".utf8)
        var secret = labelSecret.map { Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: $0))) }
            ?? SHA256.hash(data: input)
        while chain == .ethereum && (try? Secp256k1PrivateKey(scalar: secret)) == nil { secret = SHA256.hash(data: secret) }
        self.init(chain: chain, label: label, secret: secret)!
    }

    init?(chain: Web3Chain, label: String?, secret: [UInt8]) {
        self.chain = chain
        self.label = label
        self.secret = secret
        switch chain {
        case .solana:
            guard let key = try? Ed25519PrivateKey(seed: secret) else { return nil }
            address = Base58.encode(key.publicKey.rawRepresentation)
            publicKey = address
        case .ethereum:
            guard let key = try? Secp256k1PrivateKey(scalar: secret) else { return nil }
            address = Ethereum.checksumAddress(Ethereum.address(of: key.publicKey))
            publicKey = "0x" + Hex.encode(key.publicKey.uncompressed)
        }
    }

    /// Solana: Ed25519 over the bytes, standard base64 (as `signMessage` bytes are sent).
    /// Ethereum: `personal_sign`, 0x-prefixed hex with v = 27 or 28.
    func sign(_ message: [UInt8]) -> String {
        switch chain {
        case .solana:
            let key = try! Ed25519PrivateKey(seed: secret)
            return Base64.encode(key.signature(for: message))
        case .ethereum:
            let key = try! Secp256k1PrivateKey(scalar: secret)
            return "0x" + Hex.encode(Ethereum.personalSign(message, with: key))
        }
    }

    var json: JSONObject {
        ["chain": .string(chain.rawValue), "label": label.map(JSON.string) ?? .null, "address": .string(address),
         "public_key": .string(publicKey)]
    }

    /// The registry key: Ethereum addresses compare case-insensitively, as the grant compares them.
    var key: String { "\(chain.rawValue):\(chain == .ethereum ? address.lowercased() : address)" }
}

/// The wallets this emulator created, by address, so `sign` can refuse any other; each keeps
/// the position it was first made at, so the list reads in creation order.
public final class SoftwareWallets: Sendable {
    private let wallets = Lock<[String: (order: Int, wallet: SoftwareWallet)]>([:])
    private let secret = Lock<[UInt8]?>(nil)

    public init() {}

    /// Keys of labelled wallets are derived under `secret` from now on (`SoftwareWallet.init`);
    /// set at start, beyond loopback, with a random secret, so a label alone no longer gives
    /// the key and addresses change from one start to the next.
    public func deriveLabels(under secret: [UInt8]) {
        self.secret.withLock { $0 = secret }
    }

    var labelSecret: [UInt8]? { secret.withLock { $0 } }

    func remember(_ wallet: SoftwareWallet) {
        wallets.withLock { all in
            let order = all[wallet.key]?.order ?? all.count
            all[wallet.key] = (order, wallet)
        }
    }

    func wallet(chain: Web3Chain, address: String) -> SoftwareWallet? {
        let key = "\(chain.rawValue):\(chain == .ethereum ? address.lowercased() : address)"
        return wallets.withLock { $0[key]?.wallet }
    }

    var all: [SoftwareWallet] {
        wallets.withLock { $0.values.sorted { $0.order < $1.order }.map(\.wallet) }
    }
}
