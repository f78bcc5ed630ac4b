import CAuthCrypto

/// Argon2 version 0x13 (RFC 9106), the memory-hard password hash users imported from other
/// systems may carry (`$argon2id$v=19$...`). Verification only runs it, so it is written for
/// clarity over speed: the lanes are filled one after another (a lane only ever reads other
/// lanes' finished segments, so the result is the parallel one), in one allocation of `m` KiB.
public enum Argon2 {
    /// RFC 9106 section 3.1, the type `y`.
    public enum Variant: UInt32, Sendable {
        case d = 0
        case i = 1
        case id = 2
    }

    static let version: UInt32 = 0x13
    static let blockWords = 128
    /// Slices per pass (RFC 9106 section 3.4: "SL = 4").
    static let syncPoints = 4

    public enum Failure: Error, Equatable, Sendable {
        /// t or p below 1, which the reference and golang.org/x/crypto/argon2 refuse.
        case invalidParameters(String)
        /// The working memory could not be allocated.
        case outOfMemory
    }

    /// The `tagLength`-byte tag of `password` (RFC 9106 section 3.2). `memoryKiB` below 8p is
    /// raised to 8p and rounded down to a multiple of 4p, as the reference does.
    public static func hash(
        _ variant: Variant, password: [UInt8], salt: [UInt8], secret: [UInt8] = [], associatedData: [UInt8] = [],
        iterations: UInt32, memoryKiB: UInt32, parallelism: UInt32, tagLength: Int
    ) throws(Failure) -> [UInt8] {
        guard iterations >= 1 else { throw .invalidParameters("argon2: number of rounds too small") }
        guard parallelism >= 1 else { throw .invalidParameters("argon2: parallelism degree too low") }
        precondition(tagLength >= 1, "Argon2 tag length out of range")
        let lanes = Int(parallelism)
        var blockCount = Int(memoryKiB) / (syncPoints * lanes) * (syncPoints * lanes)
        if blockCount < 2 * syncPoints * lanes { blockCount = 2 * syncPoints * lanes }
        let laneLength = blockCount / lanes
        let segmentLength = laneLength / syncPoints

        // H0 (section 3.2 step 1): the parameters and inputs, each input length-prefixed; the
        // memory is the requested m, not the rounded one.
        let h0 = BLAKE2b.hash([
            le32(parallelism), le32(UInt32(tagLength)), le32(memoryKiB), le32(iterations), le32(version), le32(variant.rawValue),
            le32(UInt32(password.count)), password, le32(UInt32(salt.count)), salt,
            le32(UInt32(secret.count)), secret, le32(UInt32(associatedData.count)), associatedData,
        ])

        guard let raw = cauth_calloc(blockCount, blockWords * 8) else { throw .outOfMemory }
        defer { cauth_free(raw) }
        let memory = raw.bindMemory(to: UInt64.self, capacity: blockCount * blockWords)

        // Step 3: the first two blocks of each lane from H0, the block index and the lane.
        for lane in 0..<lanes {
            for index in 0..<2 {
                let bytes = longHash([h0, le32(UInt32(index)), le32(UInt32(lane))], byteCount: blockWords * 8)
                load(bytes, into: memory + (lane * laneLength + index) * blockWords)
            }
        }

        // The address block, its input, a zero block, and G's two working blocks.
        let scratch = UnsafeMutablePointer<UInt64>.allocate(capacity: 5 * blockWords)
        defer { scratch.deallocate() }
        scratch.initialize(repeating: 0, count: 5 * blockWords)
        let address = scratch, input = scratch + blockWords, zero = scratch + 2 * blockWords, temp = scratch + 3 * blockWords

        for pass in 0..<Int(iterations) {
            for slice in 0..<syncPoints {
                for lane in 0..<lanes {
                    // Data-independent addressing (section 3.4.1.2): Argon2i always, Argon2id
                    // in the first half of the first pass.
                    let independent = variant == .i || (variant == .id && pass == 0 && slice < syncPoints / 2)
                    if independent {
                        input.initialize(repeating: 0, count: blockWords)
                        input[0] = UInt64(pass)
                        input[1] = UInt64(lane)
                        input[2] = UInt64(slice)
                        input[3] = UInt64(blockCount)
                        input[4] = UInt64(iterations)
                        input[5] = UInt64(variant.rawValue)
                    }
                    var index = 0
                    if pass == 0 && slice == 0 {
                        index = 2  // the first two blocks are already there
                        if independent { nextAddresses(address, input, zero, temp) }
                    }
                    var offset = lane * laneLength + slice * segmentLength + index
                    while index < segmentLength {
                        let previous = offset % laneLength == 0 ? offset + laneLength - 1 : offset - 1
                        let pseudoRandom: UInt64
                        if independent {
                            if index % blockWords == 0 { nextAddresses(address, input, zero, temp) }
                            pseudoRandom = address[index % blockWords]
                        } else {
                            pseudoRandom = memory[previous * blockWords]
                        }
                        let reference = referenceBlock(
                            pseudoRandom, lanes: lanes, laneLength: laneLength, segmentLength: segmentLength,
                            pass: pass, slice: slice, lane: lane, index: index)
                        // Version 0x13: every pass after the first XORs into the block it replaces
                        // (section 3.2 step 6); in the first pass that block is still zero.
                        compress(into: memory + offset * blockWords, memory + previous * blockWords,
                                 memory + reference * blockWords, xor: true, temp: temp)
                        index += 1
                        offset += 1
                    }
                }
            }
        }

        // Step 7: the XOR of each lane's last block, then H' of it.
        let final = memory + (blockCount - 1) * blockWords
        for lane in 0..<(lanes - 1) {
            let last = memory + (lane * laneLength + laneLength - 1) * blockWords
            for i in 0..<blockWords { final[i] ^= last[i] }
        }
        var bytes = [UInt8](repeating: 0, count: blockWords * 8)
        for i in 0..<blockWords {
            for j in 0..<8 { bytes[i * 8 + j] = UInt8(truncatingIfNeeded: final[i] >> (8 * UInt64(j))) }
        }
        return longHash([bytes], byteCount: tagLength)
    }

