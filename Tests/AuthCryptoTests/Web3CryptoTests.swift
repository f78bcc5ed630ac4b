import PythonTestSupport
import Testing

@testable import AuthCrypto

/// Keccak-256 (Ethereum's pre-FIPS-202 padding) and the shared sponge through SHA3-256.
@Suite struct KeccakTests {
    @Test func keccak256KnownAnswers() {
        // The empty string and "abc": the digests Ethereum tooling documents for Keccak-256
        // (SHA3-256 gives a7ffc6f8... and 3a985da7... for the same inputs).
        #expect(Keccak256.hash(data: []).hexString == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        #expect(Keccak256.hash(data: utf8("abc")).hexString == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")
        // The Solidity ERC-20 event topic (EIP-20): keccak256("Transfer(address,address,uint256)").
        #expect(Keccak256.hash(data: utf8("Transfer(address,address,uint256)")).hexString
                == "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
    }

    /// FIPS 202 examples (NIST "SHA3-256" example values): the same permutation and sponge with
    /// the SHA-3 padding byte. The 1600-bit message of 0xA3 spans two 136-byte blocks.
    @Test func sha3ExamplesCheckTheSponge() {
        func sha3(_ data: [UInt8]) -> String {
            var h = Keccak256(sha3: ())
            h.update(data: data)
            return h.finalize().hexString
        }
        #expect(sha3([]) == "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a")
        #expect(sha3(utf8("abc")) == "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
        #expect(sha3([UInt8](repeating: 0xA3, count: 200)) == "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787")
    }

    /// Two blocks of input, checked with the Keccak-256 written in Tests/python/test_client_web3.py
    /// (itself checked against the published vectors above).
    @Test func multiBlockInput() {
        #expect(Keccak256.hash(data: [UInt8](repeating: 0xA3, count: 200)).hexString
                == "3a57666b048777f2c953dc4456f45a2588e1cb6f2da760122d530ac2ce607d4a")
    }

    @Test func streamingMatchesOneShotAcrossBlockBoundaries() {
        let random = SeededRandom(seed: 0x6B)
        for length in [0, 1, 135, 136, 137, 271, 272, 273, 1000] {
            let data = random.bytes(count: length)
            var h = Keccak256()
            feed(&h, data, chunks: [1, 7, 136, 50])
            #expect(h.finalize() == Keccak256.hash(data: data), "length \(length)")
        }
    }

    @Test(.enabled(if: Python.shouldRun, "needs Python 3 (set AUTH_EMULATOR_PYTHON or put python3 on PATH)"))
    func sha3MatchesPythonHashlib() throws {
        // hashlib has SHA3-256 but not Keccak-256; both share everything but the padding byte.
        let random = SeededRandom(seed: 0x5A3)
        let inputs = (0..<64).map { random.bytes(count: $0 * 9) }
        let script = """
            import hashlib, sys
            for line in sys.stdin:
                print(hashlib.sha3_256(bytes.fromhex(line.strip()[1:])).hexdigest())
            """
        let lines = try Python.run(script: script, input: inputs.map { "m" + $0.hexString }.joined(separator: "\n") + "\n")
            .split(separator: "\n").map(String.init)
        try #require(lines.count == inputs.count)
        for (input, line) in zip(inputs, lines) {
            var h = Keccak256(sha3: ())
            h.update(data: input)
            #expect(h.finalize().hexString == line, "length \(input.count)")
        }
    }
}

@Suite struct Secp256k1Tests {
    static func scalar(_ value: UInt8) -> [UInt8] { [UInt8](repeating: 0, count: 31) + [value] }

    /// SEC 2 section 2.4.1: 1 G is the base point; 2 G and 3 G as tabulated for the curve.
    @Test func smallMultiplesOfTheGenerator() throws {
        let one = try Secp256k1PrivateKey(scalar: Self.scalar(1)).publicKey
        #expect(one.x.hexString == "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
        #expect(one.y.hexString == "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8")
        let two = try Secp256k1PrivateKey(scalar: Self.scalar(2)).publicKey
        #expect(two.x.hexString == "c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5")
        #expect(two.y.hexString == "1ae168fea63dc339a3c58419466ceaeef7f632653266d0e1236431a950cfe52a")
        let three = try Secp256k1PrivateKey(scalar: Self.scalar(3)).publicKey
        #expect(three.x.hexString == "f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9")
    }

