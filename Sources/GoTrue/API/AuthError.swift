import AuthHTTP
import AuthJSON
import AuthStore

/// The one error type every GoTrue endpoint throws. It is rendered in exactly one place
/// (`AuthError.response(apiVersion:requestID:)`) so that every failure, including ones produced by
/// failure scenarios, has the real server's status, body shape and headers.
public struct AuthError: Error, Sendable, Equatable {
    /// The three response families of the real server (`internal/api/errors.go`).
    public enum Kind: Sendable, Equatable {
        /// `HTTPError`: status + `error_code` + message.
        case http
        /// `WeakPasswordError`: always 422 `weak_password`, with a `weak_password.reasons` list.
        case weakPassword(reasons: [String])
        /// `OAuthError`: always HTTP 400 with `{"error", "error_description"}`, no code header.
        case oauth(error: String)
        /// A non-HTTP failure (database, bug): 500 `unexpected_failure`, no code header.
        case unexpected
        /// An `HTTPError` wrapping a Postgres error that GoTrue shows its client
        /// (`utilities.NewPostgresError`: constraint violations, raised exceptions): in the
        /// initial API version the body is the database error itself, with its SQLSTATE.
        case postgres(PostgresError)
    }

    /// The body `utilities.PostgresError` marshals to: `code`, `message`, then `hint` and
    /// `detail` when not empty.
    public struct PostgresError: Sendable, Equatable {
        public var code: String
        public var message: String
        public var detail: String = ""
        public var hint: String = ""

        /// Postgres' own words for a unique index that refused a value (SQLSTATE 23505).
        public static func uniqueViolation(index: String, column: String, value: String) -> PostgresError {
            PostgresError(code: "23505", message: "duplicate key value violates unique constraint \"\(index)\"",
                          detail: "Key (\(column))=(\(value)) already exists.")
        }
    }

    /// `NewInternalServerError(message).WithInternalError(err)` for a store failure at a GoTrue
    /// call site that names its own message ("Database error saving new user", "... deleting
    /// user", ...). An `AuthError` passes unchanged. A Postgres error GoTrue shows its client in
    /// the initial API version (`utilities.NewPostgresError`: a raised exception, a constraint
    /// violation, a `PTnnn` code) keeps its SQLSTATE, message, detail and hint for that body;
    /// every cause is kept as `internalError`.
    package static func databaseFailure(_ message: String, _ error: any Error) -> AuthError {
        if let auth = error as? AuthError { return auth }
        var failure = AuthError(500, .unexpectedFailure, message)
        if let store = error as? StoreError {
            if store.isNotInPostgresMode {
                // Not a database failure: the emulator lacks the feature in this mode. One clear
                // answer naming the mode rather than GoTrue's 500 (which would look like a bug).
                var missing = AuthError(501, .featureDisabled, "Not available in Postgres mode yet (docs/postgres.md lists what is)")
                missing.internalError = store.message
                return missing
            }
            if let postgres = store.postgres, Self.publicStatus(sqlstate: postgres.sqlstate) != nil {
                failure.kind = .postgres(PostgresError(code: postgres.sqlstate, message: postgres.message,
                                                       detail: postgres.detail ?? "", hint: postgres.hint ?? ""))
            }
            failure.internalError = store.message
            failure.isTransactionConflict = store.isTransactionConflict
        } else {
            failure.internalError = "\(error)"
        }
        return failure
    }

    /// Runs a step of a GoTrue call site that names its database failure: a store failure in
    /// `body` becomes that 500 (`databaseFailure`); an `AuthError` passes, except with
    /// `rewrapping`, for a site that answers every failure of its transaction with
    /// `NewInternalServerError(message).WithInternalError(err)` (anonymous sign-in, admin
    /// create): then any error becomes that 500, a hook's refusal or an inner site's named
    /// failure ("... saving new user") too, keeping a Postgres error's own answer.
    /// With `writing`, the step writes that user's row (`userWriteFailure`).
    package static func whenDatabaseFails<T>(_ message: String, rewrapping: Bool = false, writing user: UserRecord? = nil,
                                             _ body: () throws -> T) throws(AuthError) -> T {
        do {
            return try body()
        } catch let error as AuthError {
            guard rewrapping else { throw error }
            var wrapped = AuthError(500, .unexpectedFailure, message)
            wrapped.internalError = error.internalError ?? error.message
            if case .postgres = error.kind { wrapped.kind = error.kind }
            wrapped.isTransactionConflict = error.isTransactionConflict
            throw wrapped
        } catch {
            throw user.map { userWriteFailure(message, error, user: $0) } ?? databaseFailure(message, error)
        }
    }

