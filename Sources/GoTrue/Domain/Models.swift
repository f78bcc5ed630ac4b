import AuthJSON
import AuthPlatform
import AuthStore

/// JSON shapes of the real server's models (reference §3.1-3.2, `internal/models`). Go writes
/// struct fields in declaration order, `omitempty` fields only when set, and `map` values
/// (metadata, identity data) with sorted keys.
enum Models {
    /// Parses a stored JSON object column; a corrupt value reads as `{}`.
    static func object(_ text: String) -> JSONObject {
        parsed(text).object
    }

    /// `object(text).sortedRecursively()`: how metadata goes into user JSON and token claims.
    static func sortedObject(_ text: String) -> JSONObject {
        parsed(text).sorted
    }

    /// Metadata texts repeat across users and requests (`{}`, `{"provider":"email",...}`), and a
    /// refresh reads the same ones up to three times (claims, user JSON, audit entry): short
    /// texts are parsed once and kept, a few dozen at most.
    /// One cache per thread (`ThreadLocal`): every worker reads it several times per request,
    /// and behind one lock they queued on it.
    private static let cache = ThreadLocal<ParsedCache> { ParsedCache() }
    private static let cacheableLength = 256

    struct ParsedObject {
        let object: JSONObject
        let sorted: JSONObject
    }

    /// Direct-mapped: a text has one slot, chosen by `SampledHash`, and a hit is confirmed by
    /// comparing the text. Most texts a worker meets are one user's own (`sub` and `email` sit
    /// in every user's metadata and identity data) and do not come back before the cache has
    /// turned over, while a few are shared by every user. A `Dictionary` hashed each ~120-byte
    /// text with SipHash twice per miss and was emptied whole when full: ~2.5 % of a
    /// `GET /user`, as much as the parsing it saved. Here a newcomer takes a slot only from an
    /// occupant that was not read since it arrived or was last spared (a second chance, as in
    /// the CLOCK page-replacement policy), so one-off texts pass through while the shared ones
    /// stay.
    struct ParsedCache {
        private struct Slot {
            let text: String
            let entry: ParsedObject
            var read: Bool
        }

        static let slotBits = 6
        static let slotCount = 1 << slotBits
        private var slots = [Slot?](repeating: nil, count: slotCount)

        /// The slot `text` maps to, and its entry when the slot holds that very text.
        mutating func find(_ text: String) -> (slot: Int, entry: ParsedObject?) {
            // The top bits of a Fibonacci multiply (Knuth, TAOCP vol. 3 §6.4): the sampled hash's
            // low bits vary little when texts differ only in a few digits near their end.
            let hash = UInt64(truncatingIfNeeded: SampledHash.of(text))
            let slot = Int(truncatingIfNeeded: (hash &* 0x9e37_79b9_7f4a_7c15) >> (64 - Self.slotBits))
            // Byte equality: `==` would take a text for a canonically equivalent one.
            guard let occupant = slots[slot], UTF8Bytes.equal(occupant.text, text) else { return (slot, nil) }
            slots[slot]!.read = true
            return (slot, slots[slot]!.entry)
        }

        /// Offers `entry` for `slot` (from `find`): taken when the slot is free or its occupant
        /// went unread; otherwise the occupant is spared this once.
        mutating func offer(_ text: String, _ entry: ParsedObject, slot: Int) {
            if let occupant = slots[slot], occupant.read {
                slots[slot]!.read = false
            } else {
                slots[slot] = Slot(text: text, entry: entry, read: false)
            }
        }
    }

    private static func parsed(_ text: String) -> ParsedObject {
        if text == "{}" { return ParsedObject(object: JSONObject(), sorted: JSONObject()) }
        let cacheable = text.utf8.count <= cacheableLength
        var slot = 0
        if cacheable {
            let found = cache.withValue { $0.find(text) }
            if let hit = found.entry { return hit }
            slot = found.slot
        }
        let object = (try? JSON(parsing: text))?.objectValue ?? JSONObject()
        let entry = ParsedObject(object: object, sorted: object.sortedRecursively())
        if cacheable { cache.withValue { $0.offer(text, entry, slot: slot) } }
        return entry
    }

    /// A JSON object column as stored: keys sorted, as every reader renders them (Go's maps), so
    /// a read finds them in order and `sortedRecursively` has nothing to do.
    static func text(_ object: JSONObject) -> String { object.serialized(sortedKeys: true) }

