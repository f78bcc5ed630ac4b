import AuthCrypto

/// `auth-crypto-bench eddsa [--seconds S]`: Ed25519 (RFC 8032) signing and verification of
/// 32-byte messages.
func benchEdDSA(_ arguments: [String]) -> Never {
    let seconds = benchSeconds(arguments, command: "eddsa")
    let random = SeededRandom(seed: 25519)
    let key = Ed25519PrivateKey.generate(random: random)
    let messages = (0..<64).map { _ in random.bytes(count: 32) }
    let signatures = messages.map { key.signature(for: $0) }
    let sign = operationsPerSecond(seconds: seconds) { index in
        key.signature(for: messages[index % 64]) == signatures[index % 64]
    }
    let verify = operationsPerSecond(seconds: seconds) { index in
        key.publicKey.isValidSignature(signatures[index % 64], for: messages[index % 64])
    }
    report("eddsa", sign: sign, verify: verify)
}
