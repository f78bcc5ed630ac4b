import AuthCrypto

/// `auth-crypto-bench rs256 [--seconds S]`: RS256 (RSASSA-PKCS1-v1_5, SHA-256) with a 2048-bit
/// key, signing (CRT, with the fault check) and verification of 32-byte messages.
func benchRS256(_ arguments: [String]) -> Never {
    let seconds = benchSeconds(arguments, command: "rs256")
    let random = SeededRandom(seed: 2048)
    let key = RSAPrivateKey.generate(bits: 2048, random: random)
    let messages = (0..<64).map { _ in random.bytes(count: 32) }
    let signatures = messages.map { RSA.signPKCS1v15SHA256($0, key: key) }
    let sign = operationsPerSecond(seconds: seconds) { index in
        RSA.signPKCS1v15SHA256(messages[index % 64], key: key) == signatures[index % 64]
    }
    let verify = operationsPerSecond(seconds: seconds) { index in
        RSA.verifyPKCS1v15SHA256(messages[index % 64], signature: signatures[index % 64], key: key.publicKey)
    }
    report("rs256", sign: sign, verify: verify)
}
