import AuthJSON
import AuthPlatform
import AuthStore

/// JSON shapes of the real server's models (reference §3.1-3.2, `internal/models`). Go writes
/// struct fields in declaration order, `omitempty` fields only when set, and `map` values
/// (metadata, identity data) with sorted keys.
package enum Models {
    /// Parses a stored JSON object column; a corrupt value reads as `{}`.
    package static func object(_ text: String) -> JSONObject {
        parsed(text).object
    }

    /// `object(text).sortedRecursively()`: how metadata goes into user JSON and token claims.
    package static func sortedObject(_ text: String) -> JSONObject {
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
    package static func text(_ object: JSONObject) -> String { object.serialized(sortedKeys: true) }

    /// A stored metadata object as a member (user JSON, access token claims): copied as stored
    /// when the output writes bytes and the text is already sorted and written as the parse
    /// path would write it, parsed (through the cache) otherwise.
    static func metadata<Output: JSONOutput>(_ name: String, _ text: String, _ o: inout Output) {
        if !o.member(name, sortedObjectText: text) { o.member(name, .object(sortedObject(text))) }
    }

    /// A timestamp member, rendered on the stack: no `String` is made for the bytes path.
    private static func time<Output: JSONOutput>(_ name: String, _ micros: Int64, _ o: inout Output) {
        o.key(name)
        Timestamp(microseconds: micros).withRFC3339UTF8 { o.string(utf8: $0) }
    }

    /// `models.User` as JSON. `identities` nil renders `null` (not loaded), as Go's nil slice;
    /// `factors` (omitted when none) sit where Go declares them, after
    /// `user_metadata` and before `identities`, as every eager-loaded user of the real server
    /// carries them.
    package static func user(_ u: UserRecord, identities: [IdentityRecord]?, factors: [FactorRecord] = []) -> JSON {
        var tree = JSONTreeBuilder()
        writeUser(u, identities: identities, factors: factors, to: &tree)
        return tree.result!
    }

    /// `user(...)` written to any output: the one description of the user's JSON, which
    /// `GET /user` and the refresh grant send as bytes without building the tree.
    // Specialized here for the byte writer: GoTrue's files are optimized one by one (Package.swift),
    // so `GET /user` and the refresh grant, in other files, could not specialize it themselves.
    @_specialize(where Output == JSONByteWriter)
    static func writeUser<Output: JSONOutput>(_ u: UserRecord, identities: [IdentityRecord]?, factors: [FactorRecord],
                                              to o: inout Output) {
        o.beginObject(reservingCapacity: 26)  // every field below
        o.member("id", u.id)
        o.member("aud", u.aud)
        o.member("role", u.role)
        o.member("email", u.email ?? "")
        if let t = u.emailConfirmedAt { time("email_confirmed_at", t, &o) }
        if let t = u.invitedAt { time("invited_at", t, &o) }
        o.member("phone", u.phone ?? "")
        if let t = u.phoneConfirmedAt { time("phone_confirmed_at", t, &o) }
        if let t = u.confirmationSentAt { time("confirmation_sent_at", t, &o) }
        if let t = u.confirmedAt { time("confirmed_at", t, &o) }
        if let t = u.recoverySentAt { time("recovery_sent_at", t, &o) }
        if let e = u.emailChange, !e.isEmpty { o.member("new_email", e) }
        if let t = u.emailChangeSentAt { time("email_change_sent_at", t, &o) }
        if let p = u.phoneChange, !p.isEmpty { o.member("new_phone", p) }
        if let t = u.phoneChangeSentAt { time("phone_change_sent_at", t, &o) }
        if let t = u.reauthenticationSentAt { time("reauthentication_sent_at", t, &o) }
        if let t = u.lastSignInAt { time("last_sign_in_at", t, &o) }
        metadata("app_metadata", u.appMetadata, &o)
        metadata("user_metadata", u.userMetadata, &o)
        if !factors.isEmpty {
            o.key("factors")
            o.beginArray()
            for f in factors { writeFactor(f, to: &o) }
            o.endArray()
        }
        o.key("identities")
        if let identities {
            o.beginArray()
            for i in identities { writeIdentity(i, to: &o) }
            o.endArray()
        } else {
            o.null()
        }
        time("created_at", u.createdAt, &o)
        time("updated_at", u.updatedAt, &o)
        if let t = u.bannedUntil { time("banned_until", t, &o) }
        if let t = u.deletedAt { time("deleted_at", t, &o) }
        o.member("is_anonymous", u.isAnonymous)
        o.endObject()
    }

    /// A user with the identities and factors its JSON shows: read inside a transaction and
    /// written after it (the refresh grant's response).
    struct UserView {
        let user: UserRecord
        let identities: [IdentityRecord]?
        let factors: [FactorRecord]

        func write<Output: JSONOutput>(to o: inout Output) {
            Models.writeUser(user, identities: identities, factors: factors, to: &o)
        }
    }

    /// `models.Factor` as JSON (reference §3.3).
    static func factor(_ f: FactorRecord) -> JSON {
        var tree = JSONTreeBuilder()
        writeFactor(f, to: &tree)
        return tree.result!
    }

    static func writeFactor<Output: JSONOutput>(_ f: FactorRecord, to o: inout Output) {
        o.beginObject(reservingCapacity: 9)
        o.member("id", f.id)
        time("created_at", f.createdAt, &o)
        time("updated_at", f.updatedAt, &o)
        o.member("status", f.status)
        if let name = f.friendlyName, !name.isEmpty { o.member("friendly_name", name) }
        o.member("factor_type", f.factorType)
        o.member("phone", f.phone ?? "")
        if let t = f.lastChallengedAt { time("last_challenged_at", t, &o) } else { o.member("last_challenged_at", JSON.null) }
        if let aaguid = f.webAuthnAAGUID, !aaguid.isEmpty { o.member("web_authn_aaguid", aaguid) }
        o.endObject()
    }

    /// `models.Identity` as JSON, inside a user's.
    @_specialize(where Output == JSONByteWriter)  // as `writeUser`
    static func writeIdentity<Output: JSONOutput>(_ i: IdentityRecord, to o: inout Output) {
        o.beginObject(reservingCapacity: 9)
        o.member("identity_id", i.id)
        o.member("id", i.providerID)
        o.member("user_id", i.userID)
        // The email comes from the generated column when the record was read from the store;
        // then the data itself is needed only as JSON, which can be copied as stored.
        var email = i.email
        if email == nil || i.identityData == "{}" || !o.member("identity_data", sortedObjectText: i.identityData) {
            let data = sortedObject(i.identityData)
            if !data.isEmpty { o.member("identity_data", .object(data)) }
            if email == nil { email = data["email"]?.stringValue?.lowercased() }
        }
        o.member("provider", i.provider)
        if let t = i.lastSignInAt { time("last_sign_in_at", t, &o) }
        time("created_at", i.createdAt, &o)
        time("updated_at", i.updatedAt, &o)
        if let email, !email.isEmpty { o.member("email", email) }
        o.endObject()
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

    /// `User.ClearAllPendingTokens`, when another address replaces the user's email (an identity
    /// unlinked): every pending token, and the pending email and phone changes themselves, were
    /// asked for under the old address and are void (`new_email` and `new_phone` disappear, and
    /// `/resend` of an email change has nothing to send).
    mutating func clearAllPendingTokens() {
        forgetPendingTokens()
        emailChange = nil
        emailChangeConfirmStatus = 0
        phoneChange = nil
    }

    /// `User.ConfirmEmailChange`: the new address replaces the old, the change's tokens and
    /// status are cleared, and an anonymous user is one no more.
    mutating func confirmEmailChange(to email: String, at now: Int64) {
        isAnonymous = false
        self.email = email
        emailChange = nil
        emailChangeTokenCurrent = nil
        emailChangeTokenNew = nil
        emailChangeConfirmStatus = 0
        updatedAt = now
    }
}
