import AuthCrypto

/// `auth-crypto-bench rs256 [--seconds S]`: RS256 (RSASSA-PKCS1-v1_5, SHA-256) with a 2048-bit
/// key, signing (CRT, with the fault check) and verification.
func benchRS256(_ arguments: [String]) -> Never {
    let random = SeededRandom(seed: 2048)
    let key = RSAPrivateKey.generate(bits: 2048, random: random)
    benchSignatures("rs256", arguments, random: random, sign: { RSA.signPKCS1v15SHA256($0, key: key) },
                    verify: { RSA.verifyPKCS1v15SHA256($1, signature: $0, key: key.publicKey) })
}
