import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import GoTrue

/// `GET /emulator/v1/mfa/totp?factor_id=<id>` (service_role): the current TOTP code of a factor
/// on the project's clock, and the next one, so a test can verify a factor without a TOTP
/// library of its own. Phone factors' codes are in the outbox (type `mfa`).
struct MFATestEndpoints: EndpointGroup {
    let api: Core

    static let path = GoTrueAPI.emulatorPrefix + "/mfa/totp"

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("GET", MFATestEndpoints.path, operation: "emulator.mfa.totp") { g, context in try g.totp(context) }]
    }

    func totp(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let id = context.request.queryValue("factor_id") ?? ""
        guard let factorID = AdminEndpoints.canonicalUUID(id) else {
            throw ControlRequest.invalid("factor_id must be a UUID")
        }
        guard let factor = try api.read({ conn in try conn.factor(id: factorID) }) else {
            throw AuthError(404, .mfaFactorNotFound, "Factor not found")
        }
        guard factor.factorType == "totp", let secret = try? Base32.decode(factor.secret ?? ""), !secret.isEmpty else {
            throw ControlRequest.invalid("factor \(factorID) is a \(factor.factorType) factor: its codes are in the outbox (type \"mfa\")")
        }
        let now = api.project.environment.now().unixSeconds
        let step = Int64(OneTimePassword.timeStep(unixSeconds: now))
        return .json([
            "factor_id": .string(factor.id),
            "code": .string(OneTimePassword.totp(secret: secret, unixSeconds: now)),
            "next_code": .string(OneTimePassword.totp(secret: secret, unixSeconds: now + 30)),
            // Seconds until `next_code` becomes the current one (RFC 6238 time steps of 30 s).
            "expires_in": .number((step + 1) * 30 - now),
            "period": 30,
            "digits": 6,
        ])
    }
}
