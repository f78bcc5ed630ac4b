import GoTrue

/// The status and message the real server sends with each error code (reference §4.4 and §16),
/// so `"error": "invalid_credentials"` alone produces exactly what GoTrue would. Where the same
/// code comes with another status or text on another route, the operation picks it.
enum ErrorCatalog {
    static func defaults(for code: ErrorCode, operation: String?) -> (status: Int, message: String) {
        let refresh = operation == "token.refresh_token"
        switch code.rawValue {
        case "session_not_found":
            return refresh ? (400, "Invalid Refresh Token: No Valid Session Found")
                : (403, "Session from session_id claim in JWT does not exist")
        case "session_expired":
            return refresh ? (400, "Invalid Refresh Token: Session Expired") : (403, "Session is no longer valid")
        case "user_banned":
            if refresh { return (400, "Invalid Refresh Token: User Banned") }
            return (operation == "token.password" ? 400 : 403, "User is banned")
        case "user_not_found":
            return operation?.hasPrefix("admin.") == true ? (404, "User not found") : (403, "User from sub claim in JWT does not exist")
        case "email_provider_disabled":
            return operation == "signup" ? (400, "Email signups are disabled") : (422, "Email logins are disabled")
        case "phone_provider_disabled":
            return operation == "signup" ? (400, "Phone signups are disabled") : (422, "Phone logins are disabled")
        default:
            return table[code.rawValue] ?? (400, code.rawValue.replacingUnderscores)
        }
    }

    static let table: [String: (Int, String)] = [
        "unexpected_failure": (500, AuthError.unexpectedFailureMessage),
        "validation_failed": (400, "Unable to validate email address: invalid format"),
        "bad_json": (400, "Could not parse request body as JSON: unexpected end of JSON input"),
        "email_exists": (422, AuthError.duplicateEmailMessage),
        "phone_exists": (422, AuthError.duplicatePhoneMessage),
        "bad_jwt": (403, "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired"),
        "not_admin": (403, "User not allowed"),
        "no_authorization": (401, "This endpoint requires a valid Bearer token"),
        "refresh_token_not_found": (400, "Invalid Refresh Token: Refresh Token Not Found"),
        "refresh_token_already_used": (400, "Invalid Refresh Token: Already Used"),
        "flow_state_not_found": (404, "invalid flow state, no valid flow state found"),
        "flow_state_expired": (422, "invalid flow state, flow state has expired"),
        "signup_disabled": (422, "Signups not allowed for this instance"),
        "provider_email_needs_verification": (422, "Unverified email with provider. Verify the email with provider in order to sign in"),
        "identity_already_exists": (422, "Identity is already linked"),
        "user_already_exists": (422, "User already registered"),
        "conflict": (409, "Too many concurrent token refresh requests on the same session or refresh token"),
        "reauthentication_needed": (400, "Password update requires reauthentication"),
        "same_password": (422, "New password should be different from the old password."),
        "reauthentication_not_valid": (422, "Nonce has expired or is invalid"),
        "current_password_required": (400, "Current password required when setting new password."),
        "current_password_invalid": (400, "Current password required when setting new password."),
        "otp_expired": (403, "Token has expired or is invalid"),
        "otp_disabled": (422, "Signups not allowed for otp"),
        "weak_password": (422, "Password should be at least 6 characters."),
        "over_request_rate_limit": (429, "Request rate limit reached"),
        "over_email_send_rate_limit": (429, "email rate limit exceeded"),
        "over_sms_send_rate_limit": (429, "SMS rate limit exceeded"),
        "bad_code_verifier": (400, "code challenge does not match previously saved code verifier"),
        "anonymous_provider_disabled": (422, "Anonymous sign-ins are disabled"),
        "request_timeout": (504, "Processing this request timed out, please retry after a moment."),
        "invalid_credentials": (400, "Invalid login credentials"),
        "email_not_confirmed": (400, "Email not confirmed"),
        "phone_not_confirmed": (400, "Phone not confirmed"),
        "email_address_invalid": (400, "Email address is invalid"),
        "email_address_not_authorized": (400, "Email address cannot be used as it is not authorized"),
        "captcha_failed": (400, "captcha protection: request disallowed"),
        "sms_send_failed": (500, "Error sending SMS"),
        "manual_linking_disabled": (404, "Manual linking is disabled"),
        "saml_provider_disabled": (404, "SAML 2.0 is disabled"),
        "feature_disabled": (404, "OAuth server is disabled"),
        "passkey_disabled": (404, "Passkeys are disabled"),
        "single_identity_not_deletable": (422, "User must have at least 1 identity after unlinking"),
        "identity_not_found": (422, "Identity doesn't exist"),
        "mfa_verification_failed": (422, "Invalid TOTP code entered"),
        "mfa_factor_not_found": (404, "Factor not found"),
        "insufficient_aal": (401, "AAL2 required"),
        "unexpected_audience": (403, "Token audience doesn't match request audience"),
        "request_entity_too_large": (413, "Request body too large (max 1048576 bytes)"),
        "hook_timeout": (500, "Failed to reach hook within maximum time of 5.000000 seconds"),
    ]

    /// Builds the error the rule asks for; `weak_password` gets GoTrue's weak-password shape.
    static func error(_ code: ErrorCode, status: Int?, message: String?, operation: String?) -> AuthError {
        let fallback = defaults(for: code, operation: operation)
        if code == .unexpectedFailure, status == nil || status == 500, message == nil { return AuthError.unexpected }
        if code == .weakPassword {
            return AuthError.weakPassword(message ?? fallback.message, reasons: ["length"])
        }
        return AuthError(status ?? fallback.status, code, message ?? fallback.message)
    }
}

extension String {
    fileprivate var replacingUnderscores: String {
        String(map { $0 == "_" ? " " : $0 })
    }
}
