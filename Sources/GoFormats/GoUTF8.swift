/// Go's `unicode/utf8` decoding: an invalid or truncated sequence is one byte that decodes to
/// U+FFFD, so byte strings that are not UTF-8 are read the way Go reads them.
package enum GoUTF8 {
    /// `utf8.DecodeRune(s[i...])`: the rune at `i` and its width in bytes.
    package static func decodeRune(_ s: [UInt8], _ i: Int) -> (UInt32, Int) {
        let b0 = s[i]
        if b0 < 0x80 { return (UInt32(b0), 1) }
        let n = s.count - i
        func cont(_ k: Int) -> UInt32? {
            guard k < n else { return nil }
            let b = s[i + k]
            return b & 0xC0 == 0x80 ? UInt32(b & 0x3F) : nil
        }
        if b0 >= 0xC2 && b0 <= 0xDF {
            if let c1 = cont(1) { return ((UInt32(b0 & 0x1F) << 6) | c1, 2) }
        } else if b0 >= 0xE0 && b0 <= 0xEF {
            if let c1 = cont(1), let c2 = cont(2) {
                let r = (UInt32(b0 & 0x0F) << 12) | (c1 << 6) | c2
                if r >= 0x800 && !(0xD800...0xDFFF).contains(r) { return (r, 3) }
            }
        } else if b0 >= 0xF0 && b0 <= 0xF4 {
            if let c1 = cont(1), let c2 = cont(2), let c3 = cont(3) {
                let r = (UInt32(b0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3
                if r >= 0x10000 && r <= 0x10FFFF { return (r, 4) }
            }
        }
        return (0xFFFD, 1)
    }

    /// `utf8.DecodeLastRune(s[..<end])`: the rune ending just before `end` and its width.
    package static func decodeLastRune(_ s: [UInt8], _ end: Int) -> (UInt32, Int) {
        let b = s[end - 1]
        if b < 0x80 { return (UInt32(b), 1) }
        var start = end - 1
        let lim = max(end - 4, 0)
        while start > lim && s[start] & 0xC0 == 0x80 { start -= 1 }
        let (r, w) = decodeRune(s, start)
        if start + w != end { return (0xFFFD, 1) }
        return (r, w)
    }
}
