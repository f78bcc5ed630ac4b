/// What `Configuration` records of the settings table (EmulatorConfiguration's
/// `SettingsTable.swift`, which reads every source through its rows): whose defaults applied,
/// and where each setting's value came from.

/// Where a setting's value came from, lowest precedence first.
public enum SettingSource: String, Sendable, CaseIterable {
    case `default`, file, env, flag, runtime
}

/// Whose defaults apply to what no source sets (`serve --defaults`, `AUTH_EMULATOR_DEFAULTS`).
public enum DefaultsProfile: String, Sendable, CaseIterable {
    /// `supabase start`: the Supabase CLI's template and the variables it passes.
    case cli
    /// A bare GoTrue container configured only by `GOTRUE_*` variables.
    case gotrue
}

extension String {
    /// `anon_key` as a flag name: `anon-key`.
    package var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }

    /// `password_changed` in a sentence: `password changed`.
    package var spacedWords: String { String(map { $0 == "_" ? " " : $0 }) }
}