    /// The next block of pseudo-random addresses: the counter in word 6 moves on, then
    /// G(0, G(0, input)) (section 3.4.1.2).
    static func nextAddresses(_ address: UnsafeMutablePointer<UInt64>, _ input: UnsafeMutablePointer<UInt64>,
                              _ zero: UnsafeMutablePointer<UInt64>, _ temp: UnsafeMutablePointer<UInt64>) {
        input[6] &+= 1
        compress(into: address, zero, input, xor: false, temp: temp)
        compress(into: address, zero, address, xor: false, temp: temp)
    }

    /// The index of the block referenced from lane `lane`, position `index` of segment `slice` in
    /// pass `pass` (section 3.4.2): the lane from J2, then the position in the reference set
    /// mapped from J1 (section 3.4.2's x, y, zz).
    static func referenceBlock(_ pseudoRandom: UInt64, lanes: Int, laneLength: Int, segmentLength: Int,
                               pass: Int, slice: Int, lane: Int, index: Int) -> Int {
        var referenceLane = Int((pseudoRandom >> 32) % UInt64(lanes))
        if pass == 0 && slice == 0 { referenceLane = lane }
        let sameLane = referenceLane == lane
        var areaSize: Int
        var start: Int
        if pass == 0 {
            // First pass: every finished segment of this slice's past, in this lane the
            // blocks made so far in this segment too.
            start = 0
            areaSize = slice * segmentLength + (sameLane ? index : 0)
            if slice == 0 { areaSize = index }
        } else {
            // Later passes: the last three segments, from the start of the next slice.
            start = ((slice + 1) % syncPoints) * segmentLength
            areaSize = 3 * segmentLength + (sameLane ? index : 0)
        }
        // The block just before this one (the previous block, already an input) is left out,
        // as is, in another lane, the last block of the segment being written there.
        if index == 0 || sameLane { areaSize -= 1 }
        let j1 = pseudoRandom & 0xffff_ffff
        let x = (j1 * j1) >> 32
        let y = (UInt64(areaSize) * x) >> 32
        let position = (UInt64(start) + UInt64(areaSize) - 1 - y) % UInt64(laneLength)
        return referenceLane * laneLength + Int(position)
    }

