import AuthJSON
import AuthTemplate
import FuzzSupport

// Fuzz target for the Go template engine that renders email and SMS templates: the input is a
// template, parsed, escaped (html/template, and text/template for the SMS path) and executed
// with a small data value like the mailer's. Properties: no crash, trap or sanitizer report on
// any input (inputs run on a 512 KiB stack, an HTTP worker's, so nesting past what the limits
// allow shows as a crash); parsing and rendering are deterministic; a render ends within its
// budget (libFuzzer's -timeout catches one that does not).

let data: JSON = [
    "Token": "123456", "TokenHash": "abc<def>", "SiteURL": "https://app.example", "Email": "a@example.com",
    "ConfirmationURL": "https://app.example/verify?token=x&type=signup", "RedirectTo": "javascript:alert(1)",
    "Data": ["first_name": "Zoë <3", "tags": ["a", "b"], "n": 3, "nested": ["k": [1, 2.5, nil]]],
]

func render(_ text: String, _ escaping: GoTemplate.Escaping) -> String {
    do {
        return "ok " + (try GoTemplate(parsing: text, name: "fuzz", escaping: escaping).execute(data))
    } catch {
        return "error \(error)"
    }
}

func fuzzOne(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    for escaping in [GoTemplate.Escaping.html, .text] {
        let first = render(text, escaping)
        fuzzCheck(first == render(text, escaping), "two renders differ: \(fuzzExcerpt(input))")
    }
}

@main
enum Main {
    static func main() { FuzzTarget.main(name: "fuzz-template", stackSize: 512 * 1024, fuzzOne) }
}
