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

    /// Whether `bytes` holds any of RE2's `\s` (`[\t\n\f\r ]`), which `\S+` refuses. Sixteen
    /// bytes per step (`ByteScan`): a token is ~800 bytes of base64url, and a byte-wise scan
    /// cost ~4,000 instructions per request.
    static func containsSpace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        typealias Bytes = ByteScan.Bytes
        return ByteScan.anyLane(bytes, filler: UInt8(ascii: "a")) { v in
            (v .== Bytes(repeating: 0x20)) .| (v .== Bytes(repeating: 0x09)) .| (v .== Bytes(repeating: 0x0a))
                .| (v .== Bytes(repeating: 0x0c)) .| (v .== Bytes(repeating: 0x0d))
        }
    }
}
