import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthScenarios
import AuthStore
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Synchronization

/// One project the emulator serves, open: its GoTrue API with everything that hangs off it
/// (database, settings and keys, outbox, rate-limit buckets, virtual clock, scenarios, journal).
/// Nothing is shared between two projects but the HTTP server and the worker threads.
public final class HostedProject: Sendable {
    /// `default` for the project at the server's root, else the name it was created with.
    public let ref: String
    public let project: Project
    public let api: GoTrueAPI
    public let scenarios: ScenarioEngine
    public let journal: Journal
    /// The database file, or `:memory:`.
    public let databasePath: String
    /// Its lane in the worker queue (`HTTPResponder.dispatch`): 0 for the default project.
    let lane: Int

    init(ref: String, project: Project, api: GoTrueAPI, scenarios: ScenarioEngine, journal: Journal, databasePath: String,
         lane: Int) {
        self.ref = ref
        self.project = project
        self.api = api
        self.scenarios = scenarios
        self.journal = journal
        self.databasePath = databasePath
        self.lane = lane
    }
}
