import AuthCrypto
import Foundation  // exit(3) only

/// Times ES256 (ECDSA P-256 with SHA-256) on one thread: RFC 6979 signing, then verification,
/// of 32-byte messages, each for about S seconds (default 3).
///
///   auth-crypto-bench es256 [--seconds S]
///
/// Prints exactly two lines, `es256-sign <ops/s>` and `es256-verify <ops/s>`, to compare with
/// `openssl speed -elapsed -seconds S ecdsap256` (whose signing draws random nonces instead).
func benchES256(_ arguments: [String]) -> Never {
    var seconds = 3.0
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        guard argument == "--seconds", let value = rest.popFirst().flatMap(Double.init), value > 0 else {
            fail("usage: es256 [--seconds S]")
        }
        seconds = value
    }

    let random = SeededRandom(seed: 0xec_256)
    let key = P256PrivateKey.generate(random: random)
    let messages = (0..<64).map { _ in random.bytes(count: 32) }
    // Also builds the base-point table, so its one-off cost stays out of the timing.
    let signatures = messages.map { key.signature(for: $0) }
    for (message, signature) in zip(messages, signatures) where !key.publicKey.isValidSignature(signature, for: message) {
        fail("a fresh signature does not verify")
    }

    let signRate = rate(seconds: seconds) { index in
        // Use the output so the work cannot be dropped.
        key.signature(for: messages[index % messages.count])[0] != signatures[index % messages.count][0]
    }
    let verifyRate = rate(seconds: seconds) { index in
        !key.publicKey.isValidSignature(signatures[index % messages.count], for: messages[index % messages.count])
    }
    print("es256-sign \(Int(signRate.rounded()))")
    print("es256-verify \(Int(verifyRate.rounded()))")
    exit(0)
}

/// Runs `operation` in batches until `seconds` have passed; returns operations per second.
/// `operation` returns true on a wrong result, which aborts the run.
private func rate(seconds: Double, _ operation: (Int) -> Bool) -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    var count = 0
    var elapsed = 0.0
    repeat {
        for _ in 0..<32 {
            if operation(count) { fail("wrong result at operation \(count)") }
            count += 1
        }
        let duration = clock.now - start
        elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    } while elapsed < seconds
    return Double(count) / elapsed
}
