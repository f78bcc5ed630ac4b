import AuthHTTP
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected bodies follow the real server's renderer (internal/api/errors.go) and reference §4.
@Suite struct AuthErrorTests {
    let error = AuthError(400, .validationFailed, "An email address is required")

    @Test func initialFormat() {
        let response = error.response(apiVersion: .initial, requestID: "rid")
        #expect(response.status == 400)
        #expect(response.text == #"{"code":400,"error_code":"validation_failed","msg":"An email address is required"}"#)
        #expect(response.headers["x-sb-error-code"] == "validation_failed")
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["X-Supabase-Api-Version"] == nil)
    }

    @Test func format20240101EchoesVersion() {
        let response = error.response(apiVersion: .v20240101, requestID: "rid")
        #expect(response.text == #"{"code":"validation_failed","message":"An email address is required"}"#)
        #expect(response.headers["x-sb-error-code"] == "validation_failed")
        #expect(response.headers["X-Supabase-Api-Version"] == "2024-01-01")
    }

    @Test func serverErrorsCarryErrorIDOnlyInInitialFormat() {
        let e = AuthError(500, .unexpectedFailure, "Database error saving new user")
        #expect(e.response(apiVersion: .initial, requestID: "abc").text
            == #"{"code":500,"error_code":"unexpected_failure","msg":"Database error saving new user","error_id":"abc"}"#)
        #expect(e.response(apiVersion: .v20240101, requestID: "abc").text
            == #"{"code":"unexpected_failure","message":"Database error saving new user"}"#)
    }

    @Test func missingCodeIsFilledButNoHeader() {
        let panic = AuthError.internalServerError.response(apiVersion: .initial, requestID: "r1")
        #expect(panic.text == #"{"code":500,"error_code":"unexpected_failure","msg":"Internal Server Error","error_id":"r1"}"#)
        #expect(panic.headers["x-sb-error-code"] == nil)
        let other = AuthError(404, nil, "Not Found").response(apiVersion: .v20240101, requestID: "")
        #expect(other.text == #"{"code":"unknown","message":"Not Found"}"#)
        #expect(other.headers["x-sb-error-code"] == nil)
    }

    /// `getHttpStatusCodeFromPostgresErrorCode`: `PT000` is status 0, not public, so the plain
    /// named 500; a status below 100 makes `WriteHeader` panic, answered by the recoverer.
    @Test func postgresStatusCodesOutsideHTTP() {
        func failure(_ sqlstate: String) -> HTTPResponse {
            let store = StoreError(AuthStore.PostgresError(sqlstate: sqlstate, step: "execute", message: "nope"))
            return AuthError.databaseFailure("Database error saving new user", store).response(apiVersion: .initial, requestID: "r")
        }
        let zero = failure("PT000")
        #expect(zero.status == 500)
        #expect(zero.text == #"{"code":500,"error_code":"unexpected_failure","msg":"Database error saving new user","error_id":"r"}"#)
        let negative = failure("PT-12")
        #expect(negative.status == 500)
        #expect(negative.text == #"{"code":500,"error_code":"unexpected_failure","msg":"Internal Server Error","error_id":"r"}"#)
        let conflict = failure("PT409")
        #expect(conflict.status == 409)
        #expect(conflict.text == #"{"code":"PT409","message":"nope"}"#)
    }

    @Test func unhandledErrors() {
        let initial = AuthError.unexpected.response(apiVersion: .initial, requestID: "r")
        #expect(initial.status == 500)
        #expect(initial.text
            == #"{"code":500,"error_code":"unexpected_failure","msg":"Unexpected failure, please check server logs for more information"}"#)
        #expect(initial.headers["x-sb-error-code"] == nil)
        #expect(AuthError.unexpected.response(apiVersion: .v20240101, requestID: "r").text
            == #"{"code":"unexpected_failure","message":"Unexpected failure, please check server logs for more information"}"#)
    }

    @Test func weakPassword() {
        let e = AuthError.weakPassword("Password should be at least 8 characters.", reasons: ["length"])
        let initial = e.response(apiVersion: .initial, requestID: "")
        #expect(initial.status == 422)
        #expect(initial.text
            == #"{"code":422,"error_code":"weak_password","msg":"Password should be at least 8 characters.","weak_password":{"reasons":["length"]}}"#)
        #expect(initial.headers["x-sb-error-code"] == "weak_password")
        let dated = e.response(apiVersion: .v20240101, requestID: "")
        #expect(dated.text
            == #"{"code":"weak_password","message":"Password should be at least 8 characters.","weak_password":{"reasons":["length"]}}"#)
        #expect(dated.headers["x-sb-error-code"] == nil)
    }

    @Test func oauthErrorsAreAlways400WithoutCodeHeader() {
        let e = AuthError.oauth("invalid request", "Bad ID token")
        let response = e.response(apiVersion: .v20240101, requestID: "")
        #expect(response.status == 400)
        #expect(response.text == #"{"error":"invalid request","error_description":"Bad ID token"}"#)
        #expect(response.headers["x-sb-error-code"] == nil)
        #expect(response.headers["X-Supabase-Api-Version"] == "2024-01-01")
    }

    @Test func extraHeadersSurvive() {
        var e = AuthError(429, .overRequestRateLimit, "Request rate limit reached")
        e.headers["Retry-After"] = "30"
        let response = e.response(apiVersion: .initial, requestID: "")
        #expect(response.headers["Retry-After"] == "30")
        #expect(response.status == 429)
    }

    @Test func goStyleEscapingInMessages() {
        let e = AuthError(400, .validationFailed, "Unsupported logout scope \"<x>&\"")
        #expect(e.response(apiVersion: .v20240101, requestID: "").text
            == #"{"code":"validation_failed","message":"Unsupported logout scope \"\u003cx\u003e\u0026\""}"#)
    }

    @Test(arguments: [
        ("", APIVersion.initial), ("2024-01-01", .v20240101), ("2025-06-30", .v20240101),
        ("2023-12-31", .initial), ("2024-1-01", .initial), ("2024-02-30", .initial),
        ("2024-01-01 ", .initial), ("garbage", .initial), ("2024-13-01", .initial), ("2028-02-29", .v20240101),
    ])
    func apiVersionParsing(header: String, expected: APIVersion) {
        #expect(APIVersion(headerValue: header) == expected)
    }

    @Test func everyCodeIsDistinctAndSnakeCase() {
        #expect(Set(ErrorCode.all).count == ErrorCode.all.count)
        #expect(ErrorCode.all.count == 109)  // internal/api/apierrors/errorcode.go at v2.196.0
        for code in ErrorCode.all {
            #expect(code.rawValue.allSatisfy { $0 == "_" || $0.isLowercase || $0.isNumber }, "\(code)")
        }
        #expect(ErrorCode.userAlreadyExists.rawValue == "user_already_exists")
        #expect(ErrorCode.overRequestRateLimit.rawValue == "over_request_rate_limit")
    }
}
