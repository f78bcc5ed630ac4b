/// GoTrue's `models.AuditAction` values, each with the `log_type` its `ActionLogTypeMap` gives
/// it: one table, so a call site names the action and cannot pair it with another type.
package enum AuditAction: String {
    case login
    case logout
    case inviteAccepted = "invite_accepted"
    case userSignedUp = "user_signedup"
    case userInvited = "user_invited"
    case userDeleted = "user_deleted"
    case userModified = "user_modified"
    case userRecoveryRequested = "user_recovery_requested"
    case userReauthenticateRequested = "user_reauthenticate_requested"
    case userConfirmationRequested = "user_confirmation_requested"
    case userRepeatedSignUp = "user_repeated_signup"
    case userUpdatedPassword = "user_updated_password"
    case tokenRevoked = "token_revoked"
    case tokenRefreshed = "token_refreshed"
    case factorInProgress = "factor_in_progress"
    case factorUnenrolled = "factor_unenrolled"
    case challengeCreated = "challenge_created"
    case verificationAttempted = "verification_attempted"
    case factorDeleted = "factor_deleted"
    case factorUpdated = "factor_updated"
    case identityLinked = "identity_linked"
    case identityUnlinked = "identity_unlinked"
    case passkeyCreated = "passkey_created"
    case passkeyUpdated = "passkey_updated"
    case passkeyDeleted = "passkey_deleted"

    /// `ActionLogTypeMap[action]`.
    package var logType: String {
        switch self {
        case .login, .logout, .inviteAccepted: return "account"
        case .userSignedUp, .userInvited, .userDeleted: return "team"
        case .tokenRevoked, .tokenRefreshed: return "token"
        case .factorInProgress, .factorUnenrolled, .challengeCreated, .verificationAttempted, .factorDeleted, .factorUpdated:
            return "factor"
        case .userModified, .userRecoveryRequested, .userReauthenticateRequested, .userConfirmationRequested,
             .userRepeatedSignUp, .userUpdatedPassword, .identityLinked, .identityUnlinked, .passkeyCreated,
             .passkeyUpdated, .passkeyDeleted:
            return "user"
        }
    }
}
