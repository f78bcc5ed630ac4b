// Parses typical request bodies in a loop and prints nanoseconds per parse. Built by run.sh
// straight from Sources/AuthJSON with `swiftc -O` (AuthJSON has no dependencies).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

let bodies: [(String, String)] = [
    ("signup", #"{"email":"someone@example.com","password":"password1","data":{"full_name":"Some One","age":42},"gotrue_meta_security":{"captcha_token":""},"code_challenge":"","code_challenge_method":""}"#),
    ("refresh", #"{"refresh_token":"abcdefghijkl"}"#),
    ("admin", #"{"email":"a@b.co","password":"secret12","email_confirm":true,"user_metadata":{"name":"A","tags":["x","y","z"],"n":1.5e3,"nested":{"k":[1,2,3,{"deep":"v\u00e9\n"}]}},"app_metadata":{"plan":"pro"}}"#),
]

/// Request bodies go through `JSON.goDecode`; build with `-D STRICT` to time `JSON(parsing:)`.
@inline(never)
func parse(_ bytes: [UInt8]) -> JSON {
    #if STRICT
    return try! JSON(parsing: bytes)
    #else
    return try! JSON.goDecode(bytes).value
    #endif
}

let iterations = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200_000 : 200_000
var sink = 0
for (name, text) in bodies {
    let bytes = Array(text.utf8)
    for _ in 0..<(iterations / 10) { if case .object(let o) = parse(bytes) { sink &+= o.count } }
    var best = UInt64.max
    for _ in 0..<5 {
        let start = nowNanoseconds()
        for _ in 0..<iterations {
            if case .object(let o) = parse(bytes) { sink &+= o.count }
        }
        best = min(best, (nowNanoseconds() - start) / UInt64(iterations))
    }
    print("\(name) (\(bytes.count) bytes): \(best) ns/parse")
}
if sink == 42 { print("") }
