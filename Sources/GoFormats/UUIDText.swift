/// UUIDs in their hyphenated text form, 8-4-4-4-12 hex digits (RFC 9562 section 4): what
/// gofrs/uuid's `String()` writes (lowercase) and the form every check in the emulator
/// accepts. The one home for writing and recognising it: GoTrue's claims, the store's id
/// lookups and Postgres mode's uuid columns all read ids through `isValid`.
package enum UUIDText {
    /// Whether `text` is 36 bytes of 8-4-4-4-12 hex digits, either case (as gofrs/uuid and
    /// Postgres read the canonical form), or lowercase only with `lowercaseOnly`. Postgres mode
    /// looks up only ids that pass: any other cannot match a uuid column, and answering nothing,
    /// as SQLite does, beats the 22P02 that casting it would raise.
    package static func isValid(_ text: String, lowercaseOnly: Bool = false) -> Bool {
        let (valid, upper) = scan(text)
        return valid && !(lowercaseOnly && upper)
    }

    /// `text` in lowercase when it is a UUID in the form `isValid` accepts (the same string when
    /// it already is, as ids nearly always are), else nil: one pass where a check and
    /// `lowercased()` would make two.
    package static func lowercased(_ text: String) -> String? {
        let (valid, upper) = scan(text)
        guard valid else { return nil }
        return upper ? text.lowercased() : text  // ASCII only, so Unicode lowercasing maps A-F alone
    }

    /// Whether `text` is 8-4-4-4-12 hex digits, and whether any of them is uppercase.
    private static func scan(_ text: String) -> (valid: Bool, upper: Bool) {
        var text = text  // withUTF8 reads a native string in place; any other is made native first
        return text.withUTF8 { bytes in
            guard bytes.count == 36 else { return (false, false) }
            var upper = false
            for (index, byte) in bytes.enumerated() {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard byte == UInt8(ascii: "-") else { return (false, false) }
                } else if byte &- UInt8(ascii: "A") < 6 {
                    upper = true
                } else {
                    guard byte &- UInt8(ascii: "0") < 10 || byte &- UInt8(ascii: "a") < 6 else { return (false, false) }
                }
            }
            return (true, upper)
        }
    }

    /// 16 bytes as lowercase `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`; with `versionFour`, the
    /// version and variant bits of a random UUID (RFC 9562 section 5.4) set on the way.
    /// Written straight into the string's storage: each audited write makes one, and an array,
    /// digit table and copy cost ~2,400 instructions per UUID.
    package static func format(_ bytes: ArraySlice<UInt8>, versionFour: Bool = false) -> String {
        precondition(bytes.count == 16, "a UUID has 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { out in
            var o = 0
            var i = 0
            for var byte in bytes {
                if versionFour && i == 6 { byte = (byte & 0x0F) | 0x40 }
                if versionFour && i == 8 { byte = (byte & 0x3F) | 0x80 }
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    out[o] = UInt8(ascii: "-")
                    o += 1
                }
                out[o] = hexDigit(byte >> 4)
                out[o + 1] = hexDigit(byte & 0x0F)
                o += 2
                i += 1
            }
            return o
        }
    }

    package static func format(_ bytes: [UInt8], versionFour: Bool = false) -> String {
        format(bytes[...], versionFour: versionFour)
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
