/// Keccak-256 as Ethereum uses it (Ethereum Yellow Paper, appendix "Hashing"): the Keccak
/// sponge of the SHA-3 competition with capacity 512 bits (rate 136 bytes) and a 256-bit output,
/// padded with the original multi-rate padding `pad10*1` (first pad byte 0x01). FIPS 202 later
/// changed that first byte to 0x06 for SHA3-256, so the two functions give different digests for
/// every input; Ethereum addresses and EIP-191 message hashes need this one.
///
/// Pure Swift: the emulator hashes a few short sign-in messages, never bulk data.
public struct Keccak256: HashFunction {
    /// The sponge rate r = 1600 - 2 * 256 bits (Keccak reference, section 1.1).
    public static let blockByteCount = 136
    public static let byteCount = 32

    /// The 5 x 5 lanes of the state, lane (x, y) at index x + 5 y.
    private var lanes = [UInt64](repeating: 0, count: 25)
    /// A partial block waiting for more input (always fewer than `blockByteCount` bytes).
    private var pending: [UInt8] = []
    /// The first padding byte: 0x01 for Keccak, 0x06 for FIPS 202 SHA3-256 (section B.2), whose
    /// published vectors then check the shared sponge and permutation.
    private let padding: UInt8

    public init() { padding = 0x01 }

    /// SHA3-256 (FIPS 202 section 6.1), for tests only.
    init(sha3: Void) { padding = 0x06 }

    public mutating func update(bufferPointer input: UnsafeRawBufferPointer) {
        var bytes = input[...]
        if !pending.isEmpty {
            let take = min(Self.blockByteCount - pending.count, bytes.count)
            pending.append(contentsOf: bytes.prefix(take))
            bytes = bytes.dropFirst(take)
            if pending.count < Self.blockByteCount { return }
            absorb(pending[...])
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count >= Self.blockByteCount {
            absorb(bytes.prefix(Self.blockByteCount))
            bytes = bytes.dropFirst(Self.blockByteCount)
        }
        pending.append(contentsOf: bytes)
    }

    /// Pads with `pad10*1` (0x01 ... 0x80, one byte 0x81 when a single byte is left) and
    /// squeezes the first 32 bytes of the state, lanes little-endian.
    public func finalize() -> [UInt8] {
        var copy = self
        var block = copy.pending
        block.append(padding)
        block.append(contentsOf: repeatElement(0, count: Self.blockByteCount - block.count))
        block[Self.blockByteCount - 1] |= 0x80
        copy.absorb(block[...])
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for lane in copy.lanes.prefix(4) {
            for shift in stride(from: UInt64(0), to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: lane &>> shift)) }
        }
        return out
    }

    /// XORs one rate-sized block into the state, lanes read little-endian, then permutes.
    private mutating func absorb<C: Collection<UInt8>>(_ block: C) where C.Index == Int {
        let base = block.startIndex
        for lane in 0..<(Self.blockByteCount / 8) {
            var word: UInt64 = 0
            for j in 0..<8 { word |= UInt64(block[base + 8 * lane + j]) &<< UInt64(8 * j) }
            lanes[lane] ^= word
        }
        Self.permute(&lanes)
    }

    /// Round constants of the iota step (Keccak reference, section 1.2).
    static let roundConstants: [UInt64] = [
        0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
        0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
        0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
        0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
        0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
        0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
    ]

    /// Rotation offsets of the rho step, indexed like the lanes.
    static let rotations: [UInt64] = [
        0, 1, 62, 28, 27,
        36, 44, 6, 55, 20,
        3, 10, 43, 25, 39,
        41, 45, 15, 21, 8,
        18, 2, 61, 56, 14,
    ]

    @inline(__always)
    private static func rotl(_ x: UInt64, _ n: UInt64) -> UInt64 { n == 0 ? x : (x &<< n) | (x &>> (64 &- n)) }

    /// Keccak-f[1600]: 24 rounds of theta, rho and pi, chi, iota (FIPS 202 section 3.2, which
    /// kept the permutation of the competition unchanged).
    static func permute(_ a: inout [UInt64]) {
        var b = [UInt64](repeating: 0, count: 25)
        var c = [UInt64](repeating: 0, count: 5)
        for round in 0..<24 {
            // theta: each lane takes the parities of two neighbouring columns.
            for x in 0..<5 { c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] }
            for x in 0..<5 {
                let d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1)
                for y in 0..<5 { a[x + 5 * y] ^= d }
            }
            // rho and pi: rotate each lane, then move (x, y) to (y, 2x + 3y).
            for x in 0..<5 {
                for y in 0..<5 { b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[x + 5 * y], rotations[x + 5 * y]) }
            }
            // chi: the only non-linear step, along each row.
            for y in 0..<5 {
                for x in 0..<5 { a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]) }
            }
            // iota
            a[0] ^= roundConstants[round]
        }
    }
}
