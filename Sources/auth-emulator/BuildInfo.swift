import GoTrue

/// Facts about the build, stamped by `scripts/release` (which writes the commit here for the
/// duration of its build and restores the file afterwards). A plain `swift build` leaves them
/// empty.
enum BuildInfo {
    /// The git commit the binary was built from, or "".
    static let commit = ""

    /// `auth-emulator version`: the version, then the commit when known.
    static var versionLine: String {
        commit.isEmpty ? Configuration.emulatorVersion : Configuration.emulatorVersion + " (commit " + commit + ")"
    }
}