    /// The compression function G (section 3.5): R = X xor Y, the permutation P on its rows
    /// then its columns, and R xor that, written to `out` (XORed into it when `xor`). `temp`
    /// holds two blocks; `out` may be `x` or `y`.
    static func compress(into out: UnsafeMutablePointer<UInt64>, _ x: UnsafeMutablePointer<UInt64>,
                         _ y: UnsafeMutablePointer<UInt64>, xor: Bool, temp: UnsafeMutablePointer<UInt64>) {
        let r = temp, t = temp + blockWords
        for i in 0..<blockWords {
            r[i] = x[i] ^ y[i]
            t[i] = r[i]
        }
        // Rows: eight runs of 16 consecutive words; then columns: word pairs 2i, 2i+1 of
        // each row.
        for row in stride(from: 0, to: blockWords, by: 16) { permute(t + row, rowOffsets) }
        for column in stride(from: 0, to: 16, by: 2) { permute(t + column, columnOffsets) }
        for i in 0..<blockWords {
            if xor { out[i] ^= r[i] ^ t[i] } else { out[i] = r[i] ^ t[i] }
        }
    }

    /// P (section 3.6) on the 16 words at `offsets` from `v`: BLAKE2b's round, with GB.
    @inline(__always)
    static func permute(_ v: UnsafeMutablePointer<UInt64>, _ offsets: [Int]) {
        for (a, b, c, d) in BLAKE2b.quarterRounds { mix(v, offsets[a], offsets[b], offsets[c], offsets[d]) }
    }

    static let rowOffsets = Array(0..<16)
    static let columnOffsets = [0, 1, 16, 17, 32, 33, 48, 49, 64, 65, 80, 81, 96, 97, 112, 113]

    /// GB (section 3.6): BLAKE2b's G with a + b + 2 * lo(a) * lo(b) for each addition.
    @inline(__always)
    static func mix(_ v: UnsafeMutablePointer<UInt64>, _ a: Int, _ b: Int, _ c: Int, _ d: Int) {
        v[a] = v[a] &+ v[b] &+ 2 &* (v[a] & 0xffff_ffff) &* (v[b] & 0xffff_ffff)
        v[d] = BLAKE2b.rotateRight(v[d] ^ v[a], 32)
        v[c] = v[c] &+ v[d] &+ 2 &* (v[c] & 0xffff_ffff) &* (v[d] & 0xffff_ffff)
        v[b] = BLAKE2b.rotateRight(v[b] ^ v[c], 24)
        v[a] = v[a] &+ v[b] &+ 2 &* (v[a] & 0xffff_ffff) &* (v[b] & 0xffff_ffff)
        v[d] = BLAKE2b.rotateRight(v[d] ^ v[a], 16)
        v[c] = v[c] &+ v[d] &+ 2 &* (v[c] & 0xffff_ffff) &* (v[d] & 0xffff_ffff)
        v[b] = BLAKE2b.rotateRight(v[b] ^ v[c], 63)
    }

    /// H' (section 3.3): BLAKE2b of the length and the input, extended past 64 bytes by
    /// chaining 64-byte hashes and keeping the first 32 bytes of each but the last.
    static func longHash(_ parts: [[UInt8]], byteCount: Int) -> [UInt8] {
        let input = [le32(UInt32(byteCount))] + parts
        if byteCount <= BLAKE2b.maximumByteCount { return BLAKE2b.hash(input, byteCount: byteCount) }
        var out: [UInt8] = []
        out.reserveCapacity(byteCount)
        var v = BLAKE2b.hash(input)
        out += v[0..<32]
        // r = ceil(byteCount / 32) - 2 full hashes contribute their first half, then the last
        // takes what is left.
        let r = (byteCount + 31) / 32 - 2
        for _ in 1..<r {
            v = BLAKE2b.hash([v])
            out += v[0..<32]
        }
        out += BLAKE2b.hash([v], byteCount: byteCount - 32 * r)
        return out
    }

    static func le32(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
         UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]
    }

    static func load(_ bytes: [UInt8], into block: UnsafeMutablePointer<UInt64>) {
        for i in 0..<blockWords {
            var word: UInt64 = 0
            for j in 0..<8 { word |= UInt64(bytes[i * 8 + j]) << (8 * UInt64(j)) }
            block[i] = word
        }
    }
}
