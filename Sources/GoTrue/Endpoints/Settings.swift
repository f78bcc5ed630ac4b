import AuthHTTP
import AuthJSON

/// `GET /settings` (reference §5.2), built from the live configuration.
struct SettingsEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("GET", "/settings", operation: "settings") { g, _ in .json(g.settings(g.api.snapshot.configuration)) }]
    }

    func settings(_ config: Configuration) -> JSON {
        var external = JSONObject()
        external["anonymous_users"] = .bool(config.external.anonymousUsersEnabled)
        for provider in ExternalSettings.settingsProviders {
            external[provider] = .bool(config.external.isEnabled(provider))
        }
        external["email"] = .bool(config.external.emailEnabled)
        external["phone"] = .bool(config.external.phoneEnabled)
        external["zoom"] = .bool(config.external.isEnabled("zoom"))
        return [
            "external": .object(external),
            "disable_signup": .bool(config.disableSignup),
            "mailer_autoconfirm": .bool(config.mailer.autoconfirm),
            "phone_autoconfirm": .bool(config.sms.autoconfirm),
            "sms_provider": .string(config.sms.provider),
            "saml_enabled": false,
            "saml_private_key_next_configured": false,
            "passkeys_enabled": .bool(config.passkey.enabled),
        ]
    }
}