    private static func time(_ micros: Int64) -> JSON { .string(Timestamp(microseconds: micros).rfc3339) }

    /// `models.User` as JSON. `identities` nil renders `null` (not loaded), as Go's nil slice;
    /// `factors` (omitted when none) sit where Go declares them, after
    /// `user_metadata` and before `identities`, as every eager-loaded user of the real server
    /// carries them.
    static func user(_ u: UserRecord, identities: [IdentityRecord]?, factors: [FactorRecord] = []) -> JSON {
        var o = JSONObject()
        o.reserveCapacity(26)  // every field below: the storage is allocated once
        o.append("id", .string(u.id))
        o.append("aud", .string(u.aud))
        o.append("role", .string(u.role))
        o.append("email", .string(u.email ?? ""))
        if let t = u.emailConfirmedAt { o.append("email_confirmed_at", time(t)) }
        if let t = u.invitedAt { o.append("invited_at", time(t)) }
        o.append("phone", .string(u.phone ?? ""))
        if let t = u.phoneConfirmedAt { o.append("phone_confirmed_at", time(t)) }
        if let t = u.confirmationSentAt { o.append("confirmation_sent_at", time(t)) }
        if let t = u.confirmedAt { o.append("confirmed_at", time(t)) }
        if let t = u.recoverySentAt { o.append("recovery_sent_at", time(t)) }
        if let e = u.emailChange, !e.isEmpty { o.append("new_email", .string(e)) }
        if let t = u.emailChangeSentAt { o.append("email_change_sent_at", time(t)) }
        if let p = u.phoneChange, !p.isEmpty { o.append("new_phone", .string(p)) }
        if let t = u.phoneChangeSentAt { o.append("phone_change_sent_at", time(t)) }
        if let t = u.reauthenticationSentAt { o.append("reauthentication_sent_at", time(t)) }
        if let t = u.lastSignInAt { o.append("last_sign_in_at", time(t)) }
        o.append("app_metadata", .object(sortedObject(u.appMetadata)))
        o.append("user_metadata", .object(sortedObject(u.userMetadata)))
        if !factors.isEmpty { o.append("factors", .array(factors.map(factor))) }
        if let identities {
            o.append("identities", .array(identities.map(identity)))
        } else {
            o.append("identities", .null)
        }
        o.append("created_at", time(u.createdAt))
        o.append("updated_at", time(u.updatedAt))
        if let t = u.bannedUntil { o.append("banned_until", time(t)) }
        if let t = u.deletedAt { o.append("deleted_at", time(t)) }
        o.append("is_anonymous", .bool(u.isAnonymous))
        return .object(o)
    }

    /// `models.Factor` as JSON (reference §3.3).
    static func factor(_ f: FactorRecord) -> JSON {
        var o = JSONObject()
        o.reserveCapacity(9)
        o.append("id", .string(f.id))
        o.append("created_at", time(f.createdAt))
        o.append("updated_at", time(f.updatedAt))
        o.append("status", .string(f.status))
        if let name = f.friendlyName, !name.isEmpty { o.append("friendly_name", .string(name)) }
        o.append("factor_type", .string(f.factorType))
        o.append("phone", .string(f.phone ?? ""))
        o.append("last_challenged_at", f.lastChallengedAt.map(time) ?? .null)
        if let aaguid = f.webAuthnAAGUID, !aaguid.isEmpty { o.append("web_authn_aaguid", .string(aaguid)) }
        return .object(o)
    }

    /// `models.Identity` as JSON.
    static func identity(_ i: IdentityRecord) -> JSON {
        var o = JSONObject()
        o.reserveCapacity(9)
        o.append("identity_id", .string(i.id))
        o.append("id", .string(i.providerID))
        o.append("user_id", .string(i.userID))
        let data = sortedObject(i.identityData)
        if !data.isEmpty { o.append("identity_data", .object(data)) }
        o.append("provider", .string(i.provider))
        if let t = i.lastSignInAt { o.append("last_sign_in_at", time(t)) }
        o.append("created_at", time(i.createdAt))
        o.append("updated_at", time(i.updatedAt))
        if let e = i.email ?? (data["email"]?.stringValue?.lowercased()), !e.isEmpty { o.append("email", .string(e)) }
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
