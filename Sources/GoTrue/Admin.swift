import AuthHTTP

/// The admin API (reference §12): service_role (or any `GOTRUE_JWT_ADMIN_ROLES` role) only.
struct AdminEndpoints {
    let api: Core

    var routes: [Route] { [] }
}
