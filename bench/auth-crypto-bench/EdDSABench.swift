import AuthCrypto

/// `auth-crypto-bench eddsa [--seconds S]`: Ed25519 (RFC 8032) signing and verification.
func benchEdDSA(_ arguments: [String]) -> Never {
    let random = SeededRandom(seed: 25519)
    let key = Ed25519PrivateKey.generate(random: random)
    benchSignatures("eddsa", arguments, random: random, sign: { key.signature(for: $0) },
                    verify: { key.publicKey.isValidSignature($0, for: $1) })
}
