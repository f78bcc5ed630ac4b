import EmulatorConfiguration
import GoTrue

/// `serve --help`, printed from the rows (`EmulatorOptions.serveFlags`): each flag's syntax,
/// its help, then its default and its variables, so the help cannot drift from what the flag
/// parser and the environment reader accept.
extension CLI {
    struct HelpRow {
        let flag: String
        let isSwitch: Bool
        let syntax: String
        let text: String
    }

    /// Where the help column starts, and the width the help keeps to.
    static let helpColumn = 29
    static let helpWidth = 100

    static let serveHelpRows: [HelpRow] = EmulatorOptions.serveFlags.compactMap { entry in
        switch entry {
        case .server(let row): helpRow(row)
        case .setting(let row): helpRow(row)
        }
    }

    static var serveOptionsHelp: String { serveHelpRows.map(helpLines).joined() }

    static func helpRow<Target>(_ row: SettingRow<Target>) -> HelpRow? {
        guard let flag = row.flag, let syntax = row.flagSyntax else { return nil }
        var facts = defaultFact(row)
        switch row.kind {
        case .integer(let range):
            facts.insert("\(range.lowerBound)-\(range.upperBound)", at: 0)
        case .seconds(let range) where range.upperBound < Int(Int32.max):
            facts.insert("\(range.lowerBound)-\(range.upperBound)", at: 0)
        default: break
        }
        if !row.env.isEmpty { facts.append("env " + row.env.joined(separator: ", ")) }
        // Kept on one line, so the way round reads whole (`--no-signup is GOTRUE_DISABLE_SIGNUP=true`).
        if row.flagInverted, let variable = row.variable {
            facts.append(String("inverted: --no-\(flag) is \(variable)=true".map { $0 == " " ? "\u{00A0}" : $0 }))
        }
        // The row's help describes its variable; an inverted switch says which side it is.
        var text = row.flagInverted ? "With --no-\(flag): " + row.help.prefix(1).lowercased() + row.help.dropFirst() : row.help
        if !facts.isEmpty {
            let period = text.hasSuffix(".")
            if period { text.removeLast() }
            text += " (" + facts.joined(separator: "; ") + ")" + (period ? "." : "")
        }
        return HelpRow(flag: flag, isSwitch: syntax.hasPrefix("--[no-]"), syntax: syntax, text: text)
    }

    /// "default X", with the other profile's where it differs; a switch's as on or off, the way
    /// its flag reads (`--signup` is on when `GOTRUE_DISABLE_SIGNUP` is false).
    static func defaultFact<Target>(_ row: SettingRow<Target>) -> [String] {
        if let note = row.defaultNote { return ["default: " + note] }
        let (cli, gotrue) = (row.cli, row.gotrue)
        if row.secret || cli == .null { return [] }
        func text(_ value: SettingValue) -> String {
            if case .bool(let on) = value { return on != row.flagInverted ? "on" : "off" }
            return SettingSyntax.text(value)
        }
        if cli == gotrue { return ["default " + text(cli)] }
        return ["default " + text(cli) + ", " + text(gotrue) + " under --defaults gotrue"]
    }

    /// One option, its text wrapped at word boundaries into the help column.
    static func helpLines(_ row: HelpRow) -> String {
        let indent = String(repeating: " ", count: helpColumn)
        var lines: [String] = []
        var line = "  " + row.syntax
        if line.count >= helpColumn - 1 {
            lines.append(line)
            line = indent
        } else {
            line = line.padding(to: helpColumn)
        }
        var empty = true
        for word in row.text.split(separator: " ") {
            if !empty && line.count + 1 + word.count > helpWidth {
                lines.append(line)
                line = indent
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
        return lines.map { String($0.map { $0 == "\u{00A0}" ? " " : $0 }) + "\n" }.joined()
    }
}
