import AuthHTTP

extension HTTPRequest {
    /// The token of `Authorization: Bearer <token>`, matched as the real server's
    /// `extractBearerToken` does (`^(?i)bearer (\S+)$`); nil when the header is absent or does
    /// not match. Every reader of bearer tokens (authentication, the service_role check, the
    /// gateway's key check, the fake providers' userinfo, scenario consequences) uses this.
    public var bearerToken: String? {
        guard let header = headers["Authorization"] else { return nil }
        // Byte-wise: this runs on every authenticated request.
        let bytes = header.utf8
        guard bytes.count > 7 else { return nil }
        let scheme = "bearer ".utf8
        for (byte, expected) in zip(bytes.prefix(7), scheme) where byte | 0x20 != expected {  // ASCII case folding
            return nil
        }
        let token = bytes.dropFirst(7)
        // `\S+`: no whitespace at all in the token.
        guard !token.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x0B || $0 == 0x0C }) else {
            return nil
        }
        return String(decoding: token, as: UTF8.self)
    }
}
