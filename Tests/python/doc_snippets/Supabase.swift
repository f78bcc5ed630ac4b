// What the docs' Swift examples get for `import Supabase` when the suite runs them.
//
// supabase-swift is not a dependency of this package, so this file stands in for the few calls
// the examples make, each sending the request supabase-swift sends for it (same route under
// /auth/v1, apikey and bearer headers, JSON body fields). An example's own code (its requests,
// percent-encoding, decoding and error handling) then runs against the emulator as written. It
// proves nothing about supabase-swift itself; the real-client tests do that with supabase-py,
// whose requests are the same.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct StandInAuthError: Error, CustomStringConvertible {
    let status: Int
    let body: String
    var description: String { "HTTP \(status): \(body)" }
}

enum EmailOTPType: String { case signup, invite, magiclink, recovery, email_change, email }

struct StandInAuth {
    let url: URL
    let key: String

    private func post(_ path: String, _ body: [String: Any]) async throws -> Data {
        var request = URLRequest(url: url.appendingPathComponent("auth/v1").appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue(key, forHTTPHeaderField: "apikey")
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("2024-01-01", forHTTPHeaderField: "X-Supabase-Api-Version")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw StandInAuthError(status: status, body: String(decoding: data, as: UTF8.self)) }
        return data
    }

    func signInWithOTP(email: String, shouldCreateUser: Bool = true) async throws {
        _ = try await post("otp", ["email": email, "create_user": shouldCreateUser, "data": [String: Any](),
                                   "gotrue_meta_security": [String: Any]()])
    }

    @discardableResult
    func verifyOTP(email: String, token: String, type: EmailOTPType) async throws -> [String: Any] {
        let data = try await post("verify", ["email": email, "token": token, "type": type.rawValue,
                                             "gotrue_meta_security": [String: Any]()])
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

struct SupabaseClient {
    let auth: StandInAuth
    init(supabaseURL: URL, supabaseKey: String) {
        auth = StandInAuth(url: supabaseURL, key: supabaseKey)
    }
}
