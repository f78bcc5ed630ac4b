import GoFormats

/// HOTP (RFC 4226) and TOTP (RFC 6238) codes over HMAC-SHA1, the only algorithm GoTrue's TOTP
/// factors use (`totp.ValidateCustom` with SHA1, 6 digits, a 30-second period).
public enum OneTimePassword {
    /// RFC 4226 section 5.3: HMAC of the 8-byte big-endian counter, dynamic truncation, the
    /// low `digits` decimal digits, zero-padded.
    public static func hotp(secret: [UInt8], counter: UInt64, digits: Int = 6) -> String {
        var message = [UInt8](repeating: 0, count: 8)
        for i in 0..<8 { message[i] = UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * i)) }
        let mac = HMAC<SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let value = (UInt32(mac[offset]) & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16
            | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus &*= 10 }
        let code = String(value % modulus)
        return String(repeating: "0", count: max(0, digits - code.count)) + code
    }

    /// RFC 6238 section 4.2: the time step of `unixSeconds` (floor division by `period`).
    public static func timeStep(unixSeconds: Int64, period: Int64 = 30) -> UInt64 {
        UInt64(max(0, unixSeconds) / period)
    }

    /// The TOTP code for the time step containing `unixSeconds`.
    public static func totp(secret: [UInt8], unixSeconds: Int64, period: Int64 = 30, digits: Int = 6) -> String {
        hotp(secret: secret, counter: timeStep(unixSeconds: unixSeconds, period: period), digits: digits)
    }

    /// `totp.ValidateCustom`: the code is accepted for the current step or `skew` steps either
    /// side (RFC 6238 section 5.2); compared in constant time.
    public static func validateTOTP(_ code: String, secret: [UInt8], unixSeconds: Int64, period: Int64 = 30,
                                    digits: Int = 6, skew: Int = 1) -> Bool {
        // pquerna/otp trims the code with strings.TrimSpace before comparing.
        let trimmed = GoStrings.trimSpace(code)
        guard trimmed.utf8.count == digits else { return false }
        let step = Int64(timeStep(unixSeconds: unixSeconds, period: period))
        var matched = false
        for delta in -Int64(skew)...Int64(skew) where step + delta >= 0 {
            let expected = hotp(secret: secret, counter: UInt64(step + delta), digits: digits)
            if constantTimeEquals(Array(expected.utf8), Array(trimmed.utf8)) { matched = true }
        }
        return matched
    }
}
