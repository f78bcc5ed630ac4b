/// The Merkle-Damgard front end shared by SHA-1, SHA-256/224 and SHA-512 (FIPS 180-4 sections
/// 5.1.1, 5.1.2 and 6): input cut into blocks, a partial block kept between updates, and the
/// final padding (0x80, zeros, then the message length in bits as a big-endian integer of 64
/// bits for 64-byte blocks, of 128 bits for 128-byte blocks).
struct BlockBuffer<Storage: BlockStorage>: Sendable {
    private var buffer = Storage()
    /// Bytes of a partial block waiting for more input.
    private(set) var buffered = 0
    /// Total bytes absorbed. Messages are below 2^64 bytes, so the bit length has at most 67
    /// bits: its low word is `length << 3`, its high word `length >> 61`.
    private var length: UInt64 = 0

    /// Feeds `input`, calling `compress(blocks, count)` for every run of whole blocks.
    mutating func absorb(_ input: UnsafeRawBufferPointer, _ compress: (UnsafeRawPointer, Int) -> Void) {
        guard var pointer = input.baseAddress, input.count > 0 else { return }
        let size = Storage.size
        var remaining = input.count
        length &+= UInt64(remaining)
        if buffered > 0 {
            let take = min(size - buffered, remaining)
            let offset = buffered
            withUnsafeMutableBytes(of: &buffer) { ($0.baseAddress! + offset).copyMemory(from: pointer, byteCount: take) }
            buffered += take
            pointer += take
            remaining -= take
            if buffered < size { return }
            var block = buffer
            withUnsafeBytes(of: &block) { compress($0.baseAddress!, 1) }
            buffered = 0
        }
        let whole = remaining / size
        if whole > 0 {
            compress(pointer, whole)
            pointer += whole * size
            remaining -= whole * size
        }
        if remaining > 0 {
            withUnsafeMutableBytes(of: &buffer) { $0.baseAddress!.copyMemory(from: pointer, byteCount: remaining) }
            buffered = remaining
        }
    }

    /// Absorbs the padding, which completes the last block (or two).
    mutating func pad(_ compress: (UnsafeRawPointer, Int) -> Void) {
        let size = Storage.size, lengthField = Storage.lengthFieldSize
        let lowBits = length &<< 3, highBits = length &>> 61
        var tail = (Storage(), Storage())
        let padLength = buffered < size - lengthField ? size - buffered : 2 * size - buffered
        withUnsafeMutableBytes(of: &tail) { raw in
            raw[0] = 0x80
            for i in 0..<8 {
                raw[padLength - 1 - i] = UInt8(truncatingIfNeeded: lowBits &>> (8 * UInt64(i)))
                if lengthField == 16 { raw[padLength - 9 - i] = UInt8(truncatingIfNeeded: highBits &>> (8 * UInt64(i))) }
            }
            absorb(UnsafeRawBufferPointer(rebasing: raw[0..<padLength]), compress)
        }
    }
}

/// Inline storage for one input block, zero-initialised: a tuple, so no heap allocation.
protocol BlockStorage: Sendable {
    init()
    /// The block size in bytes.
    static var size: Int { get }
    /// Bytes of the length field that ends the padding.
    static var lengthFieldSize: Int { get }
}

/// 64 bytes: SHA-1 and SHA-256/224 blocks, with a 64-bit length field.
struct Block64Storage: BlockStorage {
    var bytes: Block64 = (0, 0, 0, 0, 0, 0, 0, 0)
    static var size: Int { 64 }
    static var lengthFieldSize: Int { 8 }
}

/// 128 bytes: SHA-512 blocks, with a 128-bit length field.
struct Block128Storage: BlockStorage {
    var bytes: (Block64, Block64) = ((0, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0))
    static var size: Int { 128 }
    static var lengthFieldSize: Int { 16 }
}

typealias BlockBuffer64 = BlockBuffer<Block64Storage>
typealias BlockBuffer128 = BlockBuffer<Block128Storage>

/// A hash whose compression function a `BlockBuffer` feeds: SHA-1, SHA-256/224 and SHA-512.
protocol BlockCompressing {
    associatedtype Storage: BlockStorage
    var blocks: BlockBuffer<Storage> { get set }
    /// Runs the compression function over `count` consecutive whole blocks.
    mutating func compress(_ blocks: UnsafeRawPointer, count: Int)
}

extension BlockCompressing {
    /// Feeds `input` through the buffer into the compression function.
    mutating func absorb(_ input: UnsafeRawBufferPointer) {
        // The buffer is taken out while it runs, since `compress` mutates `self`, which holds it.
        var blocks = self.blocks
        blocks.absorb(input) { compress($0, count: $1) }
        self.blocks = blocks
    }

    /// A copy with the padding absorbed: its state is the final chaining value. `self` stays
    /// as it is, so a partially fed hash can be finalised and fed further.
    func padded() -> Self {
        var copy = self
        var blocks = copy.blocks
        blocks.pad { copy.compress($0, count: $1) }
        return copy
    }
}
