/// GoTrue's machine-readable error codes, spelled exactly as the real server sends them in
/// `error_code` (initial API version) or `code` (API version 2024-01-01) and in the
/// `x-sb-error-code` header. Clients such as supabase-js and supabase-swift switch on these
/// strings, so the raw values are part of the wire contract and must never be renamed.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Every code the real server defines, in its declaration order.
    public static let all: [ErrorCode] = [
        .unknown,
        .unexpectedFailure,
        .validationFailed,
        .badJson,
        .emailExists,
        .phoneExists,
        .badJwt,
        .notAdmin,
        .noAuthorization,
        .userNotFound,
        .sessionNotFound,
        .sessionExpired,
        .refreshTokenNotFound,
        .refreshTokenAlreadyUsed,
        .flowStateNotFound,
        .flowStateExpired,
        .flowStateAlreadyUsed,
        .oauthClientStateNotFound,
        .oauthClientStateExpired,
        .oauthInvalidState,
        .signupDisabled,
        .userBanned,
        .providerEmailNeedsVerification,
        .inviteNotFound,
        .badOauthState,
        .badOauthCallback,
        .oauthProviderNotSupported,
        .unexpectedAudience,
        .singleIdentityNotDeletable,
        .emailConflictIdentityNotDeletable,
        .identityAlreadyExists,
        .emailProviderDisabled,
        .phoneProviderDisabled,
        .tooManyEnrolledMfaFactors,
        .mfaFactorNameConflict,
        .mfaFactorNotFound,
        .mfaIpAddressMismatch,
        .mfaChallengeExpired,
        .mfaVerificationFailed,
        .mfaVerificationRejected,
        .insufficientAal,
        .captchaFailed,
        .samlProviderDisabled,
        .manualLinkingDisabled,
        .smsSendFailed,
        .emailNotConfirmed,
        .phoneNotConfirmed,
        .samlRelayStateNotFound,
        .samlRelayStateExpired,
        .samlIdpNotFound,
        .samlAssertionNoUserId,
        .samlAssertionNoEmail,
        .userAlreadyExists,
        .ssoProviderNotFound,
        .ssoProviderDisabled,
        .samlMetadataFetchFailed,
        .samlIdpAlreadyExists,
        .ssoDomainAlreadyExists,
        .samlEntityIdMismatch,
        .conflict,
        .providerDisabled,
        .userSsoManaged,
        .reauthenticationNeeded,
        .samePassword,
        .reauthenticationNotValid,
        .currentPasswordInvalid,
        .currentPasswordRequired,
        .otpExpired,
        .otpDisabled,
        .identityNotFound,
        .weakPassword,
        .overRequestRateLimit,
        .overEmailSendRateLimit,
        .overSmsSendRateLimit,
        .badCodeVerifier,
        .anonymousProviderDisabled,
        .hookTimeout,
        .hookTimeoutAfterRetry,
        .hookPayloadOverSizeLimit,
        .hookPayloadInvalidContentType,
        .requestTimeout,
        .mfaPhoneEnrollNotEnabled,
        .mfaPhoneVerifyNotEnabled,
        .mfaTotpEnrollNotEnabled,
        .mfaTotpVerifyNotEnabled,
        .mfaWebauthnEnrollNotEnabled,
        .mfaWebauthnVerifyNotEnabled,
        .mfaVerifiedFactorExists,
        .invalidCredentials,
        .emailAddressNotAuthorized,
        .emailAddressInvalid,
        .web3ProviderDisabled,
        .web3UnsupportedChain,
        .oauthDynamicClientRegistrationDisabled,
        .emailAddressNotProvided,
        .featureDisabled,
        .oauthClientNotFound,
        .oauthAuthorizationNotFound,
        .oauthConsentNotFound,
        .requestEntityTooLarge,
        .customProviderNotFound,
        .overCustomProviderQuota,
        .passkeyDisabled,
        .tooManyPasskeys,
        .webauthnCredentialNotFound,
        .webauthnChallengeNotFound,
        .webauthnChallengeExpired,
        .webauthnVerificationFailed,
        .webauthnCredentialExists,
    ]

    public static let unknown = ErrorCode("unknown")
    public static let unexpectedFailure = ErrorCode("unexpected_failure")
    public static let validationFailed = ErrorCode("validation_failed")
    public static let badJson = ErrorCode("bad_json")
    public static let emailExists = ErrorCode("email_exists")
    public static let phoneExists = ErrorCode("phone_exists")
    public static let badJwt = ErrorCode("bad_jwt")
    public static let notAdmin = ErrorCode("not_admin")
    public static let noAuthorization = ErrorCode("no_authorization")
    public static let userNotFound = ErrorCode("user_not_found")
    public static let sessionNotFound = ErrorCode("session_not_found")
    public static let sessionExpired = ErrorCode("session_expired")
    public static let refreshTokenNotFound = ErrorCode("refresh_token_not_found")
    public static let refreshTokenAlreadyUsed = ErrorCode("refresh_token_already_used")
    public static let flowStateNotFound = ErrorCode("flow_state_not_found")
    public static let flowStateExpired = ErrorCode("flow_state_expired")
    public static let flowStateAlreadyUsed = ErrorCode("flow_state_already_used")
    public static let oauthClientStateNotFound = ErrorCode("oauth_client_state_not_found")
    public static let oauthClientStateExpired = ErrorCode("oauth_client_state_expired")
    public static let oauthInvalidState = ErrorCode("oauth_invalid_state")
    public static let signupDisabled = ErrorCode("signup_disabled")
    public static let userBanned = ErrorCode("user_banned")
    public static let providerEmailNeedsVerification = ErrorCode("provider_email_needs_verification")
    public static let inviteNotFound = ErrorCode("invite_not_found")
    public static let badOauthState = ErrorCode("bad_oauth_state")
    public static let badOauthCallback = ErrorCode("bad_oauth_callback")
    public static let oauthProviderNotSupported = ErrorCode("oauth_provider_not_supported")
    public static let unexpectedAudience = ErrorCode("unexpected_audience")
    public static let singleIdentityNotDeletable = ErrorCode("single_identity_not_deletable")
    public static let emailConflictIdentityNotDeletable = ErrorCode("email_conflict_identity_not_deletable")
    public static let identityAlreadyExists = ErrorCode("identity_already_exists")
    public static let emailProviderDisabled = ErrorCode("email_provider_disabled")
    public static let phoneProviderDisabled = ErrorCode("phone_provider_disabled")
    public static let tooManyEnrolledMfaFactors = ErrorCode("too_many_enrolled_mfa_factors")
    public static let mfaFactorNameConflict = ErrorCode("mfa_factor_name_conflict")
    public static let mfaFactorNotFound = ErrorCode("mfa_factor_not_found")
    public static let mfaIpAddressMismatch = ErrorCode("mfa_ip_address_mismatch")
    public static let mfaChallengeExpired = ErrorCode("mfa_challenge_expired")
    public static let mfaVerificationFailed = ErrorCode("mfa_verification_failed")
    public static let mfaVerificationRejected = ErrorCode("mfa_verification_rejected")
    public static let insufficientAal = ErrorCode("insufficient_aal")
    public static let captchaFailed = ErrorCode("captcha_failed")
    public static let samlProviderDisabled = ErrorCode("saml_provider_disabled")
    public static let manualLinkingDisabled = ErrorCode("manual_linking_disabled")
    public static let smsSendFailed = ErrorCode("sms_send_failed")
    public static let emailNotConfirmed = ErrorCode("email_not_confirmed")
    public static let phoneNotConfirmed = ErrorCode("phone_not_confirmed")
    public static let samlRelayStateNotFound = ErrorCode("saml_relay_state_not_found")
    public static let samlRelayStateExpired = ErrorCode("saml_relay_state_expired")
    public static let samlIdpNotFound = ErrorCode("saml_idp_not_found")
    public static let samlAssertionNoUserId = ErrorCode("saml_assertion_no_user_id")
    public static let samlAssertionNoEmail = ErrorCode("saml_assertion_no_email")
    public static let userAlreadyExists = ErrorCode("user_already_exists")
    public static let ssoProviderNotFound = ErrorCode("sso_provider_not_found")
    public static let ssoProviderDisabled = ErrorCode("sso_provider_disabled")
    public static let samlMetadataFetchFailed = ErrorCode("saml_metadata_fetch_failed")
    public static let samlIdpAlreadyExists = ErrorCode("saml_idp_already_exists")
    public static let ssoDomainAlreadyExists = ErrorCode("sso_domain_already_exists")
    public static let samlEntityIdMismatch = ErrorCode("saml_entity_id_mismatch")
    public static let conflict = ErrorCode("conflict")
    public static let providerDisabled = ErrorCode("provider_disabled")
    public static let userSsoManaged = ErrorCode("user_sso_managed")
    public static let reauthenticationNeeded = ErrorCode("reauthentication_needed")
    public static let samePassword = ErrorCode("same_password")
    public static let reauthenticationNotValid = ErrorCode("reauthentication_not_valid")
    public static let currentPasswordInvalid = ErrorCode("current_password_invalid")
    public static let currentPasswordRequired = ErrorCode("current_password_required")
    public static let otpExpired = ErrorCode("otp_expired")
    public static let otpDisabled = ErrorCode("otp_disabled")
    public static let identityNotFound = ErrorCode("identity_not_found")
    public static let weakPassword = ErrorCode("weak_password")
    public static let overRequestRateLimit = ErrorCode("over_request_rate_limit")
    public static let overEmailSendRateLimit = ErrorCode("over_email_send_rate_limit")
    public static let overSmsSendRateLimit = ErrorCode("over_sms_send_rate_limit")
    public static let badCodeVerifier = ErrorCode("bad_code_verifier")
    public static let anonymousProviderDisabled = ErrorCode("anonymous_provider_disabled")
    public static let hookTimeout = ErrorCode("hook_timeout")
    public static let hookTimeoutAfterRetry = ErrorCode("hook_timeout_after_retry")
    public static let hookPayloadOverSizeLimit = ErrorCode("hook_payload_over_size_limit")
    public static let hookPayloadInvalidContentType = ErrorCode("hook_payload_invalid_content_type")
    public static let requestTimeout = ErrorCode("request_timeout")
    public static let mfaPhoneEnrollNotEnabled = ErrorCode("mfa_phone_enroll_not_enabled")
    public static let mfaPhoneVerifyNotEnabled = ErrorCode("mfa_phone_verify_not_enabled")
    public static let mfaTotpEnrollNotEnabled = ErrorCode("mfa_totp_enroll_not_enabled")
    public static let mfaTotpVerifyNotEnabled = ErrorCode("mfa_totp_verify_not_enabled")
    public static let mfaWebauthnEnrollNotEnabled = ErrorCode("mfa_webauthn_enroll_not_enabled")
    public static let mfaWebauthnVerifyNotEnabled = ErrorCode("mfa_webauthn_verify_not_enabled")
    public static let mfaVerifiedFactorExists = ErrorCode("mfa_verified_factor_exists")
    public static let invalidCredentials = ErrorCode("invalid_credentials")
    public static let emailAddressNotAuthorized = ErrorCode("email_address_not_authorized")
    public static let emailAddressInvalid = ErrorCode("email_address_invalid")
    public static let web3ProviderDisabled = ErrorCode("web3_provider_disabled")
    public static let web3UnsupportedChain = ErrorCode("web3_unsupported_chain")
    public static let oauthDynamicClientRegistrationDisabled = ErrorCode("oauth_dynamic_client_registration_disabled")
    public static let emailAddressNotProvided = ErrorCode("email_address_not_provided")
    public static let featureDisabled = ErrorCode("feature_disabled")
    public static let oauthClientNotFound = ErrorCode("oauth_client_not_found")
    public static let oauthAuthorizationNotFound = ErrorCode("oauth_authorization_not_found")
    public static let oauthConsentNotFound = ErrorCode("oauth_consent_not_found")
    public static let requestEntityTooLarge = ErrorCode("request_entity_too_large")
    public static let customProviderNotFound = ErrorCode("custom_provider_not_found")
    public static let overCustomProviderQuota = ErrorCode("over_custom_provider_quota")
    public static let passkeyDisabled = ErrorCode("passkey_disabled")
    public static let tooManyPasskeys = ErrorCode("too_many_passkeys")
    public static let webauthnCredentialNotFound = ErrorCode("webauthn_credential_not_found")
    public static let webauthnChallengeNotFound = ErrorCode("webauthn_challenge_not_found")
    public static let webauthnChallengeExpired = ErrorCode("webauthn_challenge_expired")
    public static let webauthnVerificationFailed = ErrorCode("webauthn_verification_failed")
    public static let webauthnCredentialExists = ErrorCode("webauthn_credential_exists")
}
