import AuthJSON
import EmulatorConfiguration
import EmulatorTools
import GoTrue

/// Fixtures, snapshots and shutdown actions of a running emulator (`serve --seed`,
/// `serve --export-on-exit`, and the same for a Swift test suite embedding the emulator).
extension Emulator {
    /// Applies a fixture file (`{"users": [...]}`, see `Fixture`); it also becomes the state
    /// `POST /emulator/v1/reset?keep_seed=true` returns to. Errors name the file, the entry and
    /// the field; nothing is applied when any entry is invalid.
    ///
    /// `progress`, when given, follows the work (passwords hashed, users written) for a
    /// console to show; polling it costs the seed nothing.
    public func seed(file path: String, progress: SeedProgress? = nil) throws(EmulatorError) {
        // A local file the user chose: large enough for a million users (~85 MB), the bulk
        // path `bench/cost.sh --seed-users` measures; still refuses a pointer at a disk image.
        let bytes = try Platform.readFile(path, limit: 1 << 30)
        let fixture: Fixture
        do {
            fixture = try Fixture(bytes: bytes)
        } catch {
            throw EmulatorError("\(path): \(error.message)")
        }
        do {
            try seed(fixture, progress: progress)
        } catch {
            throw EmulatorError("\(path): \(error.description)")
        }
    }

    /// Applies a parsed fixture.
    public func seed(_ fixture: Fixture, progress: SeedProgress? = nil) throws(EmulatorError) {
        do {
            try Seeder(project: project).seed(fixture, collect: false, progress: progress)
        } catch {
            throw EmulatorError(error.message)
        }
    }

    /// The snapshot `GET /emulator/v1/export` returns; the emulator's own private keys only
    /// when `includeSecrets` (`?include_secrets=true`).
    public func snapshot(includeSecrets: Bool = false) throws(EmulatorError) -> Snapshot {
        do {
            return try Snapshot.take(project, includeSecrets: includeSecrets)
        } catch {
            throw EmulatorError("cannot export: \(error.message)")
        }
    }

    /// Writes the export snapshot to `path` (replacing it atomically).
    public func exportSnapshot(to path: String, includeSecrets: Bool = false) throws(EmulatorError) {
        var bytes = try snapshot(includeSecrets: includeSecrets).json.serializedBytes()
        bytes.append(0x0A)
        try Platform.writeFile(path, bytes)
    }

    /// Runs `action` when the emulator stops, after in-flight requests have finished and before
    /// the database closes (so it may still read it).
    public func onStop(_ action: @escaping @Sendable (Emulator) -> Void) {
        stopActions.withLock { $0.append(action) }
    }
}
