import AuthHTTP
import GoTrue

/// The emulator's side doors as one plug for GoTrue: what the real server has no counterpart for
/// (the outbox and test-token routes, the clock, fixtures, the software authenticator and
/// wallet, the fake identity providers and the dashboard), attached through GoTrue's seams.
public enum SideDoors {
    /// The side doors' route groups, under `/emulator/v1` (and the dashboard at `/emulator`).
    static let groups: [any EndpointGroup.Type] = [
        OutboxEndpoints.self,
        ClockEndpoints.self,
        FixtureEndpoints.self,
        TestTokenEndpoints.self,
        MFATestEndpoints.self,
        SoftwareAuthenticatorEndpoints.self,
        SoftwareWalletEndpoints.self,
        ControlIdPEndpoints.self,
        DashboardEndpoints.self,
    ]

    /// The plug for `project`'s API: its routes, the fake providers' public paths (a browser or an
    /// OIDC library reaches them without the service_role key, as a real provider's), the
    /// dashboard's discovery page where GoTrue has no route, and the dashboard's link to the API.
    public static func plugin(for project: Project) -> APIPlugin {
        APIPlugin(
            routes: groups.flatMap { $0.routes(project) },
            isPublic: { path in ControlIdPEndpoints.isPublic(path: path) },
            fallback: { method, path, viaGateway in
                DashboardEndpoints.discovery(method: method, path: path, viaGateway: viaGateway, project: project)
            },
            attach: { api in project.dashboard.attach(api) }
        )
    }

    /// `project` with the fake identity providers bound to GoTrue's provider seam: offline, every
    /// provider is the emulator's fake one.
    public static func bind(_ project: Project) -> Project {
        var project = project
        project.identityProviders = { api in FakeIdentityProvider(api: api) }
        return project
    }
}

extension GoTrueAPI {
    /// GoTrue with the emulator's side doors plugged in: what `auth-emulator serve` answers.
    public convenience init(emulating project: Project, middleware: [any Middleware] = [], extensions: [Route] = []) {
        let bound = SideDoors.bind(project)
        self.init(project: bound, middleware: middleware, extensions: extensions, plugins: [SideDoors.plugin(for: bound)])
    }
}

extension Project {
    /// The last fixture seeded (`reset?keep_seed=true` returns to it).
    public var fixtures: FixtureMemory { extensions.value { FixtureMemory() } }
    /// The fake identity providers' in-memory state (codes, provider tokens, cached key).
    public var identityProviderStore: IdentityProviderStore { extensions.value { IdentityProviderStore() } }
    /// The software wallets the control API created (Web3 sign-in), by address.
    public var wallets: SoftwareWallets { extensions.value { SoftwareWallets() } }
    /// The web dashboard's switches and its seam to the layers above (`/emulator`).
    public var dashboard: Dashboard { extensions.value { Dashboard() } }
}
