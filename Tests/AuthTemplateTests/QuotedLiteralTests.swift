import AuthJSON
import AuthTemplate
import Testing

/// Character constants and interpreted strings share the lexer's scan (Go's text/template/parse
/// lex.go, lexChar and lexQuote): a backslash escapes the next character, and a newline or the
/// end of the input before the closing quote is an error that names which literal it was.
@Suite struct QuotedLiteralTests {
    static func render(_ text: String) -> String {
        do {
            return try GoTemplate(parsing: text, name: "t", escaping: .text).execute(JSON.null)
        } catch {
            return "error: \(error)"
        }
    }

    @Test(arguments: [
        ("{{'a}}", "error: template: t:1: unterminated character constant"),
        (#"{{'\'}}"#, "error: template: t:1: unterminated character constant"),
        ("{{'\\\n'}}", "error: template: t:1: unterminated character constant"),
        ("{{'\n'}}", "error: template: t:1: unterminated character constant"),
        ("{{'", "error: template: t:1: unterminated character constant"),
        (#"{{"a}}"#, "error: template: t:1: unterminated quoted string"),
        (#"{{"a\"}}"#, "error: template: t:1: unterminated quoted string"),
        ("{{\"a\\\n\"}}", "error: template: t:1: unterminated quoted string"),
        ("{{\"a\n\"}}", "error: template: t:1: unterminated quoted string"),
        ("{{\"", "error: template: t:1: unterminated quoted string"),
        (#"{{"a\"b" | printf "%s"}}"#, #"a"b"#),
        (#"{{"it's"}}"#, "it's"),
        (#"{{printf "%c%c" 'a' '\''}}"#, "a'"),
        (#"{{printf "%c" '"'}}"#, #"""#),
    ])
    func quotedLiterals(_ text: String, _ expected: String) {
        #expect(Self.render(text) == expected, "\(text)")
    }
}
