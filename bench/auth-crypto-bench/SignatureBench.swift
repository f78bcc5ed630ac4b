import AuthCrypto
import Foundation  // exit(3) only

// What the signature benchmarks (es256, eddsa, rs256) share: the `--seconds S` option and the
// timing loop. Each prints `<alg>-sign <ops/s>` and `<alg>-verify <ops/s>`, one thread, to
// compare with `openssl speed -elapsed -seconds S <ecdsap256|ed25519|rsa2048>` (bench/signatures).

/// `[--seconds S]` (default 3).
func benchSeconds(_ arguments: [String], command: String) -> Double {
    var seconds = 3.0
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        guard argument == "--seconds", let value = rest.popFirst().flatMap(Double.init), value > 0, value <= 60 else {
            fail("usage: \(command) [--seconds S], S from 0 to 60")
        }
        seconds = value
    }
    return seconds
}

/// Runs `operation` in batches until `seconds` have passed, after a short warm-up (tables,
/// caches); returns operations per second. `operation` returns false on a wrong result, which
/// aborts the run, and its use of the result keeps the work from being optimised away.
func operationsPerSecond(seconds: Double, _ operation: (Int) -> Bool) -> Double {
    for index in 0..<8 where !operation(index) { fail("wrong result in warm-up") }
    let clock = ContinuousClock()
    let start = clock.now
    var count = 0
    var elapsed = 0.0
    repeat {
        for _ in 0..<16 {
            if !operation(count) { fail("wrong result at operation \(count)") }
            count += 1
        }
        let duration = clock.now - start
        elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    } while elapsed < seconds
    return Double(count) / elapsed
}

/// Measures `sign` and `verify` over 64 fixed 32-byte messages, checking every result against
/// signatures made up front (all three algorithms are deterministic), then reports.
func benchSignatures(_ name: String, _ arguments: [String], random: SeededRandom,
                     sign: ([UInt8]) -> [UInt8], verify: ([UInt8], [UInt8]) -> Bool) -> Never {
    let seconds = benchSeconds(arguments, command: name)
    let messages = (0..<64).map { _ in random.bytes(count: 32) }
    let signatures = messages.map(sign)
    let signRate = operationsPerSecond(seconds: seconds) { index in sign(messages[index % 64]) == signatures[index % 64] }
    let verifyRate = operationsPerSecond(seconds: seconds) { index in verify(signatures[index % 64], messages[index % 64]) }
    report(name, sign: signRate, verify: verifyRate)
}

/// Prints the two result lines and ends the process.
func report(_ name: String, sign: Double, verify: Double) -> Never {
    print("\(name)-sign \(Int(sign.rounded()))")
    print("\(name)-verify \(Int(verify.rounded()))")
    exit(0)
}
