import AuthCrypto
import AuthJSON
import GoFormats

/// The two Web3 chains GoTrue signs in with (`grant_type=web3`), with what differs between their
/// message formats: Sign in with Solana (SIWS, Phantom's format) and Sign in with Ethereum
/// (EIP-4361), as GoTrue's `internal/utilities/siws` and `siwe` parse them.
public enum Web3Chain: String, Sendable, CaseIterable {
    case solana
    case ethereum

    /// "Solana" / "Ethereum", as GoTrue's messages name the chain.
    public var title: String { self == .solana ? "Solana" : "Ethereum" }

    /// The prefix of every parser error ("siws: ..." / "siwe: ...").
    var errorPrefix: String { self == .solana ? "siws" : "siwe" }

    package var headerSuffix: String { " wants you to sign in with your \(title) account:" }
}

/// A parsed sign-in message (`SIWSMessage` / `SIWEMessage`). Only what the grant reads is kept.
package struct Web3Message: Sendable {
    var chain: Web3Chain
    var raw: String
    var domain: String
    var address: String
    /// SIWS keeps an absent statement as ""; SIWE as nil (`*string`), which the identity data
    /// then carries as JSON null.
    var statement: String?
    var uri: String
    var parsedURI: GoParsedURL
    var version = ""
    var chainID = ""
    var nonce = ""
    var issuedAt: Timestamp
    /// nil when absent. SIWS (a plain `time.Time`) also treats Go's zero time as absent.
    var expirationTime: Timestamp?
    var notBefore: Timestamp?

    package init(chain: Web3Chain, raw: String, domain: String, address: String, statement: String?, uri: String,
                 parsedURI: GoParsedURL, version: String = "", chainID: String = "", nonce: String = "", issuedAt: Timestamp,
                 expirationTime: Timestamp? = nil, notBefore: Timestamp? = nil) {
        self.chain = chain
        self.raw = raw
        self.domain = domain
        self.address = address
        self.statement = statement
        self.uri = uri
        self.parsedURI = parsedURI
        self.version = version
        self.chainID = chainID
        self.nonce = nonce
        self.issuedAt = issuedAt
        self.expirationTime = expirationTime
        self.notBefore = notBefore
    }

    /// Go's zero `time.Time`, which `IsZero` reports.
    static let goZeroTime = Timestamp.goZero

    struct ParseError: Error, Equatable {
        var message: String
    }

    /// `siws.ParseMessage` / `siwe.ParseMessage`, check for check and message for message.
    static func parse(_ raw: String, chain: Web3Chain) throws(ParseError) -> Web3Message {
        let p = chain.errorPrefix
        func fail(_ text: String) -> ParseError { ParseError(message: "\(p): \(text)") }

        let lines = Self.lines(raw)
        if lines.count < 6 { throw fail("message needs at least 6 lines") }
        let header = lines[0]
        if !header.hasSuffix(chain.headerSuffix) {
            throw fail("message first line does not end in \"\(chain.headerSuffix)\"")
        }
        let domain = GoStrings.trimSpace(String(header.dropLast(chain.headerSuffix.count)))
        if !isValidDomain(domain) { throw fail("domain in first line of message is not valid") }

        let address = GoStrings.trimSpace(lines[1])
        switch chain {
        case .solana:
            // `^[a-zA-Z0-9]{32,44}$`: base58-looking, not decoded yet.
            let bytes = Array(address.utf8)
            if !(32...44).contains(bytes.count) || !bytes.allSatisfy(isASCIIAlphanumeric) {
                throw fail("wallet address is not in base58 format")
            }
        case .ethereum:
            // `^0x[a-fA-F0-9]{40}$`: any letter case (EIP-55 checksums are not enforced).
            let bytes = Array(address.utf8)
            if bytes.count != 42 || !address.hasPrefix("0x") || !bytes.dropFirst(2).allSatisfy(isHexDigit) {
                throw fail("wallet address is not a valid Ethereum address")
            }
        }
        if !lines[2].isEmpty { throw fail("third line must be empty") }

        var statement: String? = chain == .solana ? "" : nil
        var start = 3
        if !lines[3].isEmpty && lines[4].isEmpty {
            statement = lines[3]
            start = 5
        }

        var uri: (text: String, parsed: GoParsedURL)?
        var version = "", chainID = "", nonce = ""
        var issuedAt: Timestamp?
        var expiration: Timestamp?, notBefore: Timestamp?
        var resources = 0
        var inResources = false
        for index in start..<lines.count {
            let line = GoStrings.trimSpace(lines[index])
            if inResources {
                if line.hasPrefix("- ") {
                    let resource = GoStrings.trimSpace(String(line.dropFirst(2)))
                    if requestURI(resource) == nil { throw fail("Resource at position \(resources) has invalid URI") }
                    resources += 1
                    continue
                }
                inResources = false
            }
            if line == "Resources:" {
                inResources = true
                continue
            }
            if line.isEmpty { continue }
            guard let colon = line.firstIndex(of: ":") else { throw fail("encountered unparsable line at index \(index)") }
            let key = line[..<colon]
            let value = GoStrings.trimSpace(String(line[line.index(after: colon)...]))
            switch key {
            case "URI":
                guard let parsed = requestURI(value) else { throw fail("URI is not valid") }
                uri = (value, parsed)
            case "Version":
                version = value
            case "Chain ID":
                switch chain {
                case .solana:
                    if !value.isEmpty && !["solana:mainnet", "solana:devnet", "solana:testnet", "solana:localnet"].contains(value) {
                        throw fail("Chain ID is not valid")
                    }
                case .ethereum:
                    // EIP-155 chain ids: `strconv.Atoi` must succeed and give a positive number.
                    guard let id = goAtoi(value), id > 0 else { throw fail("Chain ID is not valid") }
                }
                chainID = value
            case "Nonce":
                nonce = value
            case "Issued At":
                guard let time = goParseRFC3339(value) else { throw fail("Issued At is not a valid ISO8601 timestamp") }
                if chain == .ethereum && time == goZeroTime { throw fail("Issued At is not specified") }
                issuedAt = time
            case "Expiration Time":
                guard let time = goParseRFC3339(value) else { throw fail("Expiration Time is not a valid ISO8601 timestamp") }
                expiration = chain == .solana && time == goZeroTime ? nil : time
            case "Not Before":
                guard let time = goParseRFC3339(value) else { throw fail("Not Before is not a valid ISO8601 timestamp") }
                notBefore = chain == .solana && time == goZeroTime ? nil : time
            default:
                // "Request ID" and unknown keys are read and ignored.
                break
            }
        }

        // Go prints the version with %q.
        if version != "1" { throw fail("Version value is not supported, expected 1 got \(GoStrconv.quote(version))") }
        guard let issuedAt, issuedAt != goZeroTime else { throw fail("Issued At is not specified") }
        guard let uri else { throw fail("URI is not specified") }
        if let expiration, issuedAt > expiration { throw fail("Issued At is after Expiration Time") }
        if let notBefore, let expiration, notBefore > expiration { throw fail("Not Before is after Expiration Time") }

        return Web3Message(chain: chain, raw: raw, domain: domain, address: address, statement: statement, uri: uri.text,
                           parsedURI: uri.parsed, version: version, chainID: chainID, nonce: nonce, issuedAt: issuedAt,
                           expirationTime: expiration, notBefore: notBefore)
    }

    // MARK: Signatures

    /// `SIWSMessage.VerifySignature`: Ed25519 over the message as signed by browser wallets
    /// (Phantom's sign-in), else over the off-chain message envelope Ledger devices sign
    /// (Solana's off-chain message signing proposal: 0xff "solana offchain", version 0, the
    /// domain in 32 bytes, format 0 (ASCII), one signer, its key, the length as little-endian
    /// 16 bits, the message). nil when the address does not decode to 32 bytes, where Go's
    /// `ed25519.Verify` panics.
    func verifySolana(signature: [UInt8]) -> Bool? {
        guard let key = try? Base58.decode(address), key.count == 32 else { return nil }
        guard let publicKey = try? Ed25519PublicKey(rawRepresentation: key) else { return false }
        let message = Array(raw.utf8)
        if publicKey.isValidSignature(signature, for: message) { return true }
        guard message.count <= Int(UInt16.max) else { return false }
        var envelope: [UInt8] = [0xFF] + Array("solana offchain".utf8) + [0x00]
        var domainField = Array(domain.utf8.prefix(32))
        domainField += [UInt8](repeating: 0, count: 32 - domainField.count)
        envelope += domainField + [0x00, 0x01] + key
        envelope += [UInt8(message.count & 0xFF), UInt8(message.count >> 8)]
        envelope += message
        return publicKey.isValidSignature(signature, for: envelope)
    }

    /// `SIWEMessage.VerifySignature`: `hexutil.Decode` (a "0x" prefix is required), 65 bytes,
    /// v of 27 or more lowered by 27, `crypto.Ecrecover` of the EIP-191 hash, and the recovered
    /// address compared with the message's case-insensitively.
    ///
    /// GoTrue is built without cgo, so `Ecrecover` is go-ethereum's pure-Go one: it hands
    /// v + 27 (a byte, wrapping) to decred's `RecoverCompact` as a compact-signature code, which
    /// takes 27 to 34 (bit 2 marks a compressed key and does not change the recovery). So v of
    /// 0 to 7 or 27 to 34 is accepted, the recovery id being its low two bits.
    func verifyEthereum(signature text: String) -> Bool {
        guard text.hasPrefix("0x") || text.hasPrefix("0X"),
              let signature = try? Hex.decode(text.dropFirst(2)), signature.count == 65 else { return false }
        var v = signature[64]
        if v >= 27 { v -= 27 }
        let code = v &+ 27
        guard (27...34).contains(code),
              let key = Secp256k1PublicKey.recover(signature: Array(signature[0..<64]), recoveryID: Int((code - 27) & 3),
                                                   digest: Ethereum.personalMessageHash(Array(raw.utf8))) else { return false }
        return Hex.encode(Ethereum.address(of: key)) == address.dropFirst(2).lowercased()
    }

    // MARK: Go helpers

    /// `strings.Split(raw, "\n")` on bytes: a "\r" stays on its line (Swift's `Character`
    /// split would keep "\r\n" whole).
    package static func lines(_ raw: String) -> [String] {
        raw.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `IsValidDomain`: `^(localhost|(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,})(?::\d{1,5})?$`.
    package static func isValidDomain(_ domain: String) -> Bool {
        var host = Substring(domain)
        if let colon = domain.firstIndex(of: ":") {
            let port = domain[domain.index(after: colon)...]
            guard (1...5).contains(port.utf8.count), port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            host = domain[..<colon]
        }
        if host == "localhost" { return true }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, let tld = labels.last, tld.utf8.count >= 2,
              tld.utf8.allSatisfy({ isASCIIAlphanumeric($0) && !($0 >= 0x30 && $0 <= 0x39) }) else { return false }
        for label in labels.dropLast() {
            let bytes = Array(label.utf8)
            guard let first = bytes.first, let last = bytes.last, bytes.count <= 63,
                  isASCIIAlphanumeric(first), isASCIIAlphanumeric(last),
                  bytes.allSatisfy({ isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else { return false }
        }
        return true
    }

    /// `url.ParseRequestURI`: an absolute URI (with a scheme) or an absolute path.
    static func requestURI(_ text: String) -> GoParsedURL? {
        guard !text.isEmpty, let parsed = GoParsedURL.parse(text) else { return nil }
        return parsed.scheme.isEmpty && !text.hasPrefix("/") ? nil : parsed
    }

    /// `time.Parse(time.RFC3339, ...)`: upper-case `T` and `Z` only.
    package static func goParseRFC3339(_ text: String) -> Timestamp? {
        if text.utf8.contains(UInt8(ascii: "t")) || text.utf8.contains(UInt8(ascii: "z")) { return nil }
        return Timestamp(rfc3339: text)
    }

    /// `strconv.Atoi`: an optional sign, then decimal digits that fit 64 bits.
    static func goAtoi(_ text: String) -> Int? {
        var digits = Substring(text)
        var negative = false
        if let sign = digits.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var value = 0
        for c in digits.utf8 {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int(c - 0x30))
            if o1 || o2 { return nil }
            value = a
        }
        return negative ? -value : value
    }

    private static func isASCIIAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }
}

extension Web3Message {
    /// The audit log's `uri` trait: GoTrue logs the `*url.URL` itself, which Go's JSON encoder
    /// writes as the struct's exported fields.
    var uriAuditValue: JSON {
        let text = uri
        var rest = Substring(text)
        if let colon = rest.firstIndex(of: ":"), !parsedURI.scheme.isEmpty { rest = rest[rest.index(after: colon)...] }
        // `ParseRequestURI` keeps a "#..." in the path: it has no fragment.
        var rawQuery = ""
        if let question = rest.firstIndex(of: "?") {
            rawQuery = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            rest = rest[(rest.firstIndex(of: "/") ?? rest.endIndex)...]
        }
        // `setPath`: `Path` is the unescaped path, and `RawPath` the path as written when
        // escaping `Path` again would not give it back (`/a%2Fb`: Path `/a/b`, RawPath `/a%2Fb`;
        // `/a%20b`: Path `/a b`, no RawPath).
        var path = "", rawPath = ""
        if parsedURI.opaque.isEmpty {
            let written = String(rest)
            path = GoParsedURL.unescape(Array(written.utf8)[...], .path) ?? written
            if GoURL.escapePath(path) != written { rawPath = written }
        }
        return [
            "Scheme": .string(parsedURI.scheme), "Opaque": .string(parsedURI.opaque), "User": .null,
            "Host": .string(parsedURI.host), "Path": .string(path),
            "RawPath": .string(rawPath), "OmitHost": false, "ForceQuery": false, "RawQuery": .string(rawQuery),
            "Fragment": "", "RawFragment": "",
        ]
    }
}
