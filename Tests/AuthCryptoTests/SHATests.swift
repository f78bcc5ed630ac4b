import Testing
@testable import AuthCrypto

/// Example vectors from NIST's "Cryptographic Standards and Guidelines: Examples with
/// Intermediate Values" for FIPS 180-4 (SHA1.pdf, SHA224.pdf, SHA256.pdf): the one-block
/// message "abc", the two-block 448-bit message, the empty message, and one million 'a'.
struct Vector: Sendable, CustomTestStringConvertible {
    let name: String
    let message: [UInt8]
    let sha1: String
    let sha224: String
    let sha256: String
    var testDescription: String { name }
}

let twoBlockMessage = utf8("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")

let fipsVectors: [Vector] = [
    Vector(name: "abc", message: utf8("abc"),
           sha1: "a9993e364706816aba3e25717850c26c9cd0d89d",
           sha224: "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7",
           sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    Vector(name: "448-bit", message: twoBlockMessage,
           sha1: "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
           sha224: "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525",
           sha256: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    Vector(name: "empty", message: [],
           sha1: "da39a3ee5e6b4b0d3255bfef95601890afd80709",
           sha224: "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f",
           sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    Vector(name: "million-a", message: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000),
           sha1: "34aa973cd4c4daa4f61eeb2bdbad27316534016f",
           sha224: "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67",
           sha256: "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
]

/// Chunkings that straddle the 64-byte block boundary in different ways.
let chunkings: [[Int]] = [[1], [3, 61], [55], [63, 2], [64], [65], [7, 127, 1], [1000]]

/// The million-byte message skips the tiniest chunkings, which only slow debug builds down.
func chunkings(for message: [UInt8]) -> [[Int]] {
    message.count > 100_000 ? chunkings.filter { $0.reduce(0, +) >= 55 } : chunkings
}

@Suite struct SHATests {
    @Test(arguments: fipsVectors)
    func sha1OneShotAndIncremental(_ v: Vector) {
        #expect(SHA1.hash(data: v.message).hexString == v.sha1)
        for chunks in chunkings(for: v.message) {
            var h = SHA1()
            feed(&h, v.message, chunks: chunks)
            #expect(h.finalize().hexString == v.sha1, "chunks \(chunks)")
        }
    }

    @Test(arguments: fipsVectors, implementations)
    func sha224OneShotAndIncremental(_ v: Vector, _ implementation: SHA256Implementation) {
        #expect(SHA224.hash(data: v.message, implementation: implementation).hexString == v.sha224)
        for chunks in chunkings(for: v.message) {
            var h = SHA224(implementation: implementation)
            feed(&h, v.message, chunks: chunks)
            #expect(h.finalize().hexString == v.sha224, "chunks \(chunks)")
        }
    }

    @Test(arguments: fipsVectors, implementations)
    func sha256OneShotAndIncremental(_ v: Vector, _ implementation: SHA256Implementation) {
        #expect(SHA256.hash(data: v.message, implementation: implementation).hexString == v.sha256)
        for chunks in chunkings(for: v.message) {
            var h = SHA256(implementation: implementation)
            feed(&h, v.message, chunks: chunks)
            #expect(h.finalize().hexString == v.sha256, "chunks \(chunks)")
        }
    }

    @Test func publicAPIUsesDefaultImplementation() {
        #expect(SHA256.hash(data: utf8("abc")).hexString == fipsVectors[0].sha256)
        #expect(SHA224.hash(data: "abc".utf8).hexString == fipsVectors[0].sha224)
        #expect(SHA256.byteCount == 32 && SHA224.byteCount == 28 && SHA1.byteCount == 20)
        #expect(SHA256.blockByteCount == 64)
    }

    @Test func finalizeDoesNotConsumeState() {
        var h = SHA256()
        h.update(data: utf8("ab"))
        let partial = h.finalize()
        h.update(data: utf8("c"))
        #expect(partial == SHA256.hash(data: utf8("ab")))
        #expect(h.finalize().hexString == fipsVectors[0].sha256)
    }

    @Test func nonContiguousSequencesAreHashed() {
        // A lazy map has no contiguous storage, taking the copying path.
        let lazy = utf8("abc").lazy.map { $0 }
        #expect(SHA256.hash(data: lazy).hexString == fipsVectors[0].sha256)
    }

    @Test func hardwareAndPortableAgreeOnEveryLengthUpTo300() {
        let data = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for length in 0...300 {
            let slice = Array(data[0..<length])
            #expect(SHA256.hash(data: slice, implementation: .automatic)
                == SHA256.hash(data: slice, implementation: .portable), "length \(length)")
        }
    }

    @Test func hardwareDetectionIsReported() {
        // Documents which path ran; on x86-64 with SHA extensions (or Apple silicon) it is hardware.
        if SHA256Implementation.hardwareAvailable {
            #expect(SHA256Implementation.automatic.usesHardware)
        }
        #expect(!SHA256Implementation.portable.usesHardware)
    }
}
