import AuthJSON
import AuthStore

/// JSON shapes of the real server's models (reference §3.1-3.2, `internal/models`). Go writes
/// struct fields in declaration order, `omitempty` fields only when set, and `map` values
/// (metadata, identity data) with sorted keys.
enum Models {
    /// Parses a stored JSON object column; a corrupt value reads as `{}`.
    static func object(_ text: String) -> JSONObject {
        (try? JSON(parsing: text))?.objectValue ?? JSONObject()
    }

    static func text(_ object: JSONObject) -> String { object.serialized() }

    private static func time(_ micros: Int64) -> JSON { .string(Timestamp(microseconds: micros).rfc3339) }

    /// `models.User` as JSON. `identities` nil renders `null` (not loaded), as Go's nil slice;
    /// `factors` (omitted when none) sit where Go declares them, after
    /// `user_metadata` and before `identities`, as every eager-loaded user of the real server
    /// carries them.
    static func user(_ u: UserRecord, identities: [IdentityRecord]?, factors: [FactorRecord] = []) -> JSON {
        var o = JSONObject()
        o["id"] = .string(u.id)
        o["aud"] = .string(u.aud)
        o["role"] = .string(u.role)
        o["email"] = .string(u.email ?? "")
        if let t = u.emailConfirmedAt { o["email_confirmed_at"] = time(t) }
        if let t = u.invitedAt { o["invited_at"] = time(t) }
        o["phone"] = .string(u.phone ?? "")
        if let t = u.phoneConfirmedAt { o["phone_confirmed_at"] = time(t) }
        if let t = u.confirmationSentAt { o["confirmation_sent_at"] = time(t) }
        if let t = u.confirmedAt { o["confirmed_at"] = time(t) }
        if let t = u.recoverySentAt { o["recovery_sent_at"] = time(t) }
        if let e = u.emailChange, !e.isEmpty { o["new_email"] = .string(e) }
        if let t = u.emailChangeSentAt { o["email_change_sent_at"] = time(t) }
        if let p = u.phoneChange, !p.isEmpty { o["new_phone"] = .string(p) }
        if let t = u.phoneChangeSentAt { o["phone_change_sent_at"] = time(t) }
        if let t = u.reauthenticationSentAt { o["reauthentication_sent_at"] = time(t) }
        if let t = u.lastSignInAt { o["last_sign_in_at"] = time(t) }
        o["app_metadata"] = .object(object(u.appMetadata).sortedRecursively())
        o["user_metadata"] = .object(object(u.userMetadata).sortedRecursively())
        if !factors.isEmpty { o["factors"] = .array(factors.map(factor)) }
        if let identities {
            o["identities"] = .array(identities.map(identity))
        } else {
            o["identities"] = .null
        }
        o["created_at"] = time(u.createdAt)
        o["updated_at"] = time(u.updatedAt)
        if let t = u.bannedUntil { o["banned_until"] = time(t) }
        if let t = u.deletedAt { o["deleted_at"] = time(t) }
        o["is_anonymous"] = .bool(u.isAnonymous)
        return .object(o)
    }

    /// `models.Factor` as JSON (reference §3.3).
    static func factor(_ f: FactorRecord) -> JSON {
        var o = JSONObject()
        o["id"] = .string(f.id)
        o["created_at"] = time(f.createdAt)
        o["updated_at"] = time(f.updatedAt)
        o["status"] = .string(f.status)
        if let name = f.friendlyName, !name.isEmpty { o["friendly_name"] = .string(name) }
        o["factor_type"] = .string(f.factorType)
        o["phone"] = .string(f.phone ?? "")
        o["last_challenged_at"] = f.lastChallengedAt.map(time) ?? .null
        if let aaguid = f.webAuthnAAGUID, !aaguid.isEmpty { o["web_authn_aaguid"] = .string(aaguid) }
        return .object(o)
    }

    /// `models.Identity` as JSON.
    static func identity(_ i: IdentityRecord) -> JSON {
        var o = JSONObject()
        o["identity_id"] = .string(i.id)
        o["id"] = .string(i.providerID)
        o["user_id"] = .string(i.userID)
        let data = object(i.identityData)
        if !data.isEmpty { o["identity_data"] = .object(data.sortedRecursively()) }
        o["provider"] = .string(i.provider)
        if let t = i.lastSignInAt { o["last_sign_in_at"] = time(t) }
        o["created_at"] = time(i.createdAt)
        o["updated_at"] = time(i.updatedAt)
        if let e = i.email ?? (data["email"]?.stringValue?.lowercased()), !e.isEmpty { o["email"] = .string(e) }
        return .object(o)
    }

    /// `user.UpdateUserMetaData` / `UpdateAppMetaData`: keys with null values are deleted, the
    /// others set.
    static func merge(_ changes: JSONObject, into stored: String) -> String {
        var current = object(stored)
        for (key, value) in changes {
            if value == .null {
                _ = current.removeValue(forKey: key)
            } else {
                current[key] = value
            }
        }
        return text(current)
    }
}

extension UserRecord {
    /// `User.UpdatePassword`'s reset: after a password change, no pending confirmation, recovery,
    /// email/phone change or reauthentication token is trusted any more.
    mutating func forgetPendingTokens() {
        confirmationToken = nil
        confirmationSentAt = nil
        recoveryToken = nil
        recoverySentAt = nil
        emailChangeTokenCurrent = nil
        emailChangeTokenNew = nil
        emailChangeSentAt = nil
        phoneChangeToken = nil
        phoneChangeSentAt = nil
        reauthenticationToken = nil
        reauthenticationSentAt = nil
    }
}