    /// A store failure while writing `user`'s row (`signupNewUser`, adminUserCreate,
    /// adminUserUpdate, ...), as `databaseFailure`, except for a unique index of `users`: GoTrue
    /// looks for another account with the email only within the request's audience
    /// (`IsDuplicatedEmail`), and never for the id or (admin update) the phone, so Postgres'
    /// index refuses the row and the client sees that error in the initial API version
    /// (`utilities.NewPostgresError`). In Postgres mode the store's error is the database's own;
    /// SQLite's names the index or column but no value, and is worded here as Postgres words
    /// GoTrue's index, with the value being written.
    package static func userWriteFailure(_ message: String, _ error: any Error, user: UserRecord) -> AuthError {
        guard let store = error as? StoreError, store.postgres == nil, store.isUniqueViolation else {
            return databaseFailure(message, error)
        }
        let violation: PostgresError
        if store.message.contains("users_email_partial_key") {
            violation = .uniqueViolation(index: "users_email_partial_key", column: "email", value: user.email ?? "")
        } else if store.message.contains("users.phone") {
            violation = .uniqueViolation(index: "users_phone_key", column: "phone", value: user.phone ?? "")
        } else if store.message.contains("users.id") {
            violation = .uniqueViolation(index: "users_pkey", column: "id", value: user.id)
        } else {
            return databaseFailure(message, error)
        }
        var failure = AuthError.database(message, violation)
        failure.internalError = store.message
        return failure
    }

    /// `getHttpStatusCodeFromPostgresErrorCode`: 500 for a raised exception and the integrity
    /// violations, the number of a `PTnnn` code (PostgREST's convention), nil for the rest
    /// (which GoTrue does not show its client).
    /// `PT000` parses to 0, which is "no status": such an error stays private (the plain 500).
    static func publicStatus(sqlstate: String) -> Int? {
        guard sqlstate.utf8.count == 5 else { return nil }
        if ["P0001", "23000", "23001", "23502", "23503", "23505", "23514", "23P01"].contains(sqlstate) { return 500 }
        if sqlstate.hasPrefix("PT"), let status = Int(sqlstate.dropFirst(2)), status != 0 { return status }
        return nil
    }

    /// `NewInternalServerError(message).WithInternalError(pgErr)`.
    public static func database(_ message: String, _ postgres: PostgresError) -> AuthError {
        var e = AuthError(500, .unexpectedFailure, message)
        e.kind = .postgres(postgres)
        return e
    }

    public var status: Int
    public var code: ErrorCode?
    public var message: String
    public var kind: Kind
    /// GoTrue's `WithInternalError`: the cause a 500 keeps from its client (in Postgres mode
    /// the database's SQLSTATE, message, DETAIL, HINT and the app trigger's CONTEXT), for the
    /// emulator's log and the request journal's `database_error` (`HookLog.takeInternalError`).
    /// Never rendered.
    public var internalError: String? = nil
    /// The database failure behind it was Postgres ending the transaction so that another could
    /// go on (`StoreError.isTransactionConflict`): the write may run again
    /// (`Project.writeRerunningConflicts`), even after a call site named its failure.
    public var isTransactionConflict = false
    /// Made by `Core.storeFailure` for a database failure no call site named: where GoTrue's
    /// code returns such an error unwrapped, a plain Go error rather than an `HTTPError`
    /// (`GET /verify` drops those instead of redirecting with them).
    public var isUnnamedStoreFailure = false
    /// Extra response headers, e.g. `Retry-After` added by a failure scenario.
    public var headers: HTTPHeaders

    public init(_ status: Int, _ code: ErrorCode?, _ message: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.kind = .http
        self.headers = headers
    }

    public static func weakPassword(_ message: String, reasons: [String]) -> AuthError {
        var e = AuthError(422, .weakPassword, message)
        e.kind = .weakPassword(reasons: reasons)
        return e
    }

    public static func oauth(_ error: String, _ description: String) -> AuthError {
        var e = AuthError(400, nil, description)
        e.kind = .oauth(error: error)
        return e
    }

    /// What a Go `error` that is not an `HTTPError` becomes (`handleResponseErrorDefault`).
    public static let unexpected: AuthError = {
        var e = AuthError(500, .unexpectedFailure, unexpectedFailureMessage)
        e.kind = .unexpected
        return e
    }()

    /// `DuplicateEmailMsg` and `DuplicatePhoneMsg` (errors.go): the real server's texts for an
    /// address or number another user holds.
    public static let duplicateEmailMessage = "A user with this email address has already been registered"
    public static let duplicatePhoneMessage = "A user with this phone number has already been registered"
    /// `unprocessableEntityError(ErrorCodeEmailExists, DuplicateEmailMsg)`, as most handlers answer.
    static let duplicateEmail = AuthError(422, .emailExists, duplicateEmailMessage)

    /// What a panic becomes (`recoverer`): an `HTTPError` 500 with no code and the status text.
    public static let internalServerError = AuthError(500, nil, "Internal Server Error")

    /// `oauthErrorMap`: the OAuth error name redirects carry for an HTTP status (reference §4.3).
    static let oauthErrorNames = [400: "invalid_request", 401: "unauthorized_client", 403: "access_denied",
                                  500: "server_error", 503: "temporarily_unavailable"]

