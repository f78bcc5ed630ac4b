import AuthCrypto

/// `auth-crypto-bench es256 [--seconds S]`: ES256 (ECDSA P-256 with SHA-256), RFC 6979 signing
/// then verification of 32-byte messages (OpenSSL's `ecdsap256` signs with random nonces).
func benchES256(_ arguments: [String]) -> Never {
    let seconds = benchSeconds(arguments, command: "es256")
    let random = SeededRandom(seed: 0xec_256)
    let key = P256PrivateKey.generate(random: random)
    let messages = (0..<64).map { _ in random.bytes(count: 32) }
    let signatures = messages.map { key.signature(for: $0) }
    let sign = operationsPerSecond(seconds: seconds) { index in
        key.signature(for: messages[index % 64]) == signatures[index % 64]
    }
    let verify = operationsPerSecond(seconds: seconds) { index in
        key.publicKey.isValidSignature(signatures[index % 64], for: messages[index % 64])
    }
    report("es256", sign: sign, verify: verify)
}
