@testable import AuthTOML
import Foundation
import Testing

/// The TOML reader against examples from the TOML v1.0.0 specification (https://toml.io/en/v1.0.0)
/// and against the malformed input a hand-edited config file typically has.
@Suite struct TOMLTests {
    func table(_ value: TOMLValue?) -> TOMLTable? {
        if case .table(let table) = value { return table }
        return nil
    }

    @Test func scalarTypes() throws {
        let doc = try TOML.parse("""
            str = "I'm a string"
            int1 = +99
            int2 = -17
            int3 = 1_000_000
            hex = 0xDEAD_beef
            oct = 0o755
            bin = 0b1101_0110
            zero = 0
            flt1 = +1.0
            flt2 = -0.01
            flt3 = 5e+22
            flt4 = 6.626e-34
            flt5 = 224_617.445_991
            infinite = -inf
            yes = true
            no = false
            odt = 1979-05-27T07:32:00Z
            ldt = 1979-05-27 07:32:00
            lt = 07:32:00
            min = -9223372036854775808
            """)
        #expect(doc["str"] == .string("I'm a string"))
        #expect(doc["int1"] == .integer(99))
        #expect(doc["int2"] == .integer(-17))
        #expect(doc["int3"] == .integer(1_000_000))
        #expect(doc["hex"] == .integer(0xDEAD_BEEF))
        #expect(doc["oct"] == .integer(0o755))
        #expect(doc["bin"] == .integer(0b1101_0110))
        #expect(doc["zero"] == .integer(0))
        #expect(doc["flt1"] == .float(1.0))
        #expect(doc["flt2"] == .float(-0.01))
        #expect(doc["flt3"] == .float(5e22))
        #expect(doc["flt4"] == .float(6.626e-34))
        #expect(doc["flt5"] == .float(224_617.445_991))
        #expect(doc["infinite"] == .float(-.infinity))
        #expect(doc["yes"] == .boolean(true))
        #expect(doc["no"] == .boolean(false))
        #expect(doc["odt"] == .datetime("1979-05-27T07:32:00Z"))
        #expect(doc["ldt"] == .datetime("1979-05-27 07:32:00"))
        #expect(doc["lt"] == .datetime("07:32:00"))
        #expect(doc["min"] == .integer(Int64.min))
        #expect(doc.keys.first == "str")  // insertion order kept
    }

