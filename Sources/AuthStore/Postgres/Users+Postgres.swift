import GoFormats

/// `auth.users` in Postgres mode, written as GoTrue writes it (`models.User`): `instance_id`
/// the nil uuid, the columns GoTrue models as plain Go strings '' rather than NULL, timestamps
/// as timestamptz, metadata as jsonb.
extension UserRecord {
    /// The columns GoTrue's `models.User` holds as non-pointer strings: never NULL in its rows.
    /// The store's records use nil for "none"; '' reads back as nil.
    /// In column order, so the first NULL found is the first GoTrue would fail to scan.
    static let goStringColumns: [String] = [
        "confirmation_token", "recovery_token", "email_change_token_new", "email_change",
        "email_change_token_current", "phone_change", "phone_change_token", "reauthentication_token",
    ]

    /// `values`' Postgres form, in `columns` order.
    var postgresValues: [SQLValue] {
        typealias A = PostgresArguments
        return [
            .text(id), .text(aud), .text(role), SQLValue(email), SQLValue(encryptedPassword),
            A.time(emailConfirmedAt), A.time(invitedAt), A.goString(confirmationToken),
            A.time(confirmationSentAt), A.goString(recoveryToken), A.time(recoverySentAt),
            A.goString(emailChangeTokenNew), A.goString(emailChange), A.time(emailChangeSentAt),
            A.goString(emailChangeTokenCurrent), SQLValue(emailChangeConfirmStatus), A.time(lastSignInAt),
            .text(appMetadata), .text(userMetadata), A.time(createdAt), A.time(updatedAt), SQLValue(phone),
            A.time(phoneConfirmedAt), A.goString(phoneChange), A.goString(phoneChangeToken),
            A.time(phoneChangeSentAt), A.time(bannedUntil), A.goString(reauthenticationToken),
            A.time(reauthenticationSentAt), SQLValue(isSSOUser), A.time(deletedAt), SQLValue(isAnonymous),
        ]
    }

    private static let columnList = layout.names.dropLast()  // without the generated confirmed_at

    static let postgresInsert = """
        INSERT INTO auth.users (instance_id, \(columnList.joined(separator: ", "))) VALUES ('\(PostgresArguments.instanceID)', \
        \(columnList.indices.map { "$\($0 + 1)" }.joined(separator: ", "))) RETURNING \(layout.list)
        """
    static let postgresUpdate = """
        UPDATE auth.users SET \(columnList.enumerated().dropFirst().map { "\($0.element) = $\($0.offset + 1)" }.joined(separator: ", ")) \
        WHERE id = $1
        """
    static let postgresSelect = "SELECT \(layout.list) FROM auth.users"

    /// A row of `auth.users`. A NULL in a column GoTrue scans into a plain string fails as the
    /// real server fails to load such a user (a row seeded by hand with SQL, auth#1940): with
    /// an error naming the column, which GoTrue reports as "Database error querying schema".
    init(postgresRow row: Row) throws(PostgresError) {
        for column in Self.goStringColumns where row[column] == .null {
            throw PostgresError(
                sqlstate: "22004", step: "read auth.users",
                message: "auth.users.\(column) is NULL in the row of user \(row["id"].stringValue ?? "?"); GoTrue cannot load it (write '' instead)")
        }
        self.init(row: row)
        if confirmationToken == "" { confirmationToken = nil }
        if recoveryToken == "" { recoveryToken = nil }
        if emailChangeTokenNew == "" { emailChangeTokenNew = nil }
        if emailChange == "" { emailChange = nil }
        if emailChangeTokenCurrent == "" { emailChangeTokenCurrent = nil }
        if phoneChange == "" { phoneChange = nil }
        if phoneChangeToken == "" { phoneChangeToken = nil }
        if reauthenticationToken == "" { reauthenticationToken = nil }
    }
}

extension PostgresConnection {
    /// Inserts and returns the row as stored: what a BEFORE INSERT trigger changed comes back
    /// (GoTrue reloads the user after `Create` for the same reason).
    func insertUser(_ user: UserRecord) throws(PostgresError) -> UserRecord {
        guard let row = try queryFirst(UserRecord.postgresInsert, user.postgresValues) else {
            // A BEFORE INSERT trigger that returns NULL skips the row without an error.
            throw PostgresError(sqlstate: "P0001", step: "insert auth.users",
                                message: "a BEFORE INSERT trigger on auth.users skipped the row (returned NULL)")
        }
        return try UserRecord(postgresRow: row)
    }

    func updateUser(_ user: UserRecord) throws(PostgresError) {
        try execute(UserRecord.postgresUpdate, user.postgresValues)
    }

    func updateUserLastSignIn(id: String, lastSignInAt: Int64?, updatedAt: Int64) throws(PostgresError) {
        try execute("UPDATE auth.users SET last_sign_in_at = $1, updated_at = $2 WHERE id = $3",
                    PostgresArguments.time(lastSignInAt), PostgresArguments.time(updatedAt), .text(id))
    }

    func firstUser(_ condition: String, _ arguments: [SQLValue]) throws(PostgresError) -> UserRecord? {
        try queryFirst("\(UserRecord.postgresSelect) WHERE \(condition) LIMIT 1", arguments).map { row throws(PostgresError) in
            try UserRecord(postgresRow: row)
        }
    }

    func user(id: String) throws(PostgresError) -> UserRecord? {
        guard UUIDText.isValid(id) else { return nil }
        return try firstUser("id = $1", [.text(id)])
    }

    func userExists(_ condition: String, _ value: String, aud: String, excluding id: String?) throws(PostgresError) -> Bool {
        let excluded = id.flatMap { UUIDText.isValid($0) ? $0 : nil }
        return try scalar(
            "SELECT EXISTS (SELECT 1 FROM auth.users WHERE \(condition) AND aud = $2 AND ($3::uuid IS NULL OR id <> $3::uuid))",
            .text(value), .text(aud), SQLValue(excluded)
        ).int64Value == 1
    }

    func userIDs(emails: [String]) throws(PostgresError) -> [String] {
        try query("SELECT id FROM auth.users WHERE lower(email) = ANY($1::text[]) AND is_sso_user = false ORDER BY created_at, id",
                  .postgresTextArray(emails.map { $0.lowercased() }))
            .compactMap { $0.string("id") }
    }
}
