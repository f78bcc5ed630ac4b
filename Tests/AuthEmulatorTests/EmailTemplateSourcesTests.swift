@testable import AuthEmulator
import AuthHTTP
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Testing
@testable import auth_emulator

/// Where custom email bodies come from: `content_path` resolved as the CLI resolves it, the
/// environment's URLs, and the fallbacks of the real server when a source fails.
@Suite struct EmailTemplateSourcesTests {
    func project() throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/supabase/templates", withIntermediateDirectories: true)
        try "<b>{{ .Token }}</b>".write(toFile: root + "/supabase/templates/magic.html", atomically: true, encoding: .utf8)
        try "<i>{{ .Email }}</i>".write(toFile: root + "/supabase/notice.html", atomically: true, encoding: .utf8)
        return root
    }

    @Test func contentPathsResolveAsTheCLIResolvesThem() throws {
        let root = try project()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = EmulatorOptions()
        // A template's path is relative to the project folder, a notice's to the config folder;
        // a disabled notice's file is not read.
        try SupabaseConfigFile.apply("""
            [auth.email.template.magic_link]
            content_path = "./supabase/templates/magic.html"
            [auth.email.notification.password_changed]
            enabled = true
            content_path = "notice.html"
            [auth.email.notification.email_changed]
            enabled = false
            content_path = "missing.html"
            """, file: root + "/supabase/config.toml", environment: [:], to: &options)
        let templates = options.configuration.mailer.templates
        #expect(templates["magic_link"] == MailTemplateSource(text: "<b>{{ .Token }}</b>", origin: .file(root + "/supabase/templates/magic.html")))
        #expect(templates["password_changed_notification"]?.text == "<i>{{ .Email }}</i>")
        #expect(templates["email_changed_notification"] == nil)
        #expect(options.configuration.settingSources["email.template.magic_link.content"] == .file)
    }

    @Test func aMissingFileOrInlineContentStopsTheStart() throws {
        let root = try project()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = EmulatorOptions()
        #expect {
            try SupabaseConfigFile.apply("[auth.email.template.invite]\ncontent_path = \"./supabase/none.html\"\n",
                                         file: root + "/supabase/config.toml", environment: [:], to: &options)
        } throws: { ($0 as? EmulatorError)?.description.contains("config.toml:2: auth.email.template.invite.content_path: ") == true }
        #expect {
            try SupabaseConfigFile.apply("[auth.email.template.invite]\ncontent = \"<b>x</b>\"\n",
                                         file: root + "/supabase/config.toml", environment: [:], to: &options)
        } throws: { ($0 as? EmulatorError)?.description.contains("auth.email.template.invite.content: please use content_path instead") == true }
    }

    @Test func environmentURLsAndTheirFallbacks() throws {
        let root = try project()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var config = Configuration()
        config.mailer.templateURLs = [
            "magic_link": "file://" + root + "/supabase/templates/magic.html",
            "invite": "file://" + root + "/supabase/none.html",
            "recovery": "https://templates.example.com/recovery.html",
        ]
        config.mailer.templates["confirmation"] = MailTemplateSource(text: "{{ end }}", origin: .runtime)
        // No name resolves: the test asks no resolver (templates.example.com is no loopback name).
        let loaded = TemplateSources.load(config, transport: CurlHookTransport(environment: [:]), resolve: { _ in nil })
        #expect(loaded.templates["magic_link"] == MailTemplateSource(text: "<b>{{ .Token }}</b>", origin: .url(config.mailer.templateURLs["magic_link"]!)))
        #expect(loaded.templates["invite"] == nil && loaded.templates["recovery"] == nil)
        #expect(loaded.warnings.count == 3)
        #expect(loaded.warnings.contains { $0.hasPrefix("GOTRUE_MAILER_TEMPLATES_INVITE: ") && $0.hasSuffix("the built-in invite body is used, as the real server falls back to its default") })
        #expect(loaded.warnings.contains { $0.hasPrefix("GOTRUE_MAILER_TEMPLATES_RECOVERY: templates.example.com is not this machine") })
        #expect(loaded.warnings.contains { $0.hasPrefix("email template confirmation: template: ") })
    }

    /// The loopback rule is judged on where each hop connects, never on the text of a host:
    /// a name is resolved (here by a stand-in resolver, so nothing leaves the machine) and
    /// must lead to loopback addresses only; every redirect target is checked the same way
    /// before it is asked for; and libcurl itself refuses to open a connection to any other
    /// address. The names that are not stand-ins have a label longer than DNS allows (RFC 1035
    /// §2.3.4), so no resolver could send a query for them either.
    @Test func templateURLsStayOnThisMachine() throws {
        let label = String(repeating: "a", count: 64)
        let lookalike = "127." + label + ".test"
        let resolve: TemplateSources.Resolver = { name in
            switch name {
            case "mixed.test": return ["127.0.0.1", "10.0.0.1"]
            case "localhost": return ["127.0.0.1", "::1"]
            default: return nil
            }
        }
        let transport = CurlHookTransport(environment: [:])
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, loopThreads: 1, workerThreads: 2,
                                                                          maxBodyBytes: 1 << 20),
                                responder: HookTransportTests.HookEndpoint())
        try server.start()
        defer { server.shutdown(timeout: .seconds(2)) }
        let base = "http://127.0.0.1:\(server.port)"
        func fetch(_ url: String) -> Result<String, TemplateFetchError> {
            TemplateSources.fetch(url, siteURL: "", remote: false, transport: transport, resolve: resolve)
        }
        func problem(_ url: String) -> String? {
            if case .failure(let error) = fetch(url) { return error.description }
            return nil
        }
        // On loopback, directly and after a redirect that stays there.
        #expect(try fetch(base + "/echo").get().hasPrefix("method=GET"))
        #expect(try fetch(base + "/found").get().hasPrefix("method=GET"))
        // A name that merely starts like a loopback address.
        #expect(problem("http://\(lookalike):\(server.port)/echo")?.hasPrefix("\(lookalike) is not this machine: it resolves to no address") == true)
        #expect(problem("http://mixed.test:\(server.port)/echo")?.hasPrefix("mixed.test is not this machine: it resolves to 10.0.0.1") == true)
        // Redirects from loopback to elsewhere are not followed.
        let away = base + "/away?to="
        #expect(problem(away + "http://\(lookalike)/echo")?.hasPrefix("a redirect to http://\(lookalike)/echo: \(lookalike) is not this machine") == true)
        #expect(problem(away + "http://192.0.2.1:\(server.port)/echo")?.hasPrefix("a redirect to http://192.0.2.1:\(server.port)/echo: 192.0.2.1 is not this machine") == true)
        #expect(problem(away + #"http://127.0.0.1:1\@\#(lookalike)/echo"#)?.contains("is not an http(s) URL that Go and libcurl read alike") == true)
        // The connection check below the URL check: with every URL let through, libcurl still
        // opens no connection outside loopback (the refused socket is never created).
        let unchecked: (String) -> String? = { _ in nil }
        for url in ["http://192.0.2.1:9/", away + "http://192.0.2.1:9/echo", away + "http://[2001:db8::1]:9/echo"] {
            guard case .failure(let error) = transport.get(url, timeout: 5, limit: 1024, eachHop: unchecked) else {
                Issue.record("\(url) was fetched")
                continue
            }
            #expect(error.description.hasPrefix("refused to connect to ") && error.description.hasSuffix(": not a loopback address"), "\(error)")
        }
        // How hosts read.
        let cases: [(String, Bool)] = [
            ("http://127.0.0.1/", true), ("http://127.9.8.7:1/", true), ("http://[::1]/", true), ("http://[::ffff:127.0.0.1]/", true),
            ("http://localhost/", true), ("http://LOCALHOST:5/", true), ("http://10.0.0.1/", false), ("http://[::ffff:a00:1]/", false),
            ("http://0x7f.1/", false), ("http://2130706433/", false), ("http://mixed.test/", false), ("http://\(lookalike)/", false),
            (#"http://127.0.0.1:1\@evil.test/"#, false), ("ftp://127.0.0.1/", false),
        ]
        for (url, allowed) in cases { #expect((TemplateSources.loopbackProblem(url, resolve: resolve) == nil) == allowed, "\(url)") }
    }
}
