/// The Merkle-Damgard front end shared by SHA-1 and SHA-256/224 (FIPS 180-4 sections 5.1.1 and
/// 6; `BlockBuffer128` below is the SHA-512 counterpart): input cut into 64-byte blocks, a partial block kept between updates, and the final
/// padding (0x80, zeros, then the message length in bits as a 64-bit big-endian integer).
struct BlockBuffer64: Sendable {
    private var buffer: Block64 = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Bytes of a partial block waiting for more input.
    private(set) var buffered = 0
    private var length: UInt64 = 0

    /// Feeds `input`, calling `compress(blocks, count)` for every run of whole 64-byte blocks.
    mutating func absorb(_ input: UnsafeRawBufferPointer, _ compress: (UnsafeRawPointer, Int) -> Void) {
        guard var pointer = input.baseAddress, input.count > 0 else { return }
        var remaining = input.count
        length &+= UInt64(remaining)
        if buffered > 0 {
            let take = min(64 - buffered, remaining)
            let offset = buffered
            withUnsafeMutableBytes(of: &buffer) { ($0.baseAddress! + offset).copyMemory(from: pointer, byteCount: take) }
            buffered += take
            pointer += take
            remaining -= take
            if buffered < 64 { return }
            var block = buffer
            withUnsafeBytes(of: &block) { compress($0.baseAddress!, 1) }
            buffered = 0
        }
        let whole = remaining / 64
        if whole > 0 {
            compress(pointer, whole)
            pointer += whole * 64
            remaining -= whole * 64
        }
        if remaining > 0 {
            withUnsafeMutableBytes(of: &buffer) { $0.baseAddress!.copyMemory(from: pointer, byteCount: remaining) }
            buffered = remaining
        }
    }

    /// Absorbs the padding, which completes the last block (or two).
    mutating func pad(_ compress: (UnsafeRawPointer, Int) -> Void) {
        let bitLength = length &* 8
        var tail: (Block64, Block64) = ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0))
        let padLength = buffered < 56 ? 64 - buffered : 128 - buffered
        withUnsafeMutableBytes(of: &tail) { raw in
            raw[0] = 0x80
            for i in 0..<8 {
                raw[padLength - 1 - i] = UInt8(truncatingIfNeeded: bitLength &>> (8 * UInt64(i)))
            }
            absorb(UnsafeRawBufferPointer(rebasing: raw[0..<padLength]), compress)
        }
    }
}

/// 128 bytes of inline storage for a partial SHA-512 input block.
typealias Block128 = (Block64, Block64)

/// The SHA-512 counterpart of `BlockBuffer64` (FIPS 180-4 section 5.1.2): 128-byte blocks, and
/// padding that ends with the message length in bits as a 128-bit big-endian integer, so the
/// last block needs room for 0x80 plus 16 length bytes.
struct BlockBuffer128: Sendable {
    private var buffer: Block128 = ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0))
    /// Bytes of a partial block waiting for more input.
    private(set) var buffered = 0
    /// Total bytes absorbed. Messages are below 2^64 bytes, so the bit length has at most
    /// 67 bits: its high 64-bit word is `length >> 61`.
    private var length: UInt64 = 0

    /// Feeds `input`, calling `compress(blocks, count)` for every run of whole 128-byte blocks.
    mutating func absorb(_ input: UnsafeRawBufferPointer, _ compress: (UnsafeRawPointer, Int) -> Void) {
        guard var pointer = input.baseAddress, input.count > 0 else { return }
        var remaining = input.count
        length &+= UInt64(remaining)
        if buffered > 0 {
            let take = min(128 - buffered, remaining)
            let offset = buffered
            withUnsafeMutableBytes(of: &buffer) { ($0.baseAddress! + offset).copyMemory(from: pointer, byteCount: take) }
            buffered += take
            pointer += take
            remaining -= take
            if buffered < 128 { return }
            var block = buffer
            withUnsafeBytes(of: &block) { compress($0.baseAddress!, 1) }
            buffered = 0
        }
        let whole = remaining / 128
        if whole > 0 {
            compress(pointer, whole)
            pointer += whole * 128
            remaining -= whole * 128
        }
        if remaining > 0 {
            withUnsafeMutableBytes(of: &buffer) { $0.baseAddress!.copyMemory(from: pointer, byteCount: remaining) }
            buffered = remaining
        }
    }

    /// Absorbs the padding, which completes the last block (or two).
    mutating func pad(_ compress: (UnsafeRawPointer, Int) -> Void) {
        let lowBits = length &<< 3, highBits = length &>> 61
        var tail: (Block128, Block128) = (
            ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0)), ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0))
        )
        let padLength = buffered < 112 ? 128 - buffered : 256 - buffered
        withUnsafeMutableBytes(of: &tail) { raw in
            raw[0] = 0x80
            for i in 0..<8 {
                raw[padLength - 1 - i] = UInt8(truncatingIfNeeded: lowBits &>> (8 * UInt64(i)))
                raw[padLength - 9 - i] = UInt8(truncatingIfNeeded: highBits &>> (8 * UInt64(i)))
            }
            absorb(UnsafeRawBufferPointer(rebasing: raw[0..<padLength]), compress)
        }
    }
}
