// Times PBKDF2-HMAC-SHA256 for bench/pbkdf2.
//
//   auth-crypto-bench pbkdf2 <iterations> [--repeat N] [--portable]
//   auth-crypto-bench pbkdf2-pair <iterations> [--repeat N] [--portable]   (two keys at once,
//                     PBKDF2.deriveKeys: the fixture path; the rate counts both keys)
//   auth-crypto-bench sha256 <megabytes> [--repeat N] [--portable]
//   auth-crypto-bench sha512 <megabytes> [--repeat N]              (pure Swift only)
//   auth-crypto-bench es256 | eddsa | rs256 ...   (signature benchmarks, see their files)
//
// Prints one line: `<implementation> <work> <best seconds> <rate per second> <hex output>`;
// the rate is iterations/s (pbkdf2) or MB/s (sha256, sha512), best of N runs.
import AuthCrypto
import Foundation  // exit(3) only; this driver is not part of the server

func fail(_ message: String) -> Never {
    print("usage: auth-crypto-bench (pbkdf2 <iterations> | sha256 <megabytes> | sha512 <megabytes>) [--repeat N] [--portable]")
    print("error: \(message)")
    exit(64)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var repeats = 3
var implementation = SHA256Implementation.automatic
if let i = arguments.firstIndex(of: "--portable") {
    implementation = .portable
    arguments.remove(at: i)
}
if let i = arguments.firstIndex(of: "--repeat") {
    guard i + 1 < arguments.count, let n = Int(arguments[i + 1]), n > 0 else { fail("bad --repeat") }
    repeats = n
    arguments.removeSubrange(i...(i + 1))
}
// Signature benchmarks live in their own files and take over the process.
let signatureCommands: [String: ([String]) -> Never] = ["es256": benchES256, "eddsa": benchEdDSA, "rs256": benchRS256]
if let first = arguments.first, let run = signatureCommands[first] { run(Array(arguments.dropFirst())) }
guard arguments.count == 2, let amount = Int(arguments[1]), amount > 0 else { fail("bad arguments") }

let name = implementation.usesHardware && arguments[0] != "sha512" ? "hardware" : "portable"
let clock = ContinuousClock()
var best = Double.infinity
var output: [UInt8] = []
for _ in 0..<repeats {
    let start = clock.now
    switch arguments[0] {
    case "pbkdf2":
        output = PBKDF2.deriveKey(password: Array("password".utf8), salt: Array("saltsaltsaltsalt".utf8),
                                  iterations: amount, keyLength: 32, implementation: implementation)
    case "pbkdf2-pair":
        output = PBKDF2.deriveKeys(passwords: [Array("password".utf8), Array("another password".utf8)],
                                   salts: [Array("saltsaltsaltsalt".utf8), Array("saltsaltsaltsalt".utf8)],
                                   iterations: amount, keyLength: 32, implementation: implementation)[0]
    case "sha256":
        let data = [UInt8](repeating: 0x61, count: amount << 20)
        output = SHA256.hash(data: data, implementation: implementation)
    case "sha512":
        let data = [UInt8](repeating: 0x61, count: amount << 20)
        output = SHA512.hash(data: data)
    default:
        fail("unknown benchmark \(arguments[0])")
    }
    let elapsed = clock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    best = min(best, seconds)
}
let work = arguments[0] == "pbkdf2-pair" ? 2 * amount : amount
print("\(name) \(amount) \(best) \(Double(work) / best) \(output.hexString)")
