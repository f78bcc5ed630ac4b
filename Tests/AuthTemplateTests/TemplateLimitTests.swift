import AuthJSON
import AuthTemplate
import Foundation
import Testing

/// The limits that keep any template from crashing or stalling the process (docs/email-templates.md,
/// "Limits"): nesting is bounded when parsing, escaping work and rendering by budgets.
/// What the worker thread hands back; written before the semaphore is signalled, read after.
final class ResultBox<T>: @unchecked Sendable { var value: T? }

@Suite struct TemplateLimitTests {
    /// Runs `body` on a thread with the stack of an HTTP worker (HTTPServerConfiguration's
    /// `workerStackSize`, 512 KiB), where templates are parsed and rendered. A stack overflow
    /// there crashes the test process, which is what these tests guard against. Nil when
    /// `body` has not finished within `timeout` seconds.
    static func onWorkerStack<T: Sendable>(timeout: Double = 120, _ body: @escaping @Sendable () -> T) -> T? {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.value = body()
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return box.value
    }

    /// Parses, escapes (html) or not (text) and executes; the output or the error's text.
    static func render(_ text: String, _ escaping: GoTemplate.Escaping = .html, data: JSON = ["A": ["k": ["B": 1]]]) -> String {
        onWorkerStack {
            do {
                return try GoTemplate(parsing: text, name: "t", escaping: escaping).execute(data)
            } catch {
                return "error: \(error)"
            }
        } ?? "timed out"
    }

    static func nested(_ open: String, _ count: Int, _ inner: String, _ close: String = "{{end}}") -> String {
        String(repeating: open, count: count) + inner + String(repeating: close, count: count)
    }

    static let depth = 14  // Parser.maxNestingDepth