    public static let unexpectedFailureMessage =
        "Unexpected failure, please check server logs for more information"
}

/// `X-Supabase-Api-Version`: the request header that selects the error body format.
public enum APIVersion: Sendable, Equatable {
    /// No header, an earlier date, or an unparseable value (the real server logs and falls back).
    case initial
    /// Any `YYYY-MM-DD` date on or after 2024-01-01.
    case v20240101

    public static let headerName = "X-Supabase-Api-Version"

    /// GoTrue parses the value with Go's `2006-01-02` layout: exactly four-digit year, two-digit
    /// month and day, a real calendar date, nothing else around it.
    public init(headerValue: String?) {
        guard let value = headerValue, let date = CalendarDate(strict: value),
              date >= CalendarDate(year: 2024, month: 1, day: 1)
        else {
            self = .initial
            return
        }
        self = .v20240101
    }
}

/// A proleptic Gregorian date parsed strictly from `YYYY-MM-DD`.
struct CalendarDate: Comparable {
    var year: Int, month: Int, day: Int

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    init?(strict text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for b in bytes[range] {
                guard b >= 0x30, b <= 0x39 else { return nil }
                value = value * 10 + Int(b - 0x30)
            }
            return value
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10),
              (1...12).contains(m), d >= 1, d <= CalendarDate.daysIn(month: m, year: y)
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }
}

extension AuthError {
    /// Renders the error exactly as `HandleResponseError` does.
    /// - The version header is echoed (for every error kind) only when the request asked for
    ///   2024-01-01 or later; success responses never carry it.
    /// - `x-sb-error-code` is set only when the error carries a code, and never for weak-password
    ///   errors in the 2024-01-01 format.
    /// - The initial format adds `error_id` (the request id) to 5xx `HTTPError`s only.
    public func response(apiVersion: APIVersion, requestID: String) -> HTTPResponse {
        var headers = self.headers
        if apiVersion == .v20240101 {
            headers[APIVersion.headerName] = "2024-01-01"
        }
        var body = JSONObject()
        var status = self.status

        switch kind {
        case .weakPassword(let reasons):
            status = 422
            var payload = JSONObject()
            if !reasons.isEmpty { payload["reasons"] = .array(reasons.map { .string($0) }) }
            if apiVersion == .v20240101 {
                body["code"] = .string(ErrorCode.weakPassword.rawValue)
                body["message"] = .string(message)
            } else {
                headers["x-sb-error-code"] = ErrorCode.weakPassword.rawValue
                body["code"] = .number(422)
                body["error_code"] = .string(ErrorCode.weakPassword.rawValue)
                body["msg"] = .string(message)
            }
            body["weak_password"] = .object(payload)

        case .oauth(let error):
            status = 400
            body["error"] = .string(error)
            if !message.isEmpty { body["error_description"] = .string(message) }

        case .unexpected:
            status = 500
            if apiVersion == .v20240101 {
                body["code"] = .string(ErrorCode.unexpectedFailure.rawValue)
                body["message"] = .string(AuthError.unexpectedFailureMessage)
            } else {
                body["code"] = .number(500)
                body["error_code"] = .string(ErrorCode.unexpectedFailure.rawValue)
                body["msg"] = .string(AuthError.unexpectedFailureMessage)
            }

        case .postgres(let database) where apiVersion == .initial:
            // handleResponseErrorHTTP sets the code header, then sends the database's error
            // with its status (500 for every constraint violation, nnn for a `PTnnn` code).
            // A status `WriteHeader` refuses (`PT+99`, `PT-12`: below 100) panics, and the
            // recoverer answers its 500.
            if let shown = AuthError.publicStatus(sqlstate: database.code), !(100...999).contains(shown) {
                return AuthError.internalServerError.response(apiVersion: apiVersion, requestID: requestID)
            }
            if let code { headers["x-sb-error-code"] = code.rawValue }
            status = AuthError.publicStatus(sqlstate: database.code) ?? status
            body["code"] = .string(database.code)
            body["message"] = .string(database.message)
            if !database.hint.isEmpty { body["hint"] = .string(database.hint) }
            if !database.detail.isEmpty { body["detail"] = .string(database.detail) }

        case .http, .postgres:
            if let code { headers["x-sb-error-code"] = code.rawValue }
            let effective = code ?? (status == 500 ? .unexpectedFailure : .unknown)
            if apiVersion == .v20240101 {
                body["code"] = .string(effective.rawValue)
                body["message"] = .string(message)
            } else {
                body["code"] = .number(Double(status))
                body["error_code"] = .string(effective.rawValue)
                body["msg"] = .string(message)
                if status >= 500 { body["error_id"] = .string(requestID) }
            }
        }
        return .json(status: status, .object(body), headers: headers)
    }
}
