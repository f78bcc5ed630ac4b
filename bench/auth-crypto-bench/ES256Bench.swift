import AuthCrypto

/// `auth-crypto-bench es256 [--seconds S]`: ES256 (ECDSA P-256 with SHA-256), RFC 6979 signing
/// then verification (OpenSSL's `ecdsap256` signs with random nonces).
func benchES256(_ arguments: [String]) -> Never {
    let random = SeededRandom(seed: 0xec_256)
    let key = P256PrivateKey.generate(random: random)
    benchSignatures("es256", arguments, random: random, sign: { key.signature(for: $0) },
                    verify: { key.publicKey.isValidSignature($0, for: $1) })
}
