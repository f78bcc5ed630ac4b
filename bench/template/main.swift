// Times the email template engine (AuthTemplate), which Package.swift leaves unoptimized in
// release builds: it runs once per email or SMS sent, never on the requests bench/cost.sh measures.
//
//   auth-template-bench [--count N] [--repeat N]
//
// Prints three lines, `<case> <microseconds per email, best of N runs>`:
//   builtin        executing a parsed body shaped like the emulator's built-in ones (a heading,
//                  a sentence, the link and the code), as every email without a custom template;
//   custom         parsing and executing a custom template with conditionals, a range and a
//                  pipeline: the first email sent with a template's text;
//   custom-parsed  executing that template already parsed: every later email with the same text
//                  (MailTemplates keeps what it parsed).
// The optimized figures for comparison come from the same source with -O last on the command line:
//   swift build -c release --product auth-template-bench -Xswiftc -O --scratch-path .build-bench-O
import AuthJSON
import AuthTemplate
#if canImport(Glibc)
import Glibc  // exit(3) only
#elseif canImport(Darwin)
import Darwin
#endif

var count = 20_000
var repeats = 3
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    guard let value = arguments.first.flatMap({ Int($0) }), value > 0, flag == "--count" || flag == "--repeat" else {
        print("usage: auth-template-bench [--count N] [--repeat N]")
        exit(64)
    }
    arguments.removeFirst()
    if flag == "--count" { count = value } else { repeats = value }
}

let builtinBody = """
    <h2>Reset your password</h2>

    <p>Someone asked to reset the password of this account. Follow this link to choose a new one.</p>
    <p><a href="{{ .ConfirmationURL }}">Reset password</a></p>
    <p>Or enter this code: {{ .Token }}</p>
    <p>If you did not ask for this, ignore this email.</p>

    """
let customBody = """
    <html><body>
    <h2>Confirm your signup</h2>
    {{ if .Data.name }}<p>Hello {{ .Data.name }},</p>{{ else }}<p>Hello,</p>{{ end }}
    <p><a href="{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=email&next={{ .RedirectTo }}">Confirm your mail</a></p>
    {{ range $i, $v := .Data.tags }}<span>{{ $i }}: {{ $v }}</span>{{ end }}
    <p>Code: {{ .Token }} for {{ .Email | printf "%q" }}</p>
    {{ if and .Data.name (eq .Data.plan "pro") }}<p>Thank you for choosing Pro.</p>{{ end }}
    </body></html>

    """
let data: JSON = .object([
    "ConfirmationURL": .string("http://127.0.0.1:54321/auth/v1/verify?token=4f9c2a7b1e&type=recovery&redirect_to=http://localhost:3000"),
    "Token": .string("123456"),
    "TokenHash": .string("0b6c3f1d5e8a9b2c4d7e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d1e"),
    "SiteURL": .string("http://localhost:3000"),
    "RedirectTo": .string("http://localhost:3000/welcome"),
    "Email": .string("someone@example.com"),
    "Data": .object(["name": .string("Ada"), "plan": .string("pro"), "tags": .array([.string("a"), .string("b"), .string("c")])]),
])

/// Best of `repeats` runs of `count` calls, in microseconds per call; `sink` keeps the output
/// alive so the work can not be dropped.
func best(count: Int, repeats: Int, _ body: () throws -> Int) rethrows -> Double {
    var fastest = Double.infinity
    var sink = 0
    for _ in 0..<repeats {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<count { sink &+= try body() }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        fastest = min(fastest, seconds / Double(count) * 1e6)
    }
    if sink == 42 { print("") }
    return fastest
}

func show(_ name: String, _ microseconds: Double) {
    print(name, (microseconds * 10).rounded() / 10)
}

do {
    let parsed = try GoTemplate(parsing: builtinBody, name: "")
    show("builtin", try best(count: count, repeats: repeats) { try parsed.execute(data).utf8.count })
    show("custom", try best(count: count, repeats: repeats) { try GoTemplate(parsing: customBody, name: "custom").execute(data).utf8.count })
    let custom = try GoTemplate(parsing: customBody, name: "custom")
    show("custom-parsed", try best(count: count, repeats: repeats) { try custom.execute(data).utf8.count })
} catch {
    print("error: \(error)")
    exit(1)
}
