import AuthHTTP
import AuthJSON
import AuthTemplate
import Foundation
import AuthTestSupport
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// Custom bodies and subjects rendered as the real server's templatemailer renders them, with
/// its fallbacks: a template that does not parse sends the defaults, one that fails to execute
/// fails the send with the mail's 500.
@Suite struct CustomEmailTemplateTests {
    func api(_ templates: [String: String], subjects: [String: String] = [:]) throws -> GoTrueAPI {
        try makeAPI { config in
            for (id, text) in templates { config.mailer.templates[id] = MailTemplateSource(text: text, origin: .runtime) }
            config.mailer.subjects = subjects
            config.siteURL = "https://app.example"
        }
    }

    func magicLink(_ api: GoTrueAPI, _ email: String, data: JSON = [:]) -> HTTPResponse {
        _ = api.call("POST", "/signup", ["email": .string(email), "password": "password1", "data": data])
        return api.call("POST", "/magiclink", ["email": .string(email)])
    }

    @Test func theAppsOwnLinkCarriesATokenHashThatVerifies() throws {
        let api = try api(["magic_link": #"<p>{{ if .Data.first_name }}Hi {{ .Data.first_name }}{{ else }}Hi{{ end }}, <a href="{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=email&next={{ .RedirectTo }}">log in</a></p>"#],
                          subjects: ["magic_link": "{{ .Data.first_name }} & your link"])
        #expect(magicLink(api, "t@example.com", data: ["first_name": "Zoë <3"]).status == 200)
        let message = try #require(try api.project.database.read { try $0.outboxMessages(recipient: "t@example.com", type: "magiclink", limit: 1) }.first)
        // A value is escaped in the subject too (it is an html/template), the template's own text not.
        #expect(message.subject == "Zoë &lt;3 & your link")
        #expect(message.bodyHTML.hasPrefix("<p>Hi Zoë &lt;3, <a href=\"https://app.example/auth/confirm?token_hash=\(message.tokenHash)&type=email&next=https%3a%2f%2fapp.example\">"))
        let links = Outbox.links(inHTML: message.bodyHTML)
        #expect(links == ["https://app.example/auth/confirm?token_hash=\(message.tokenHash)&type=email&next=https%3a%2f%2fapp.example"])
        #expect(message.bodyText == "Hi Zoë <3, log in: \(links[0])\n")
        let verified = api.call("POST", "/verify", ["token_hash": .string(message.tokenHash), "type": "email"])
        #expect(verified.status == 200 && verified.json["user"]?["email"] == "t@example.com")
    }

    @Test func aTemplateThatDoesNotParseSendsTheDefaults() throws {
        let api = try api(["magic_link": "{{ if .Token }}never closed"], subjects: ["magic_link": "Custom"])
        #expect(magicLink(api, "p@example.com").status == 200)
        let message = try #require(try api.project.database.read { try $0.outboxMessages(recipient: "p@example.com", type: "magiclink", limit: 1) }.first)
        // loadEntryDefault: the default subject and body both.
        #expect(message.subject == "Your sign-in link")
        #expect(Outbox.links(inHTML: message.bodyHTML) == [message.actionLink])
    }

    @Test func aTemplateThatFailsToExecuteFailsTheSend() throws {
        let api = try api(["magic_link": "{{ index .Data.list 5 }}"])
        let response = magicLink(api, "x@example.com", data: ["list": [1]])
        #expect(response.status == 500)
        #expect(response.json["msg"] == "Error sending magic link email")
        // Nothing was sent, and the token was not stored (the write rolled back).
        #expect(try api.project.database.read { try $0.outboxMessages(recipient: "x@example.com", type: "magiclink", limit: 1) }.isEmpty)
    }

    /// Parses are kept by text, name and escaping: the same text under another name reports its
    /// own name, a text that does not parse fails on every send, and what is kept stays bounded.
    @Test func keptParsesAnswerAsFreshOnes() throws {
        let text = "{{ index .Data.list 5 }}"
        let data: JSON = ["Data": ["list": [1]]]
        for name in ["first.html", "second.html", "first.html"] {
            let kept = try MailTemplates.parsed(text, name: name)
            let fresh = try GoTemplate(parsing: text, name: name)
            #expect(throws: TemplateError.self) { try kept.execute(data) }
            #expect(throws: TemplateError.self) { try fresh.execute(data) }
            do { _ = try kept.execute(data) } catch {
                #expect(error.description.contains(name), "\(error)")
                do { _ = try fresh.execute(data) } catch let freshError { #expect(error.description == freshError.description) }
            }
        }
        // One text, two escapings: html/template escapes the value, text/template does not.
        let value: JSON = ["Code": "<b>"]
        #expect(try MailTemplates.parsed("{{ .Code }}", name: "").execute(value) == "&lt;b&gt;")
        #expect(try MailTemplates.parsed("{{ .Code }}", name: "", escaping: .text).execute(value) == "<b>")
        for _ in 0..<2 { #expect(throws: TemplateError.self) { try MailTemplates.parsed("{{ if .Token }}never closed", name: "") } }
        for index in 0...MailTemplates.parsedLimit {
            _ = try MailTemplates.parsed("<p>\(index) {{ .Token }}</p>", name: "bounded")
        }
        #expect(MailTemplates.parsedCount <= MailTemplates.parsedLimit)
        #expect(try MailTemplates.parsed("<p>7 {{ .Token }}</p>", name: "bounded").execute(["Token": "1"]) == "<p>7 1</p>")
    }

    @Test func builtInBodiesRenderEveryTemplate() throws {
        for id in MailTemplateID.all {
            let data: JSONObject = ["SiteURL": "https://app.example", "ConfirmationURL": "https://api.example/verify?token=a&type=b",
                                    "Email": "a@example.com", "NewEmail": "b@example.com", "Token": "123456", "TokenHash": "h",
                                    "RedirectTo": "", "Data": [:], "OldEmail": "o@example.com", "Phone": "1", "OldPhone": "2",
                                    "Provider": "google", "FactorType": "totp"]
            let message = try MailTemplates.render(id, data: data, mailer: MailerSettings(), failure: "x")
            #expect(message.subject == MailTemplates.defaultSubjects[id]?.replacingToken, "\(id)")
            #expect(!message.html.contains("{{") && !message.html.contains("<no value>"), "\(id)")
            if ["confirmation", "invite", "magic_link", "recovery", "email_change"].contains(id) {
                #expect(Outbox.links(inHTML: message.html) == ["https://api.example/verify?token=a&type=b"], "\(id)")
            }
        }
    }

    @Test func linksAndCharacterReferences() {
        #expect(Outbox.links(inHTML: #"<a href='https://a.example/?x=1&amp;y=2'>a</a> <A HREF=https://b.example>b</A> <a href="https://a.example/?x=1&#38;y=2">"#)
                == ["https://a.example/?x=1&y=2", "https://b.example"])
        #expect(Outbox.links(inHTML: "<p data-href=\"x\">no</p><link rel=x>") == [])
        #expect(Outbox.decodeCharacterReferences("&lt;&#x41;&#66;&bogus;&") == "<AB&bogus;&")
    }

    /// Links are the `href` of `<a>` and `<area>` start tags as a browser's tokenizer reads
    /// them (HTML §13.2.5), never text that only looks like an attribute.
    @Test func linksAreAttributesOfLinkTagsOnly() {
        let notLinks = [
            #"<p>Paste href="http://text.example" into your browser</p>"#,
            #"<p>href=http://bare.example</p> href='http://single.example'"#,
            #"<!-- <a href="http://comment.example">old</a> -->"#,
            #"<!--> <p>after an abrupt comment</p> href="http://x.example""#,
            #"<img alt='<a href="http://alt.example">' src=x>"#,
            #"<a title=' href="http://title.example"'>t</a>"#,
            #"<a data-href="http://data.example">d</a><link href="http://link.example"><base href="http://base.example">"#,
            #"<script>var a = '<a href="http://script.example">';</script><style>a[href="http://style.example"]{}</style>"#,
            #"<textarea><a href="http://textarea.example">x</a></textarea>"#,
            #"<!DOCTYPE html href="http://doctype.example"><?xml href="http://pi.example"?>"#,
            #"</p href="http://endtag.example"><a href="http://unterminated.example"#,
        ]
        for body in notLinks { #expect(Outbox.links(inHTML: body) == [], "\(body)") }
        // The first of a repeated attribute counts; names in any case; quotes of either kind or
        // none; `&amp;`, numeric references with or without ";", and a legacy `&amp` that is
        // kept as written before "=" in an attribute; white space around the value is dropped.
        #expect(Outbox.links(inHTML: #"<A HrEf='http://a.example/?x=1&amp;y=2' HREF="http://second.example">a</A>"#)
                == ["http://a.example/?x=1&y=2"])
        #expect(Outbox.links(inHTML: "<a\nhref=http://u.example/?a=1&#38b=2>u</a><area shape=rect href=\" http://area.example/\t\n \">")
                == ["http://u.example/?a=1&b=2", "http://area.example/"])
        #expect(Outbox.links(inHTML: #"<a href="http://q.example/?a=1&amp=2&copy=3">q</a>"#) == ["http://q.example/?a=1&amp=2&copy=3"])
        #expect(Outbox.links(inHTML: #"<script>x</script><a href="http://after.example">a</a><!-- c --><a href=http://c.example/>c</a>"#)
                == ["http://after.example", "http://c.example/"])
        // A plain-text reading keeps a link's case and shows no comment or script.
        #expect(MailTemplates.plainText(#"<p>Hi<!-- hidden --><script>no()</script></p><p><a HREF="https://App.example/Confirm?T=AbC">Go</a></p>"#)
                == "Hi\n\nGo: https://App.example/Confirm?T=AbC\n")
        // Whatever the input, a pass ends and stays linear (no nesting is followed).
        let hostile = String(repeating: "<a href='", count: 20_000) + String(repeating: "<!--", count: 20_000) + "<a"
        #expect(Outbox.links(inHTML: hostile).count <= 1)
        #expect(HTMLTokens.decodeCharacterReferences(ArraySlice("&#0;&#xD800;&#99999999999;&#x80;".utf8), inAttribute: false)
                == "\u{FFFD}\u{FFFD}\u{FFFD}\u{20AC}")
    }
}

private extension String {
    var replacingToken: String { replacingOccurrences(of: "{{ .Token }}", with: "123456") }
}