    @Test func strings() throws {
        let doc = try TOML.parse(#"""
            basic = "tab\there \"quoted\" back\\slash \u00E9 \U0001F600 nl\n"
            literal = 'C:\Users\nodejs\templates'
            multi = """
            Roses are red
            Violets are blue"""
            folded = """\
                   The quick brown \
                   fox."""
            quotes = """Here are two quotation marks: "". Simple enough."""
            trailing = """ends with a quote""""
            lines = '''
            The first newline is
            trimmed in raw strings.
               All other whitespace
               is preserved.
            '''
            template = "Your code is {{ .Code }}"
            """#)
        #expect(doc["basic"] == .string("tab\there \"quoted\" back\\slash \u{E9} \u{1F600} nl\n"))
        #expect(doc["literal"] == .string(#"C:\Users\nodejs\templates"#))
        #expect(doc["multi"] == .string("Roses are red\nViolets are blue"))
        #expect(doc["folded"] == .string("The quick brown fox."))
        #expect(doc["quotes"] == .string(#"Here are two quotation marks: "". Simple enough."#))
        #expect(doc["trailing"] == .string(#"ends with a quote""#))
        #expect(doc["lines"] == .string("The first newline is\ntrimmed in raw strings.\n   All other whitespace\n   is preserved.\n"))
        #expect(doc["template"] == .string("Your code is {{ .Code }}"))
    }

    @Test func tablesKeysAndLines() throws {
        let doc = try TOML.parse("""
            # comment at the top
            title = "x"   # trailing comment

            [auth]
            site_url = "http://localhost:3000"

            [auth.external."my provider"]
            enabled = true

            [ auth . sms . test_otp ]
            4152127777 = "123456"
            "+1 555" = '000000'

            [server]
            physical.color = "orange"
            physical.shape = "round"
            site."google.com" = true
            """)
        #expect(doc["title"] == .string("x"))
        let auth = try #require(table(doc["auth"]))
        #expect(auth["site_url"] == .string("http://localhost:3000"))
        #expect(auth.line(of: "site_url") == 5)
        let provider = try #require(table(table(auth["external"])?["my provider"]))
        #expect(provider["enabled"] == .boolean(true))
        let otp = try #require(table(table(auth["sms"])?["test_otp"]))
        #expect(otp.keys == ["4152127777", "+1 555"])
        #expect(otp.line(of: "4152127777") == 11)
        let server = try #require(table(doc["server"]))
        #expect(table(server["physical"])?["shape"] == .string("round"))
        #expect(table(server["site"])?["google.com"] == .boolean(true))
    }

    @Test func arraysAndInlineTables() throws {
        let doc = try TOML.parse("""
            integers = [ 1, 2, 3 ]
            nested = [ [ 1, 2 ], ["a", 'b'] ]
            multi = [
              "https://127.0.0.1:3000",  # the app
              # a comment on its own line
              "http://localhost:3000",
            ]
            empty = []
            point = { x = 1, y = 2, label.text = "p" }
            empty_table = {}

            [[products]]
            name = "Hammer"

            [[products]]

            [[products]]
            name = "Nail"
            [products.size]
            mm = 3
            """)
        #expect(doc["integers"] == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(doc["nested"] == .array([.array([.integer(1), .integer(2)]), .array([.string("a"), .string("b")])]))
        #expect(doc["multi"] == .array([.string("https://127.0.0.1:3000"), .string("http://localhost:3000")]))
        #expect(doc["empty"] == .array([]))
        let point = try #require(table(doc["point"]))
        #expect(point["x"] == .integer(1))
        #expect(table(point["label"])?["text"] == .string("p"))
        #expect(table(doc["empty_table"])?.isEmpty == true)
        guard case .array(let products) = doc["products"] else {
            Issue.record("products is not an array")
            return
        }
        #expect(products.count == 3)
        #expect(table(products[0])?["name"] == .string("Hammer"))
        #expect(table(products[1])?.isEmpty == true)
        #expect(table(table(products[2])?["size"])?["mm"] == .integer(3))
    }

    @Test func windowsLineEndingsAndImplicitTables() throws {
        let doc = try TOML.parse("a = 1\r\n[x.y.z]\r\nb = 2\r\n[x]\r\nc = 3\r\n")
        #expect(doc["a"] == .integer(1))
        let x = try #require(table(doc["x"]))
        #expect(x["c"] == .integer(3))
        #expect(table(table(x["y"])?["z"])?["b"] == .integer(2))
    }

    /// Malformed documents: each must fail with the line of the mistake and a message saying what
    /// is wrong.
    @Test(arguments: [
        ("a = 1\nb 2\n", 2, "expected '=' after the key 'b'"),
        ("a = \"open\n", 1, "unterminated string"),
        ("a = 1\na = 2\n", 2, "duplicate key 'a' (first defined on line 1)"),
        ("[t]\nx = 1\n[t]\n", 3, "table [t] is defined twice"),
        ("[t]\nx = 1\n[t.x]\n", 3, "conflicts with the key 't.x'"),
        ("[a.b]\nc = 1\n[a]\nb.d = 2\n", 4, "the dotted key cannot add to the table 'b'"),
        ("p = { x = 1 }\n[p.y]\n", 2, "inline table"),
        ("s = \"bad \\q escape\"\n", 1, "invalid escape sequence '\\q'"),
        ("n = 012\n", 1, "leading zero"),
        ("n = 9223372036854775808\n", 1, "out of range"),
        ("n = 1__000\n", 1, "not a valid value"),
        ("s = hello\n", 1, "strings need quotes"),
        ("[auth\nx = 1\n", 1, "expected ']'"),
        ("a = 1 2\n", 1, "expected a new line after the value of 'a'"),
        ("a = [1, 2\nb = 3\n", 2, "expected ',' or ']' in the array"),
        ("a = [1, 2,\n", 1, "unterminated array"),
        ("a =\n", 1, "expected a value"),
        ("= 1\n", 1, "expected a key"),
        ("[[t]]\n[t]\n", 2, "conflicts with the key 't'"),
        ("t = 1\n[[t]]\n", 2, "conflicts with 't'"),
        ("a = 1\rb = 2\n", 1, "carriage return"),
        ("a = '''open\n\n", 1, "unterminated multi-line literal string"),
        ("a = \"\\u12\"\n", 1, "needs 4 hexadecimal digits"),
        ("a = 1.\n", 1, "not a valid value"),
    ])
    func malformedInputNamesTheLine(text: String, line: Int, message: String) {
        do {
            let doc = try TOML.parse(text, file: "config.toml")
            Issue.record("accepted \(text.debugDescription): \(doc)")
        } catch {
            #expect(error.line == line, "\(text.debugDescription): \(error)")
            #expect(error.message.contains(message), "\(text.debugDescription): \(error)")
            #expect(error.description.hasPrefix("config.toml:\(line): "))
        }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: TOMLError.self) { try TOML.parse([0x61, 0x20, 0x3D, 0x20, 0x22, 0xFF, 0x22]) }
    }
}

/// The nesting limit (TOMLParser.maxDepth, 64): the deepest document of each shape allowed
/// reads on a thread with an HTTP worker's 512 KiB stack, where a `config_toml` sent to the
/// control API is read; one level more is an error naming the line. Without the limit 200
/// nested arrays or a 1,000-part dotted key overflowed that stack.
@Suite struct TOMLNestingTests {
    static func onWorkerStack(_ text: String) -> Result<TOMLTable, TOMLError> {
        final class Box: @unchecked Sendable { var result: Result<TOMLTable, TOMLError>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.result = Result { () throws(TOMLError) in try TOML.parse(text) }
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
        return box.result!
    }

    static func keys(_ n: Int) -> String { (0..<n).map { "k\($0)" }.joined(separator: ".") }

    /// `x = VALUE` with the value `d - 1` deep: `unit` (opening `open`, closing `close`) as
    /// often as it fits, arrays for the rest.
    static func value(_ d: Int, _ open: String, _ close: String, unit: Int) -> String {
        let n = (d - 1) / unit, pad = (d - 1) % unit
        return "x = " + String(repeating: "[", count: pad) + String(repeating: open, count: n) + "1"
            + String(repeating: close, count: n) + String(repeating: "]", count: pad)
    }

    /// Documents whose deepest value sits exactly `d` deep.
    static func shapes(_ d: Int) -> [String] {
        [
            value(d, "[", "]", unit: 1),
            value(d, "{ y = ", " }", unit: 2),
            value(d, "[{ y = ", " }]", unit: 3),
            keys(d) + " = 1",
            "[" + keys(d - 1) + "]\nz = 1",
            "[[" + keys(d - 1) + "]]\nz = 1",
            "[" + keys(d / 2) + "]\n" + keys(d - d / 2 - 2) + ".z = [1]",
            "x = { " + keys(d - 3) + " = [1] }",
        ]
    }

    @Test func deepestAllowedNestingReadsAndOneMoreIsAnError() throws {
        let d = 64
        for text in Self.shapes(d) {
            #expect((try? Self.onWorkerStack(text).get()) != nil, "\(text.prefix(80))")
        }
        for text in Self.shapes(d + 1) {
            let result = Self.onWorkerStack("# deep\n" + text)
            #expect(throws: TOMLError.self, "\(text.prefix(80))") { try result.get() }
            if case .failure(let error) = result {
                #expect(error.line >= 2 && error.message.hasPrefix("nesting too deep: more than 64 levels"), "\(error)")
            }
        }
        // What crashed a worker before.
        for text in ["x = " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
                     "x = " + String(repeating: "{a=", count: 200) + "1" + String(repeating: "}", count: 200),
                     Self.keys(1000) + " = 1"] {
            #expect(throws: TOMLError.self) { try Self.onWorkerStack(text).get() }
        }
    }
}