    @Test func refusesOutOfRangeScalarsAndPoints() {
        #expect(throws: Secp256k1KeyError.scalarOutOfRange) { try Secp256k1PrivateKey(scalar: Self.scalar(0)) }
        let n = unhex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
        #expect(throws: Secp256k1KeyError.scalarOutOfRange) { try Secp256k1PrivateKey(scalar: n) }
        #expect(throws: Secp256k1KeyError.invalidLength) { try Secp256k1PrivateKey(scalar: [1]) }
        #expect(throws: Secp256k1KeyError.pointNotOnCurve) { try Secp256k1PublicKey(x: Self.scalar(1), y: Self.scalar(1)) }
    }

    /// Well-known Ethereum accounts: private keys 1 and 2, and the key of the web3.js
    /// `eth.accounts` documentation.
    @Test func ethereumAddresses() throws {
        func address(_ key: [UInt8]) throws -> String {
            Ethereum.checksumAddress(Ethereum.address(of: try Secp256k1PrivateKey(scalar: key).publicKey))
        }
        #expect(try address(Self.scalar(1)) == "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf")
        #expect(try address(Self.scalar(2)) == "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF")
        #expect(try address(unhex("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"))
                == "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23")
    }

    /// EIP-55's own examples (mixed case, all upper, all lower), re-encoded from their bytes.
    @Test func eip55Examples() {
        for address in ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
                        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
                        "0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
                        "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26"] {
            #expect(Ethereum.checksumAddress(unhex(String(address.dropFirst(2)))) == address)
        }
    }

    /// EIP-191 `personal_sign`: the web3.js documentation vector (`accounts.sign("Some data",
    /// key)`): its message hash, and the signature, which RFC 6979 makes reproducible.
    @Test func personalSignVector() throws {
        let key = try Secp256k1PrivateKey(scalar: unhex("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"))
        #expect(Ethereum.personalMessageHash(utf8("Some data")).hexString
                == "1da44b586eb0729ff70a73c326926f6ed5a25f5b056e7f47fbc6e58d86871655")
        let signature = Ethereum.personalSign(utf8("Some data"), with: key)
        #expect(signature.hexString == "b91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd"
                + "6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c")
        #expect(Ethereum.recoverAddress(message: utf8("Some data"), signature: signature) == Ethereum.address(of: key.publicKey))
    }

    /// Sign-in messages signed by real wallets, from the real server's web3 tests
    /// (internal/api/web3_test.go): the messages are longer than one Keccak block, so the
    /// recovered address also checks multi-block hashing.
    @Test func recoversWalletSignatures() {
        let message = "supabase.com wants you to sign in with your Ethereum account:\n0xa1E993d09257291470e86778399D79A0864F327E\n\nStatement\n\nURI: https://supabase.com\nVersion: 1\nIssued At: 2025-03-29T00:00:00.000Z\nExpiration Time: 2025-03-29T00:10:00Z\nNot Before: 2025-03-29T00:00:00Z"
        let signature = unhex("37495c9ac73f7a3acb589820699db39e1ab290f6756e41e16c2ddeb8588669440c9df95027597d518e3afb7db6f692fb63c44f56d266b2c65ac78a5d317bf5ef1c")
        #expect(utf8(message).count > Keccak256.blockByteCount)
        let address = Ethereum.recoverAddress(message: utf8(message), signature: signature)
        #expect(address.map(Ethereum.checksumAddress) == "0xa1E993d09257291470e86778399D79A0864F327E")
        // v as 0 / 1 recovers the same key; the other parity a different one.
        var zeroBased = signature
        zeroBased[64] -= 27
        #expect(Ethereum.recoverAddress(message: utf8(message), signature: zeroBased) == address)
        zeroBased[64] ^= 1
        #expect(Ethereum.recoverAddress(message: utf8(message), signature: zeroBased) != address)
        var tooHigh = signature
        tooHigh[64] = 31
        #expect(Ethereum.recoverAddress(message: utf8(message), signature: tooHigh) == nil)
    }

    @Test func signaturesVerifyAndRecover() throws {
        let random = SeededRandom(seed: 0x256B1)
        for _ in 0..<8 {
            let key = try Secp256k1PrivateKey(scalar: random.bytes(count: 32))
            let digest = random.bytes(count: 32)
            let (signature, recoveryID) = key.signature(digest: digest)
            #expect(key.publicKey.isValidSignature(signature, digest: digest))
            #expect(Secp256k1PublicKey.recover(signature: signature, recoveryID: recoveryID, digest: digest) == key.publicKey)
            // Low s (EIP-2): s <= n / 2, whose top byte is at most 0x7f.
            #expect(signature[32] <= 0x7F)
            var other = digest
            other[0] ^= 1
            #expect(!key.publicKey.isValidSignature(signature, digest: other))
        }
    }

    @Test(.enabled(if: Secp256k1Python.shouldRun, "needs Python 3 with cryptography (AUTH_EMULATOR_PYTHON or python3 on PATH)"))
    func interoperatesWithOpenSSL() throws {
        try #require(Secp256k1Python.available, "Python with cryptography is required under CI")
        let random = SeededRandom(seed: 0xE7)
        let keys = try (0..<8).map { _ in try Secp256k1PrivateKey(scalar: random.bytes(count: 32)) }
        let digests = keys.map { _ in random.bytes(count: 32) }
        var requests: [String] = []
        var ours: [[UInt8]] = []
        for (key, digest) in zip(keys, digests) {
            let signature = key.signature(digest: digest).signature
            ours.append(signature)
            requests.append("check \(key.scalar.hexString) \(digest.hexString) \(signature.hexString)")
        }
        let mints = (0..<16).map { _ in random.bytes(count: 32) }
        requests += mints.map { "mint \($0.hexString)" }
        let lines = try Python.run(script: Secp256k1Python.script, input: requests.joined(separator: "\n") + "\n")
            .split(separator: "\n").map(String.init)
        try #require(lines.count == keys.count + mints.count)
        for (index, key) in keys.enumerated() {
            let fields = lines[index].split(separator: " ").map(String.init)
            try #require(fields.count == 3)
            #expect(fields[0] == key.publicKey.x.hexString && fields[1] == key.publicKey.y.hexString, "Q for key \(index)")
            #expect(fields[2] == "valid", "OpenSSL verifies our signature \(index)")
        }
        var highS = 0
        for (index, digest) in mints.enumerated() {
            let fields = lines[keys.count + index].split(separator: " ").map(String.init)
            try #require(fields.count == 3)
            let publicKey = try Secp256k1PublicKey(x: unhex(fields[0]), y: unhex(fields[1]))
            let signature = unhex(fields[2])
            #expect(publicKey.isValidSignature(signature, digest: digest), "OpenSSL signature \(index)")
            // One of the two parities recovers OpenSSL's key, high s or not.
            let recovered = (0...1).compactMap { Secp256k1PublicKey.recover(signature: signature, recoveryID: $0, digest: digest) }
            #expect(recovered.contains(publicKey), "recovery of OpenSSL signature \(index)")
            if signature[32] > 0x7F { highS += 1 }
        }
        #expect(highS > 0, "OpenSSL does not normalise s, so some signatures have high s")
    }
}

