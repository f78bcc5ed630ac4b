/// AES encryption (FIPS 197) with 128-, 192- or 256-bit keys, and CTR mode (NIST SP 800-38A
/// section 6.5) with a big-endian counter block as Go's `cipher.NewCTR` increments it. Firebase's
/// password hashes encrypt a signer key with AES-256-CTR under a scrypt-derived key; nothing
/// here decrypts, so only the forward cipher exists. Byte-oriented and table-driven: it runs a
/// handful of blocks per sign-in.
public struct AES: Sendable {
    let roundKeys: [UInt8]
    let rounds: Int

    public init?(key: [UInt8]) {
        guard [16, 24, 32].contains(key.count) else { return nil }
        let nk = key.count / 4
        rounds = nk + 6
        // Key expansion (section 5.2).
        var w = key
        w.reserveCapacity(16 * (rounds + 1))
        var rcon: UInt8 = 1
        for i in nk..<(4 * (rounds + 1)) {
            var t = Array(w[(4 * (i - 1))..<(4 * i)])
            if i % nk == 0 {
                t = [Self.sbox[Int(t[1])] ^ rcon, Self.sbox[Int(t[2])], Self.sbox[Int(t[3])], Self.sbox[Int(t[0])]]
                rcon = Self.double(rcon)
            } else if nk > 6 && i % nk == 4 {
                t = t.map { Self.sbox[Int($0)] }
            }
            for j in 0..<4 { w.append(w[4 * (i - nk) + j] ^ t[j]) }
        }
        roundKeys = w
    }

    /// One 16-byte block (section 5.1).
    public func encrypt(block input: [UInt8]) -> [UInt8] {
        precondition(input.count == 16, "AES block size is 16 bytes")
        var s = input
        for i in 0..<16 { s[i] ^= roundKeys[i] }
        for round in 1...rounds {
            // SubBytes and ShiftRows: state byte r + 4c comes from column c + r.
            var shifted = [UInt8](repeating: 0, count: 16)
            for c in 0..<4 {
                for r in 0..<4 { shifted[r + 4 * c] = Self.sbox[Int(s[r + 4 * ((c + r) % 4)])] }
            }
            s = shifted
            if round != rounds {
                // MixColumns.
                for c in 0..<4 {
                    let a0 = s[4 * c], a1 = s[4 * c + 1], a2 = s[4 * c + 2], a3 = s[4 * c + 3]
                    let all = a0 ^ a1 ^ a2 ^ a3
                    s[4 * c] = a0 ^ all ^ Self.double(a0 ^ a1)
                    s[4 * c + 1] = a1 ^ all ^ Self.double(a1 ^ a2)
                    s[4 * c + 2] = a2 ^ all ^ Self.double(a2 ^ a3)
                    s[4 * c + 3] = a3 ^ all ^ Self.double(a3 ^ a0)
                }
            }
            for i in 0..<16 { s[i] ^= roundKeys[16 * round + i] }
        }
        return s
    }

    /// `data` XORed with the key stream that starts from counter block `iv`.
    public func ctr(_ data: [UInt8], iv: [UInt8]) -> [UInt8] {
        precondition(iv.count == 16, "the CTR counter block is 16 bytes")
        var counter = iv
        var out = data
        var offset = 0
        while offset < data.count {
            let stream = encrypt(block: counter)
            for i in 0..<min(16, data.count - offset) { out[offset + i] ^= stream[i] }
            offset += 16
            // Increment the whole block as one big-endian number.
            var i = 15
            while i >= 0 {
                counter[i] &+= 1
                if counter[i] != 0 { break }
                i -= 1
            }
        }
        return out
    }

    /// Multiplication by x in GF(2^8) mod x^8 + x^4 + x^3 + x + 1 (section 4.2.1).
    @inline(__always)
    static func double(_ b: UInt8) -> UInt8 { b << 1 ^ (b & 0x80 != 0 ? 0x1b : 0) }

    /// The S-box (section 5.1.1, Figure 7).
    static let sbox: [UInt8] = [
        0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
        0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
        0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
        0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
        0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
        0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
        0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
        0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5, 0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
        0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
        0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
        0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
        0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
        0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
        0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
        0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
        0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
    ]
}
