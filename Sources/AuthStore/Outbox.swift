/// A message the emulator captured instead of sending: every email and SMS the real server would
/// hand to its mailer or SMS provider lands in `emulator_outbox`, so a test in another process
/// can read the code or link from the same database file.
public struct OutboxRecord: Sendable, Equatable {
    public var id: String
    /// `email` or `sms`.
    public var channel: String
    /// The address or (digits-only) phone number the message went to.
    public var recipient: String
    /// The mail action (`signup`, `invite`, `magiclink`, `recovery`, `email_change`,
    /// `reauthentication`) or SMS purpose (`sms`, `phone_change`, `reauthentication`).
    public var type: String
    public var subject: String = ""
    public var bodyHTML: String = ""
    public var bodyText: String = ""
    public var otp: String = ""
    /// The stored token hash the link carries (with its `pkce_` prefix in PKCE flows).
    public var tokenHash: String = ""
    public var actionLink: String = ""
    public var redirectTo: String = ""
    public var userID: String?
    /// Unix microseconds.
    public var sentAt: Int64

    public init(id: String, channel: String, recipient: String, type: String, sentAt: Int64) {
        self.id = id
        self.channel = channel
        self.recipient = recipient
        self.type = type
        self.sentAt = sentAt
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        channel = row.string("channel") ?? ""
        recipient = row.string("recipient") ?? ""
        type = row.string("type") ?? ""
        subject = row.string("subject") ?? ""
        bodyHTML = row.string("body_html") ?? ""
        bodyText = row.string("body_text") ?? ""
        otp = row.string("otp") ?? ""
        tokenHash = row.string("token_hash") ?? ""
        actionLink = row.string("action_link") ?? ""
        redirectTo = row.string("redirect_to") ?? ""
        userID = row.string("user_id")
        sentAt = row.int64("sent_at") ?? 0
    }
}

extension Connection {
    public func insertOutboxMessage(_ m: OutboxRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertOutboxMessage(m) } }
        try execute(
            """
            INSERT INTO emulator_outbox (id, channel, recipient, type, subject, body_html, body_text, otp, token_hash,
                                         action_link, redirect_to, user_id, sent_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(m.id), .text(m.channel), .text(m.recipient), .text(m.type), .text(m.subject), .text(m.bodyHTML),
            .text(m.bodyText), .text(m.otp), .text(m.tokenHash), .text(m.actionLink), .text(m.redirectTo),
            SQLValue(m.userID), .integer(m.sentAt)
        )
    }

    /// Newest first. `recipient` compares case-insensitively (addresses are stored lowercased,
    /// a test may not have typed them so); nil filters match everything.
    public func outboxMessages(recipient: String? = nil, type: String? = nil, limit: Int? = nil) throws(StoreError) -> [OutboxRecord] {
        if let postgres {
            return try postgres.store { try $0.outboxMessages(recipient: recipient, type: type, limit: limit) }
        }
        var sql = "SELECT * FROM emulator_outbox WHERE 1 = 1"
        var arguments: [SQLValue] = []
        if let recipient {
            sql += " AND recipient = lower(?)"
            arguments.append(.text(recipient))
        }
        if let type {
            sql += " AND type = ?"
            arguments.append(.text(type))
        }
        sql += " ORDER BY seq DESC"
        if let limit {
            sql += " LIMIT ?"
            arguments.append(.integer(Int64(limit)))
        }
        return try query(sql, arguments).map(OutboxRecord.init(row:))
    }

    /// Deletes every captured message; returns how many there were.
    @discardableResult
    public func clearOutbox() throws(StoreError) -> Int {
        if let postgres { return try postgres.store { try $0.clearOutbox() } }
        try execute("DELETE FROM emulator_outbox")
        return changes
    }
}
