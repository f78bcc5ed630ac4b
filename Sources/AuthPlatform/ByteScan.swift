/// Sixteen-byte scans of UTF-8 text: the JSON writer's escape check and the parser's strings
/// (AuthJSON), the HTTP head's line ends and field values (AuthHTTP), the bearer token check.
///
/// Comparisons are written vector to vector, and a mask is reduced through its two 64-bit
/// words: with a scalar operand (`v .== 0x22`) or `any(_:)`, the standard library compiles to a
/// loop over the sixteen lanes (seen in the disassembly), which costs more than a byte loop.
public enum ByteScan {
    public typealias Bytes = SIMD16<UInt8>

    /// Whether any lane of `mask` is set.
    @inlinable @inline(__always)
    public static func any(_ mask: SIMDMask<SIMD16<Int8>>) -> Bool {
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        return words[0] | words[1] != 0
    }

    /// The lane of the first set lane of `mask`, which must have one.
    @inlinable @inline(__always)
    public static func firstSet(_ mask: SIMDMask<SIMD16<Int8>>) -> Int {
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        return words[0] != 0 ? words[0].trailingZeroBitCount / 8 : 8 + words[1].trailingZeroBitCount / 8
    }

    /// Bytes `0..<count` of `base` (1 to 15 of them) in one vector, from overlapping loads, with
    /// the other lanes copies of those bytes or `filler`: a test that every lane passes holds for
    /// the bytes exactly when it holds for `filler` too.
    @inlinable @inline(__always)
    public static func gather(_ base: UnsafePointer<UInt8>, count: Int, filler: UInt8) -> Bytes {
        let raw = UnsafeRawPointer(base)
        if count >= 8 {
            let words = SIMD2<UInt64>(raw.loadUnaligned(as: UInt64.self),
                                      raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            return unsafeBitCast(words, to: Bytes.self)
        }
        let plain = UInt32(filler) &* 0x0101_0101
        let words: SIMD4<UInt32>
        if count >= 4 {
            words = SIMD4<UInt32>(raw.loadUnaligned(as: UInt32.self),
                                  raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self), plain, plain)
        } else {
            // One to three bytes: the first, the middle and the last cover them all.
            let gathered = UInt32(base[0]) | UInt32(base[count / 2]) << 8 | UInt32(base[count - 1]) << 16
                | UInt32(filler) << 24
            words = SIMD4<UInt32>(gathered, plain, plain, plain)
        }
        return unsafeBitCast(words, to: Bytes.self)
    }

    /// Whether `test` sets a lane for any byte of `bytes`: sixteen bytes per step, the last step
    /// overlapping bytes already checked rather than going byte by byte, and fewer than sixteen
    /// bytes gathered into one vector padded with `filler`, for which `test` must set no lane.
    @inlinable @inline(__always)
    public static func anyLane(_ bytes: UnsafeBufferPointer<UInt8>, filler: UInt8,
                               _ test: (Bytes) -> SIMDMask<SIMD16<Int8>>) -> Bool {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return false }
        let raw = UnsafeRawPointer(base)
        guard count >= 16 else { return any(test(gather(base, count: count, filler: filler))) }
        var index = 0
        while index + 16 < count {
            if any(test(raw.loadUnaligned(fromByteOffset: index, as: Bytes.self))) { return true }
            index += 16
        }
        return any(test(raw.loadUnaligned(fromByteOffset: count - 16, as: Bytes.self)))
    }

    /// From `start`, the position of the first `byte`, checked sixteen bytes at a time while
    /// sixteen remain, then one by one; `bytes.count` when there is none.
    @inlinable
    public static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            let wanted = Bytes(repeating: byte)
            while index + 16 <= bytes.count {
                let found = raw.loadUnaligned(fromByteOffset: index, as: Bytes.self) .== wanted
                if any(found) { return index + firstSet(found) }
                index += 16
            }
        }
        while index < bytes.count, bytes[index] != byte { index += 1 }
        return index
    }

    /// Whether every byte is below 0x80.
    @inlinable
    public static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return true }
        let raw = UnsafeRawPointer(base)
        var seen: Bytes
        if count >= 16 {
            seen = raw.loadUnaligned(fromByteOffset: count - 16, as: Bytes.self)
            var index = 0
            while index + 16 < count {
                seen |= raw.loadUnaligned(fromByteOffset: index, as: Bytes.self)
                index += 16
            }
        } else {
            seen = gather(base, count: count, filler: 0)
        }
        return !any(seen .>= Bytes(repeating: 0x80))
    }

    /// From `start`, the position of the first quote, backslash or control character, checked
    /// sixteen bytes at a time while sixteen remain; else where fewer than sixteen remain, for
    /// the caller to go on byte by byte.
    @inlinable
    public static func skipStringRun(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        let raw = UnsafeRawPointer(base)
        var index = start
        while index + 16 <= bytes.count {
            let v = raw.loadUnaligned(fromByteOffset: index, as: Bytes.self)
            let found = (v .< Bytes(repeating: 0x20)) .| (v .== Bytes(repeating: UInt8(ascii: "\"")))
                .| (v .== Bytes(repeating: UInt8(ascii: "\\")))
            if any(found) { return index + firstSet(found) }
            index += 16
        }
        return index
    }
}