enum Secp256k1Python {
    static let available: Bool = {
        guard Python.interpreter != nil else { return false }
        return (try? Python.run(script: "from cryptography.hazmat.primitives.asymmetric import ec; ec.SECP256K1(); print('ok')", input: ""))
            == "ok\n"
    }()

    static var shouldRun: Bool { available || Python.isCI }

    static let script = #"""
        import sys
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, utils
        curve = ec.SECP256K1()
        prehashed = ec.ECDSA(utils.Prehashed(hashes.SHA256()))
        for line in sys.stdin:
            op, *args = line.split()
            if op == "check":
                d, digest, signature = args
                key = ec.derive_private_key(int(d, 16), curve)
                numbers = key.public_key().public_numbers()
                der = utils.encode_dss_signature(int(signature[:64], 16), int(signature[64:], 16))
                try:
                    key.public_key().verify(der, bytes.fromhex(digest), prehashed)
                    verdict = "valid"
                except InvalidSignature:
                    verdict = "invalid"
                print("%064x %064x %s" % (numbers.x, numbers.y, verdict))
            else:
                key = ec.generate_private_key(curve)
                numbers = key.public_key().public_numbers()
                r, s = utils.decode_dss_signature(key.sign(bytes.fromhex(args[0]), prehashed))
                print("%064x %064x %064x%064x" % (numbers.x, numbers.y, r, s))
        """#
}

/// Differential checks against implementations that share no code with ours: pycryptodome's
/// Keccak-256 (`Crypto.Hash.keccak`) and coincurve, the Python bindings of Bitcoin Core's
/// libsecp256k1 (the library go-ethereum's cgo build and most wallets sign and recover with).
/// EIP-55 checksums and EIP-191 prefixes are written out in the script from their EIPs, over
/// those two libraries. Skipped locally without them; required under CI.
@Suite struct Web3LibraryCrossCheckTests {
    static func run(_ requests: [String]) throws -> [[String]] {
        try #require(Web3Python.available, "Python with pycryptodome and coincurve is required under CI (Tests/python/requirements.txt)")
        let lines = try Python.run(script: Web3Python.script, input: requests.joined(separator: "\n") + "\n")
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        try #require(lines.count == requests.count)
        return lines
    }

    /// Inputs around the 136-byte rate (one byte short, exact, one over, two blocks), then
    /// random lengths.
    @Test(.enabled(if: Web3Python.shouldRun, "needs Python 3 with pycryptodome and coincurve (AUTH_EMULATOR_PYTHON)"))
    func keccak256MatchesPycryptodome() throws {
        let random = SeededRandom(seed: 0x6B656363)
        var g = random.generator
        var lengths = [0, 1, 135, 136, 137, 271, 272, 273, 1000]
        while lengths.count < 80 { lengths.append(Int.random(in: 0...700, using: &g)) }
        let inputs = lengths.map { random.bytes(count: $0) }
        let lines = try Self.run(inputs.map { "keccak m\($0.hexString)" })
        for (input, line) in zip(inputs, lines) {
            #expect(Keccak256.hash(data: input).hexString == line.first, "length \(input.count)")
        }
    }

    /// Address and EIP-55 checksum of random keys: Q from libsecp256k1, Keccak-256 from
    /// pycryptodome.
    @Test(.enabled(if: Web3Python.shouldRun, "needs Python 3 with pycryptodome and coincurve (AUTH_EMULATOR_PYTHON)"))
    func checksummedAddressesMatch() throws {
        let random = SeededRandom(seed: 0xE1055)
        let keys = try (0..<40).map { _ in try Secp256k1PrivateKey(scalar: random.bytes(count: 32)) }
        let lines = try Self.run(keys.map { "address m\($0.scalar.hexString)" })
        var mixed = 0
        for (index, (key, fields)) in zip(keys, lines).enumerated() {
            try #require(fields.count == 2)
            #expect((key.publicKey.x + key.publicKey.y).hexString == fields[0], "Q of key \(index)")
            let ours = Ethereum.checksumAddress(Ethereum.address(of: key.publicKey))
            #expect(ours == fields[1], "address of key \(index)")
            if ours != ours.lowercased() && ours.dropFirst(2) != ours.dropFirst(2).uppercased() { mixed += 1 }
        }
        #expect(mixed > 30, "most checksummed addresses mix cases")
    }

    /// The `personal_sign` digest; lengths where the decimal length gains a digit (9/10,
    /// 99/100, 999/1000) and where the prefixed input crosses the rate.
    @Test(.enabled(if: Web3Python.shouldRun, "needs Python 3 with pycryptodome and coincurve (AUTH_EMULATOR_PYTHON)"))
    func personalMessageDigestsMatch() throws {
        let random = SeededRandom(seed: 0x191)
        var g = random.generator
        var lengths = [0, 1, 9, 10, 99, 100, 108, 109, 110, 999, 1000, 20 * 1024]
        while lengths.count < 40 { lengths.append(Int.random(in: 0...400, using: &g)) }
        let messages = lengths.map { random.bytes(count: $0) }
        let lines = try Self.run(messages.map { "personal m\($0.hexString)" })
        for (message, line) in zip(messages, lines) {
            #expect(Ethereum.personalMessageHash(message).hexString == line.first, "length \(message.count)")
        }
    }

    /// Our signatures verify in libsecp256k1 (which also refuses a high s) and recover there to
    /// the signer; and, both being RFC 6979 with HMAC-SHA256 and low s, they equal
    /// libsecp256k1's own signature of the same digest, recovery id included.
    @Test(.enabled(if: Web3Python.shouldRun, "needs Python 3 with pycryptodome and coincurve (AUTH_EMULATOR_PYTHON)"))
    func ourSignaturesMatchLibsecp256k1() throws {
        let random = SeededRandom(seed: 0x5EC9)
        let cases = try (0..<32).map { _ in (try Secp256k1PrivateKey(scalar: random.bytes(count: 32)), random.bytes(count: 32)) }
        var requests: [String] = []
        var signatures: [[UInt8]] = []
        for (key, digest) in cases {
            let (signature, recoveryID) = key.signature(digest: digest)
            signatures.append(signature + [UInt8(recoveryID)])
            requests.append("check m\(key.scalar.hexString) m\(digest.hexString) m\(signatures.last!.hexString)")
        }
        let lines = try Self.run(requests)
        var recoveryIDs: Set<UInt8> = []
        for (index, (ours, fields)) in zip(signatures, lines).enumerated() {
            try #require(fields.count == 3)
            #expect(fields[0] == "valid", "libsecp256k1 verifies signature \(index)")
            #expect(fields[1] == "same-key", "libsecp256k1 recovers the signer of signature \(index)")
            #expect(fields[2] == ours.hexString, "RFC 6979 signature \(index)")
            recoveryIDs.insert(ours[64])
        }
        #expect(recoveryIDs == [0, 1], "both parities occur")
    }

    /// `personal_sign` signatures libsecp256k1 makes with nonces we would not pick (RFC 6979
    /// with extra entropy): the address we recover is the one computed in Python.
    @Test(.enabled(if: Web3Python.shouldRun, "needs Python 3 with pycryptodome and coincurve (AUTH_EMULATOR_PYTHON)"))
    func recoversLibsecp256k1Signatures() throws {
        let random = SeededRandom(seed: 0x7EC0)
        var g = random.generator
        let cases = try (0..<32).map { _ in
            (key: try Secp256k1PrivateKey(scalar: random.bytes(count: 32)), message: random.bytes(count: Int.random(in: 0...300, using: &g)),
             entropy: random.bytes(count: 32))
        }
        let lines = try Self.run(cases.map { "sign m\($0.key.scalar.hexString) m\($0.message.hexString) m\($0.entropy.hexString)" })
        for (index, (c, fields)) in zip(cases, lines).enumerated() {
            try #require(fields.count == 2)
            let signature = unhex(String(fields[1].dropFirst(2)))
            try #require(signature.count == 65)
            #expect(Ethereum.recoverAddress(message: c.message, signature: signature).map(Ethereum.checksumAddress) == fields[0],
                    "recovered address \(index)")
            let digest = Ethereum.personalMessageHash(c.message)
            #expect(Secp256k1PublicKey.recover(signature: Array(signature[0..<64]), recoveryID: Int(signature[64]) - 27, digest: digest)
                    == c.key.publicKey, "recovered key \(index)")
            #expect(c.key.publicKey.isValidSignature(Array(signature[0..<64]), digest: digest), "verifies \(index)")
            #expect(Ethereum.personalSign(c.message, with: c.key) != signature, "another nonce than RFC 6979's \(index)")
        }
    }
}

enum Web3Python {
    static let available: Bool = {
        guard Python.interpreter != nil else { return false }
        return (try? Python.run(script: "from Crypto.Hash import keccak; import coincurve; print('ok')", input: "")) == "ok\n"
    }()

    static var shouldRun: Bool { available || Python.isCI }

    /// One request a line, each argument hex behind an "m" (so an empty one is still a word).
    static let script = #"""
        import sys
        import coincurve
        from coincurve._libsecp256k1 import ffi, lib
        from coincurve.ecdsa import cdata_to_der, deserialize_compact
        from Crypto.Hash import keccak