    /// The deepest template of each shape allowed renders on a worker's stack, in both escapings;
    /// one level more is a parse error naming the line.
    @Test(arguments: [GoTemplate.Escaping.html, .text])
    func deepestAllowedNestingRendersAndOneMoreIsAParseError(escaping: GoTemplate.Escaping) {
        let d = Self.depth
        let allowed: [(String, String)] = [
            (Self.nested("{{if 1}}", d, "x"), "x"),
            (Self.nested("{{with 1}}", d, "x"), "x"),
            (Self.nested("{{range 1}}", d, "x"), "x"),
            // Each `else if` of a chain nests one level deeper.
            ("{{if 0}}a" + String(repeating: "{{else if 0}}a", count: d - 1) + "{{else}}b{{end}}", "b"),
            ("{{with 0}}a" + String(repeating: "{{else with 0}}a", count: d - 1) + "{{else}}b{{end}}", "b"),
            // A parenthesized pipeline counts two.
            ("{{" + Self.nested("(print ", d / 2, "1", ")") + "}}", "1"),
            ("{{" + Self.nested("(and 1 ", d / 2, "1", ")") + "}}", "1"),
            ("{{" + Self.nested("(index ", d / 2, ".A", " \"k\").B") + "}}", ""),
            (Self.nested("{{range 2}}", d - 4, "{{((1))}}"), String(repeating: "1", count: 1 << (d - 4))),
        ]
        for (text, _) in allowed {
            let output = Self.render(text, escaping)
            #expect(!output.hasPrefix("error: template: t:1: ") && output != "timed out", "\(text): \(output.prefix(300))")
        }
        #expect(Self.render(Self.nested("{{if 1}}", d, "x"), escaping) == "x")
        #expect(Self.render("{{" + Self.nested("(print ", d / 2, "1", ")") + "}}", escaping) == "1")

        let tooDeep = [
            Self.nested("{{if 1}}", d + 1, "x"),
            Self.nested("{{with 1}}", d + 1, "x"),
            Self.nested("{{range 1}}", d + 1, "x"),
            "{{if 0}}a" + String(repeating: "{{else if 0}}a", count: d) + "{{else}}b{{end}}",
            "{{with 0}}a" + String(repeating: "{{else with 0}}a", count: d) + "{{else}}b{{end}}",
            Self.nested("{{if 1}}", d - 1, "{{(1)}}"),
            // What crashed a worker before the limit.
            Self.nested("{{if 1}}", 40, "x"),
            "{{if 0}}" + String(repeating: "{{else if 0}}", count: 38) + "{{end}}",
            "{{" + Self.nested("(", 51, "1", ")") + "}}",
        ]
        for text in tooDeep {
            let output = Self.render(text, escaping)
            #expect(output.hasPrefix("error: template: t:1: "), "\(text.prefix(60)): \(output)")
            #expect(output.contains("nesting too deep (limit 14") || output.contains("max expression depth exceeded (limit 14"), "\(output)")
        }
        // Parentheses keep Go's wording; the line is the one the limit was passed on.
        #expect(Self.render("x\n\n{{" + Self.nested("(", d / 2 + 1, "1", ")") + "}}", escaping).hasPrefix(
            "error: template: t:3: max expression depth exceeded (limit 14: each {{if}}, {{with}}, {{range}}, {{else if}} and {{else with}} counts 1, each parenthesized pipeline 2)"))
    }

    /// Each range body is escaped twice (the loop may run again from where it ended); nested
    /// ranges escaped each nested body again per pass, 2^22 times for 22 levels. The limit
    /// allows 14 levels now, but the work stays linear when the nesting is spread over a
    /// sequence of ranges, and a template nested as deep as allowed escapes at once.
    @Test func nestedRangesEscapeInLinearWork() {
        let deepest = Self.nested("{{range 1}}<a href=\"{{.}}\">", Self.depth, "<b>{{.}}</b>", "</a>{{end}}")
        #expect(Self.render(deepest).hasPrefix("<a href=\"0\"><a href=\"0\">"))
        // 22 ranges, as the slow input had, in two blocks of 11.
        let two = Self.nested("{{range .}}", 11, "{{.}}") + Self.nested("{{range .}}", 11, "{{.}}")
        let started = Date()
        #expect(Self.onWorkerStack(timeout: 30) { (try? GoTemplate(parsing: two, name: "t")) != nil } == true)
        #expect(Date().timeIntervalSince(started) < 30)
        // 200 ranges nested 7 deep, side by side: escaped once per range and context.
        let wide = String(repeating: Self.nested("{{range .}}<p title=\"{{.}}\">", 7, "{{.}}", "</p>{{end}}"), count: 200)
        #expect(Self.onWorkerStack(timeout: 30) { (try? GoTemplate(parsing: wide, name: "t").execute([])) } == "")
    }

    /// The escaping of a template whose work the memo does not bound stops at its budget with an
    /// html/template error, reported (as Go reports escaping errors) when it is executed.
    @Test func escapingWorkIsBudgeted() throws {
        // The budget counts nodes escaped, each once with the memo: it is reached by a template
        // of 120,000 nodes (about 700 KB), far beyond any email.
        let flat = String(repeating: "<i>{{.}}</i>", count: 60_000)
        let output = Self.onWorkerStack(timeout: 60) { () -> String in
            do { return try GoTemplate(parsing: flat, name: "t").execute("x") } catch { return "error: \(error)" }
        }
        #expect(output == "error: html/template:t: escaping the template takes more than 100000 steps (the escaping limit)")
    }

    @Test func renderingIsBudgeted() {
        // What took half a minute and 180 MB per mail.
        #expect(Self.render("{{range 20000000}}x{{end}}").hasSuffix("template takes more than 1000000 steps (the render limit)"))
        #expect(Self.render("{{range 20000000}}{{end}}").hasSuffix("template takes more than 1000000 steps (the render limit)"))
        // Output past 2 MiB stops the render.
        #expect(Self.render(#"{{range 3000}}{{printf "%1000d" 1}}{{end}}"#).hasSuffix("template output exceeds 2097152 bytes (the render limit)"))
        // A string doubled in a loop stops at the function that makes it too long.
        #expect(Self.render(#"{{$x := "ab"}}{{range 40}}{{$x = printf "%s%s" $x $x}}{{end}}{{len $x}}"#).hasSuffix(
            "error calling printf: result exceeds 2097152 bytes (the render limit)"))
        // Within the budget, a loop renders as in Go.
        #expect(Self.render("{{range 100000}}{{end}}{{range 3}}{{.}}{{end}}") == "012")
    }

    /// Steps and output bound a render but not the work one step does: a fuzzed template grew a
    /// variable to tens of KiB in each of a million loop iterations (seconds per render), and an
    /// `eq` of two large strings costs their length each time. What functions take and return
    /// counts in all, up to 32 MiB.
    @Test func whatFunctionsHandleIsBudgetedInAll() {
        let grow = #"{{range 20000000}}{{$x := "abcdefgh"}}{{range 12}}{{$x = printf "%s%s" $x $x}}{{end}}{{end}}"#
        #expect(Self.render(grow).hasSuffix("template functions handle more than 33554432 bytes in all (the render limit)"))
        let compare = #"{{$x := printf "%2000000d" 1}}{{range 20000000}}{{if eq $x $x}}{{end}}{{end}}"#
        #expect(Self.render(compare, .text).hasSuffix("template functions handle more than 33554432 bytes in all (the render limit)"))
        // A mail's worth of work is far inside it.
        #expect(Self.render(#"{{range 1000}}{{printf "%s-%d" "ab" 1}}{{end}}"#, .text).hasPrefix("ab-1ab-1"))
    }

    /// fmt's width and precision limits (fmt/print.go: `tooLarge`, above 1e6): a `*` argument
    /// past it prints %!(BADWIDTH) or %!(BADPREC) and formats on without it; a written number
    /// past it ends the verb (%!(NOVERB)). A written width Go accepts but that makes the result
    /// pass the render limit is refused by that limit.
    @Test func printfWidthAndPrecisionLimitsAreGos() {
        #expect(Self.render(#"{{printf "%*d" 2000000 1}}"#, .text) == "%!(BADWIDTH)1")
        #expect(Self.render(#"{{printf "%*d" -2000000 1}}"#, .text) == "%!(BADWIDTH)1")
        #expect(Self.render(#"{{printf "%.*d" 2000000 1}}"#, .text) == "%!(BADPREC)1")
        #expect(Self.render(#"{{printf "%*d|" 1000000 1}}"#, .text).count == 1_000_001)
        #expect(Self.render(#"{{printf "%100000000d" 1}}"#, .text) == "%!(NOVERB)%!(EXTRA int=1)")
        #expect(Self.render(#"{{printf "%.100000000d" 1}}"#, .text) == "%!(NOVERB)%!(EXTRA int=1)")
        #expect(Self.render(#"{{printf "%9999999d" 1}}"#, .text).hasSuffix("error calling printf: result exceeds 2097152 bytes (the render limit)"))
    }

    /// Values are as deep as the JSON they come from (request bodies are read at most 100 deep):
    /// printing and escaping them recurse once per level.
    @Test func deepDataPrintsOnAWorkerStack() throws {
        let deep = try JSON(parsing: Array((String(repeating: "{\"a\":[", count: 50) + "1" + String(repeating: "]}", count: 50)).utf8))
        for text in ["{{.}}", "<script>var x = {{.}}</script>", "<a title=\"{{.}}\">", "{{printf \"%#v\" .}}"] {
            let output = Self.render(text, data: deep)
            #expect(!output.hasPrefix("error") && output != "timed out", "\(text): \(output.prefix(200))")
        }
    }
}
