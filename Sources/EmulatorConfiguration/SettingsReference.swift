import GoTrue

/// The settings table as people read it: `auth-emulator help settings` (text) and
/// `docs/settings.md` (`help settings --markdown`), printed from `Configuration.settings`, so
/// the reference cannot drift from what the readers accept. Families of rows that differ only
/// by a name (one per OAuth provider, per hook, per mail template) are shown once, with the name
/// as a placeholder.
package enum SettingsReference {
    struct Entry {
        let key: String
        let env: [String]
        let file: String?
        let flag: String?
        let setting: Setting
    }

    /// The families: the segment of the control key that varies, its placeholder, and the names.
    static let families: [(prefix: String, placeholder: String, names: [String])] = [
        ("external.", "provider", ExternalSettings.configurableProviders),
        ("hook.", "hook", HookSettings.names.map(\.name)),
        ("email.notification.", "notice", MailNotification.allCases.map(\.rawValue)),
        ("email.template.", "template", MailTemplateID.all),
        ("mailer_templates.", "template", MailTemplateID.all),
    ]

    /// One entry per row, families folded.
    static var entries: [Entry] {
        var seen: Set<String> = []
        var result: [Entry] = []
        for setting in Configuration.settings {
            var entry = Entry(key: setting.key, env: setting.env, file: setting.file, flag: setting.flag, setting: setting)
            for family in families where setting.key.hasPrefix(family.prefix) {
                let rest = setting.key.dropFirst(family.prefix.count)
                guard let name = rest.split(separator: ".").first.map(String.init), family.names.contains(name) else { continue }
                func fold(_ text: String) -> String {
                    let upper = "_" + name.uppercased()
                    if text.hasSuffix(upper) { return String(text.dropLast(upper.count)) + "_<\(family.placeholder.uppercased())>" }
                    return text.replacingFirst("." + name + ".", with: ".<\(family.placeholder)>.")
                        .replacingFirst(upper + "_", with: "_<\(family.placeholder.uppercased())>_")
                }
                entry = Entry(key: fold(setting.key), env: setting.env.map(fold), file: setting.file.map(fold), flag: nil, setting: setting)
            }
            if seen.insert(entry.key).inserted { result.append(entry) }
        }
        return result
    }

    static func defaultText(_ setting: Setting, _ profile: DefaultsProfile) -> String {
        if setting.secret { return "(secret)" }
        return SettingSyntax.text(setting.defaultValue(profile))
    }

    /// The flag as `serve --help` writes it (`--site-url <url>`, `--[no-]signup`).
    static func flagText(_ setting: Setting, _ flag: String) -> String {
        (setting.flagSyntax ?? "--\(flag)") + (setting.flagInverted ? " " + invertedNote(setting, flag) : "")
    }

    /// For a switch that means the opposite of its variable (`--signup` is
    /// `GOTRUE_DISABLE_SIGNUP=false`): which way round, since "inverted" alone leaves the reader
    /// to guess which side is which.
    static func invertedNote(_ setting: Setting, _ flag: String) -> String {
        "(inverted: --no-\(flag) is \(setting.env.first ?? setting.key)=true)"
    }

    /// `auth-emulator help settings`.
    package static func text() -> String {
        var out = """
            SETTINGS (\(Configuration.settings.count) rows; <provider>, <hook>, <notice> and <template> stand for each name)

            Each setting by its control-API key (PATCH /emulator/v1/config), then its environment
            variable, config.toml [auth] key and flag; defaults under --defaults cli and gotrue.

            """
        for entry in entries {
            let setting = entry.setting
            out += "\n  \(entry.key)\n"
            var names: [String] = []
            if !entry.env.isEmpty { names.append("env " + entry.env.joined(separator: ", ")) }
            if let file = entry.file { names.append("file " + file + (setting.fileInverted ? " (inverted)" : "")) }
            if let flag = entry.flag { names.append("flag " + flagText(setting, flag)) }
            if !setting.runtime { names.append("start-up only") }
            out += "      " + names.joined(separator: "; ") + "\n"
            out += "      \(setting.kind.describe); default cli: \(defaultText(setting, .cli)), gotrue: \(defaultText(setting, .gotrue))"
            if let note = setting.defaultNote { out += " (\(note))" }
            out += "\n      \(setting.help)\n"
        }
        return out
    }

    /// `docs/settings.md`.
    package static func markdown() -> String {
        var out = """
            # Settings reference

            Every setting the emulator reads, generated from its settings table by
            `auth-emulator help settings --markdown` (a test fails when this page and the table
            disagree). Each row names the setting in every place it can be set:

            - **Key**: the control-API name (`PATCH /emulator/v1/config`, `GET` shows each value
              and its source); the `config.toml` name is accepted there too.
            - **Environment**: the real server's `GOTRUE_*` variable, with its units and syntax
              (Go durations such as `10s`, comma-separated lists), or an emulator-only
              `AUTH_EMULATOR_*` one.
            - **config.toml**: the key under `[auth]` of a Supabase CLI config file (`!` marks a
              key that means the opposite, such as `email.enable_confirmations`).
            - **Flag**: the `auth-emulator serve` option.
            - **cli** and **gotrue**: the default under `serve --defaults cli` (what `supabase start`
              passes, the emulator's default) and `--defaults gotrue` (a bare GoTrue container).

            Precedence, highest first: flags, environment, config file, defaults; at run time a
            `PATCH` changes a value until the next start. Start-up-only settings (secrets, keys,
            hook URLs) are marked †. `<provider>`, `<hook>`, `<notice>` and `<template>` stand
            for each name of a family: \(families.map { "`<\($0.placeholder)>`: " + $0.names.joined(separator: ", ") }.joined(separator: "; ")).

            | Key | Environment | config.toml | Flag | cli | gotrue | Meaning |
            |---|---|---|---|---|---|---|

            """
        func cell(_ text: String) -> String { text.replacingAll("|", with: "\\|") }
        for entry in entries {
            let setting = entry.setting
            let file = entry.file.map { "`" + (setting.fileInverted ? "!" : "") + $0 + "`" } ?? ""
            let flag = entry.flag.map { "`" + flagText(setting, $0) + "`" } ?? ""
            var meaning = setting.help
            if let note = setting.defaultNote { meaning += " Default: \(note)." }
            let key = "`\(entry.key)`" + (setting.runtime ? "" : " †")
            out += "| \(cell(key)) | \(cell(entry.env.map { "`\($0)`" }.joined(separator: " "))) | \(cell(file)) | \(cell(flag)) | "
                + "\(cell(defaultText(setting, .cli))) | \(cell(defaultText(setting, .gotrue))) | \(cell(meaning)) |\n"
        }
        return out
    }
}

extension SettingsReference {
    /// The Flag and Environment cells of a server option's row in `docs/running.md`'s options
    /// table, as Markdown (`|` escaped), joined by " | ".
    package static func runningTableCells(_ row: ServerOption) -> String {
        let flag = row.flagSyntax.map { "`" + $0.replacingAll("|", with: "\\|") + "`" } ?? ""
        return flag + " | " + row.env.map { "`\($0)`" }.joined(separator: ", ")
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }

    func replacingAll(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
