import Testing
@testable import GoFormats

/// strings.TrimSpace and strings.Trim, with the examples of pkg.go.dev/strings.
@Suite struct GoStringsTests {
    @Test func trimSpace() {
        #expect(GoStrings.trimSpace(" \t\n Hello, Gophers \n\t\r\n") == "Hello, Gophers")
        #expect(GoStrings.trimSpace("") == "")
        #expect(GoStrings.trimSpace(" \u{b}\u{c} ") == "")
        // unicode.IsSpace past ASCII: NEL, NO-BREAK SPACE, IDEOGRAPHIC SPACE; not ZERO WIDTH SPACE.
        #expect(GoStrings.trimSpace("\u{85}\u{a0}x y\u{3000}\u{2029}") == "x y")
        #expect(GoStrings.trimSpace("\u{200b}x") == "\u{200b}x")
        // Code points, not Characters: the space before a combining mark goes, the mark stays.
        #expect(GoStrings.trimSpace(" \u{301}x") == "\u{301}x")
        #expect(GoStrings.trimSpace(Substring("  a  ")) == "a")
    }

    @Test func trimCutset() {
        #expect(GoStrings.trim("¡¡¡Hello, Gophers!!!", "!¡") == "Hello, Gophers")
        #expect(GoStrings.trim(" \t a \t", " \t") == "a")
        #expect(GoStrings.trim("\n id,\n", " \n") == "id,")
        #expect(GoStrings.trim("abc", "") == "abc")
        #expect(GoStrings.trim("aaa", "a") == "")
        #expect(GoStrings.trim("\r\nx\r\n", "\r\n") == "x")
    }
}

/// html.EscapeString and template.HTMLEscapeString (pkg.go.dev/html, pkg.go.dev/text/template).
@Suite struct GoHTMLTests {
    @Test func escapeString() {
        #expect(GoHTML.escapeString(#""Fran & Freddie's Diner" <tasty@example.com>"#)
                == "&#34;Fran &amp; Freddie&#39;s Diner&#34; &lt;tasty@example.com&gt;")
        #expect(GoHTML.escapeString("a&b<\"'>") == "a&amp;b&lt;&#34;&#39;&gt;")
        #expect(GoHTML.escapeString("\u{0}é") == "\u{0}é")
        // A quote followed by a combining mark is still a quote byte to Go.
        #expect(GoHTML.escapeString("\"\u{301}") == "&#34;\u{301}")
    }

    @Test func templateEscapeString() {
        #expect(GoHTML.templateEscapeString("<a href=\"x\">'&'</a>") == "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(GoHTML.templateEscapeString("a\u{0}b") == "a\u{FFFD}b")
    }
}

/// encoding/json's string encoding (Go 1.22+): json.Marshal's HTML-safe form and an Encoder's
/// after SetEscapeHTML(false), as `go run` prints them for the same inputs.
@Suite struct GoJSONTests {
    @Test func escapesAsEncodingJSON() {
        let text = "a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}<>&\u{7f}é\u{2028}\u{2029}\u{2027}"
        #expect(GoJSON.quote(text, escapeHTML: true)
            == #""a\"b\\c\n\r\t\b\f\u0001\u001f\u003c\u003e\u0026"# + "\u{7f}é" + #"\u2028\u2029"# + "\u{2027}\"")
        #expect(GoJSON.quote(text, escapeHTML: false)
            == #""a\"b\\c\n\r\t\b\f\u0001\u001f<>&"# + "\u{7f}é" + #"\u2028\u2029"# + "\u{2027}\"")
        #expect(GoJSON.quote("", escapeHTML: true) == "\"\"")
        // A lone E2 lead byte's sequence that is no separator, and one cut short at the end.
        #expect(GoJSON.quote("\u{20ac}x\u{2026}", escapeHTML: true) == "\"\u{20ac}x\u{2026}\"")
    }

    @Test func appendsToWhatIsThere() {
        var out = Array("[".utf8)
        GoJSON.appendString("<", escapeHTML: true, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"["\u003c""#)
    }
}
