import AuthHTTP

extension HTTPRequest {
    /// The token of `Authorization: Bearer <token>`, matched as the real server's
    /// `extractBearerToken` does (`^(?i)bearer (\S+)$`); nil when the header is absent or does
    /// not match. Every reader of bearer tokens (authentication, the service_role check, the
    /// gateway's key check, the fake providers' userinfo, scenario consequences) uses this.
    public var bearerToken: String? {
        guard let header = headers["Authorization"] else { return nil }
        // Over the contiguous UTF-8 bytes: this runs on every authenticated request.
        var text = header
        return text.withUTF8 { bytes -> String? in
            guard bytes.count > 7 else { return nil }
            let scheme: StaticString = "bearer "
            for index in 0..<7 where bytes[index] | 0x20 != scheme.utf8Start[index] {  // ASCII case folding
                return nil
            }
            let token = UnsafeBufferPointer(rebasing: bytes[7...])
            // `\S+`: no whitespace at all in the token.
            for byte in token where byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                return nil
            }
            return String(decoding: token, as: UTF8.self)
        }
    }
}
