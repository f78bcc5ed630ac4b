import Foundation
import GoTrue
import Testing
@testable import AuthEmulator

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
        let loaded = TemplateSources.load(config, transport: CurlHookTransport(environment: [:]))
        #expect(loaded.templates["magic_link"] == MailTemplateSource(text: "<b>{{ .Token }}</b>", origin: .url(config.mailer.templateURLs["magic_link"]!)))
        #expect(loaded.templates["invite"] == nil && loaded.templates["recovery"] == nil)
        #expect(loaded.warnings.count == 3)
        #expect(loaded.warnings.contains { $0.hasPrefix("GOTRUE_MAILER_TEMPLATES_INVITE: ") && $0.hasSuffix("the built-in invite body is used, as the real server falls back to its default") })
        #expect(loaded.warnings.contains { $0.hasPrefix("GOTRUE_MAILER_TEMPLATES_RECOVERY: templates.example.com is not this machine") })
        #expect(loaded.warnings.contains { $0.hasPrefix("email template confirmation: template: ") })
    }
}
