import AuthCrypto
import Foundation  // exit(3)

/// `auth-crypto-bench eddsa [--seconds S]`: Ed25519 signs and verifies of a 32-byte message on
/// one thread, each for about S seconds (default 3). Prints `eddsa-sign <ops/s>` and
/// `eddsa-verify <ops/s>`, comparable with `openssl speed -elapsed -seconds S ed25519`.
func benchEdDSA(_ arguments: [String]) -> Never {
    var seconds = 3.0
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        guard argument == "--seconds", let value = rest.popFirst().flatMap(Double.init), value > 0 else {
            fail("eddsa takes only --seconds S, with S a positive number")
        }
        seconds = value
    }

    let key = Ed25519PrivateKey.generate(random: SeededRandom(seed: 25519))
    let publicKey = key.publicKey
    var message = [UInt8](repeating: 0x5a, count: 32)
    let signature = key.signature(for: message)
    guard publicKey.isValidSignature(signature, for: message) else { fail("benchEdDSA: signature does not verify") }

    // The message changes every sign so no work can be hoisted out of the loop; the checksum
    // keeps the results alive.
    var checksum: UInt8 = 0
    let signRate = operationsPerSecond(seconds: seconds) {
        message[0] &+= 1
        checksum ^= key.signature(for: message)[63]
    }
    var failures = 0
    message = [UInt8](repeating: 0x5a, count: 32)
    let verifyRate = operationsPerSecond(seconds: seconds) {
        if !publicKey.isValidSignature(signature, for: message) { failures += 1 }
    }
    guard failures == 0 else { fail("benchEdDSA: \(failures) verifications failed (checksum \(checksum))") }
    print("eddsa-sign \(Int(signRate.rounded()))")
    print("eddsa-verify \(Int(verifyRate.rounded()))")
    exit(0)
}

/// Runs `operation` in batches until `seconds` have passed; returns operations per second.
private func operationsPerSecond(seconds: Double, _ operation: () -> Void) -> Double {
    let clock = ContinuousClock()
    for _ in 0..<16 { operation() }  // warm-up: tables, caches
    let start = clock.now
    var count = 0
    var elapsed = 0.0
    repeat {
        for _ in 0..<64 { operation() }
        count += 64
        let duration = clock.now - start
        elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    } while elapsed < seconds
    return Double(count) / elapsed
}
