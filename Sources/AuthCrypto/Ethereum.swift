/// Ethereum's account and message-signing conventions on top of secp256k1 and Keccak-256.
public enum Ethereum {
    /// The account address of a public key (Ethereum Yellow Paper, equation 284): the last 20
    /// bytes of Keccak-256 of the 64-byte x || y.
    public static func address(of key: Secp256k1PublicKey) -> [UInt8] {
        Array(Keccak256.hash(data: key.x + key.y).suffix(20))
    }

    /// EIP-55 mixed-case checksum encoding: "0x" and 40 hex digits, a letter upper-cased when
    /// the matching nibble of Keccak-256 of the lower-case hex is 8 or more.
    public static func checksumAddress(_ address: [UInt8]) -> String {
        precondition(address.count == 20, "Ethereum addresses are 20 bytes")
        let lower = Array(Hex.encode(address).utf8)
        let hash = Keccak256.hash(data: lower)
        var out = Array("0x".utf8)
        for (i, c) in lower.enumerated() {
            let nibble = i % 2 == 0 ? hash[i / 2] >> 4 : hash[i / 2] & 0x0F
            out.append(c >= 0x61 && nibble >= 8 ? c - 0x20 : c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The digest `personal_sign` signs (EIP-191 version 0x45): Keccak-256 of
    /// "\u{19}Ethereum Signed Message:\n", the message length in decimal, and the message.
    public static func personalMessageHash(_ message: [UInt8]) -> [UInt8] {
        var hasher = Keccak256()
        hasher.update(data: Array("\u{19}Ethereum Signed Message:\n\(message.count)".utf8))
        hasher.update(data: message)
        return hasher.finalize()
    }

    /// `personal_sign`: the 65-byte r || s || v over `personalMessageHash`, v = 27 + recovery
    /// id as wallets write it, s low.
    public static func personalSign(_ message: [UInt8], with key: Secp256k1PrivateKey) -> [UInt8] {
        let (signature, recoveryID) = key.signature(digest: personalMessageHash(message))
        return signature + [UInt8(27 + recoveryID)]
    }

    /// The address that produced a 65-byte r || s || v `personal_sign` signature of `message`,
    /// or nil. v may be 27 to 30 or 0 to 3 (go-ethereum subtracts 27 from a v of 27 or more
    /// before `Ecrecover`, which takes recovery ids 0 to 3).
    public static func recoverAddress(message: [UInt8], signature: [UInt8]) -> [UInt8]? {
        guard signature.count == 65 else { return nil }
        var v = Int(signature[64])
        if v >= 27 { v -= 27 }
        guard let key = Secp256k1PublicKey.recover(signature: Array(signature[0..<64]), recoveryID: v,
                                                   digest: personalMessageHash(message)) else { return nil }
        return address(of: key)
    }
}
