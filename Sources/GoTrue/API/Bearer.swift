import AuthHTTP
import AuthPlatform

extension HTTPRequest {
    /// The token of `Authorization: Bearer <token>`, matched as the real server's
    /// `extractBearerToken` does (`^(?i)bearer (\S+)$`); nil when the header is absent or does
    /// not match. Every reader of bearer tokens (authentication, the service_role check, the
    /// gateway's key check, the fake providers' userinfo, scenario consequences) uses this.
    public var bearerToken: String? {
        guard let header = headers["Authorization"] else { return nil }
        // Over the contiguous UTF-8 bytes: this runs on every authenticated request.
        return header.withUTF8Bytes { bytes -> String? in
            guard bytes.count > 7 else { return nil }
            let scheme: StaticString = "bearer "
            for index in 0..<7 where bytes[index] | 0x20 != scheme.utf8Start[index] {  // ASCII case folding
                return nil
            }
            let token = UnsafeBufferPointer(rebasing: bytes[7...])
            guard !Self.containsSpace(token) else { return nil }
            return String(decoding: token, as: UTF8.self)
        }
    }

    /// Whether `bytes` holds any of RE2's `\s` (`[\t\n\f\r ]`), which `\S+` refuses.
    ///
    /// Eight bytes at a time: a word with no byte below 0x21 (the SWAR test of Hacker's
    /// Delight, 6-1) has none; only a word that fails it is looked at byte by byte. A token is
    /// ~800 bytes of base64url, and a byte-wise scan cost ~4,000 instructions per request.
    static func containsSpace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
        }
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if (word &- 0x2121_2121_2121_2121) & ~word & 0x8080_8080_8080_8080 != 0,
               bytes[offset..<offset + 8].contains(where: isSpace) {
                return true
            }
            offset += 8
        }
        return bytes[offset...].contains(where: isSpace)
    }
}
