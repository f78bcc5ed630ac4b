/// Input checks with the real server's messages (`validateEmail` in mail.go, `validatePhone` in
/// phone.go).
package enum Validation {
    /// Lowercased email, or 400 `validation_failed`.
    package static func email(_ email: String) throws(AuthError) -> String {
        if email.isEmpty { throw AuthError(400, .validationFailed, "An email address is required") }
        if email.utf8.count > 255 { throw AuthError(400, .validationFailed, "An email address is too long") }
        guard isEmailFormat(email) else {
            throw AuthError(400, .validationFailed, "Unable to validate email address: invalid format")
        }
        return email.lowercased()
    }

    /// badoux/checkmail's format rule: a local part of `a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-`, then a
    /// domain of dot-separated labels (alphanumerics and inner hyphens, 1-63 characters each).
    static func isEmailFormat(_ email: String) -> Bool {
        let bytes = Array(email.utf8)
        guard let at = bytes.firstIndex(of: UInt8(ascii: "@")), at > 0, at < bytes.count - 1 else { return false }
        guard bytes[..<at].allSatisfy({ emailLocalAllowed[Int($0)] }) else { return false }
        let domain = bytes[(at + 1)...]
        for label in domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard (1...63).contains(label.count), isAlphanumeric(label.first!), isAlphanumeric(label.last!),
                  label.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") })
            else { return false }
        }
        return true
    }

    /// The local part's alphabet as a table indexed by byte, built once (a `Set` built per call
    /// was most of validating a large fixture's addresses).
    private static let emailLocalAllowed: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for b in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.!#$%&'*+/=?^_`{|}~-".utf8 { table[Int(b)] = true }
        return table
    }()

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    /// `formatPhoneNumber`: drops a leading `+` and every space.
    package static func formatPhone(_ phone: String) -> String {
        var p = Substring(phone)
        if p.hasPrefix("+") { p = p.dropFirst() }
        return String(p.filter { $0 != " " })
    }

    /// E.164 digits (`^[1-9][0-9]{1,14}$`) after formatting, or 400 `validation_failed`.
    package static func phone(_ phone: String) throws(AuthError) -> String {
        let formatted = formatPhone(phone)
        let bytes = Array(formatted.utf8)
        guard (2...15).contains(bytes.count), bytes[0] >= 0x31, bytes[0] <= 0x39,
              bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { throw AuthError(400, .validationFailed, "Invalid phone number format (E.164 required)") }
        return formatted
    }

    package static let nilUUID = "00000000-0000-0000-0000-000000000000"
}