        def keccak256(data):
            return keccak.new(digest_bits=256, data=data).digest()

        def address(public_key):
            return keccak256(public_key.format(compressed=False)[1:])[12:]

        def checksum(raw):
            # EIP-55: upper-case a letter whose nibble of keccak256(lower-case hex) is 8 or more.
            lower = raw.hex()
            nibbles = keccak256(lower.encode()).hex()
            return "0x" + "".join(c.upper() if int(nibbles[i], 16) >= 8 else c for i, c in enumerate(lower))

        def personal(message):
            # EIP-191 version 0x45.
            return keccak256(b"\x19Ethereum Signed Message:\n" + str(len(message)).encode() + message)

        for line in sys.stdin:
            op, *args = line.split()
            args = [bytes.fromhex(a[1:]) for a in args]
            if op == "keccak":
                print(keccak256(args[0]).hex())
            elif op == "address":
                public_key = coincurve.PrivateKey(args[0]).public_key
                print(public_key.format(compressed=False)[1:].hex(), checksum(address(public_key)))
            elif op == "personal":
                print(personal(args[0]).hex())
            elif op == "check":
                scalar, digest, ours = args
                key = coincurve.PrivateKey(scalar)
                der = cdata_to_der(deserialize_compact(ours[:64]))
                valid = key.public_key.verify(der, digest, hasher=None)
                recovered = coincurve.PublicKey.from_signature_and_message(ours, digest, hasher=None)
                same = recovered.format(compressed=False) == key.public_key.format(compressed=False)
                theirs = key.sign_recoverable(digest, hasher=None)
                print("valid" if valid else "invalid", "same-key" if same else "other-key", theirs.hex())
            elif op == "sign":
                scalar, message, entropy = args
                key = coincurve.PrivateKey(scalar)
                nonce = (lib.secp256k1_nonce_function_rfc6979, ffi.new("unsigned char[32]", entropy))
                signature = key.sign_recoverable(personal(message), hasher=None, custom_nonce=nonce)
                print(checksum(address(key.public_key)), "0x" + (signature[:64] + bytes([27 + signature[64]])).hex())
        """#
}

@Suite struct Base58Tests {
    /// The Bitcoin-alphabet examples of draft-msporny-base58 section 5.
    @Test func knownAnswers() throws {
        #expect(Base58.encode(utf8("Hello World!")) == "2NEpo7TZRRrLZSi2U")
        #expect(Base58.encode(utf8("The quick brown fox jumps over the lazy dog.")) == "USm3fpXnKG5EUBx2ndxBDMPVciP5hGey2Jh4NDv6gmeo1LkMeiKrLJUUBk6Z")
        #expect(Base58.encode([0x00, 0x00, 0x28, 0x7f, 0xb4, 0xcd]) == "11233QC4")
        #expect(try Base58.decode("11233QC4") == [0x00, 0x00, 0x28, 0x7f, 0xb4, 0xcd])
        #expect(try Base58.decode("2NEpo7TZRRrLZSi2U") == utf8("Hello World!"))
        #expect(try Base58.decode("") == [])
        #expect(throws: DecodingError(offset: 2)) { try Base58.decode("11O") }
    }

    @Test func roundTrips() throws {
        let random = SeededRandom(seed: 58)
        for length in [0, 1, 31, 32, 64] {
            var bytes = random.bytes(count: length)
            if length > 3 { bytes[0] = 0 }
            #expect(try Base58.decode(Base58.encode(bytes)) == bytes)
        }
    }
}
