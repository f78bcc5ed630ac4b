import AuthEmulatorTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux
#endif

/// The requests an app's auth layer sends, over URLSession, with the headers supabase-swift adds
/// (`apikey`, a bearer, `X-Supabase-Api-Version`), so a reply has the shape the app would get.
/// With supabase-swift in the test target, `SupabaseClient(supabaseURL:supabaseKey:)` built from
/// the same emulator replaces it (docs/swift-testing.md).
struct AuthAPI {
    let emulator: Emulator
    /// One session per test: pooled connections never outlive the emulator they went to.
    private let session = URLSession(configuration: .ephemeral)

    init(_ emulator: Emulator) {
        self.emulator = emulator
    }

    struct Reply {
        let response: HTTPURLResponse
        let body: Data

        var status: Int { response.statusCode }
        func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return try decoder.decode(type, from: body)
        }

        /// GoTrue's error of the 2024-01-01 API version: `{"code": "...", "message": "..."}`.
        var error: APIError? { try? decode(APIError.self) }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct APIError: Decodable, Equatable {
        let code: String
        let message: String
    }

    struct Session: Decodable {
        let accessToken: String
        let refreshToken: String
        let user: User
    }

    struct User: Decodable {
        let id: String
        let email: String?
        let emailConfirmedAt: String?
        let userMetadata: Metadata?
    }

    struct Metadata: Decodable {
        let firstName: String?
    }

    /// One captured email of `GET /emulator/v1/outbox`.
    struct Message: Decodable {
        let type: String
        let to: String
        let otp: String?
        let tokenHash: String?
        let actionLink: String?
    }

    func send(_ method: String, _ path: String, json: [String: Any]? = nil, key: String? = nil,
              bearer: String? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: emulator.authURL + path)!)
        request.httpMethod = method
        let key = key ?? emulator.anonKey
        request.setValue(key, forHTTPHeaderField: "apikey")
        request.setValue("Bearer \(bearer ?? key)", forHTTPHeaderField: "Authorization")
        request.setValue("2024-01-01", forHTTPHeaderField: "X-Supabase-Api-Version")
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        let (data, response) = try await session.data(for: request)
        return Reply(response: response as! HTTPURLResponse, body: data)
    }

    func signUp(email: String, password: String, firstName: String? = nil) async throws -> Reply {
        var body: [String: Any] = ["email": email, "password": password]
        if let firstName { body["data"] = ["first_name": firstName] }
        return try await send("POST", "/signup", json: body)
    }

    func signIn(email: String, password: String) async throws -> Reply {
        try await send("POST", "/token?grant_type=password", json: ["email": email, "password": password])
    }

    func refresh(_ refreshToken: String) async throws -> Reply {
        try await send("POST", "/token?grant_type=refresh_token", json: ["refresh_token": refreshToken])
    }

    /// The newest email captured for `address` (the emulator's outbox; nothing is sent).
    func latestMail(to address: String, type: String) async throws -> Message? {
        var components = URLComponents(string: "/emulator/v1/outbox")!
        components.queryItems = [URLQueryItem(name: "to", value: address), URLQueryItem(name: "type", value: type)]
        // `+` in an address must reach the server as %2B, not as a space.
        let query = components.percentEncodedQuery!.replacingOccurrences(of: "+", with: "%2B")
        let reply = try await send("GET", "/emulator/v1/outbox?" + query, key: emulator.serviceRoleKey)
        guard reply.status == 200 else { throw URLError(.badServerResponse) }
        return try reply.decode([Message].self).first
    }

    /// Activates a failure scenario (scenarios/README.md): its rules answer in GoTrue's place.
    func activate(scenario: String) async throws {
        var request = URLRequest(url: URL(string: emulator.url + "/emulator/v1/scenarios")!)
        request.httpMethod = "POST"
        request.setValue(emulator.serviceRoleKey, forHTTPHeaderField: "apikey")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(scenario.utf8)
        let (data, response) = try await session.data(for: request)
        let status = (response as! HTTPURLResponse).statusCode
        guard status == 201 else {
            throw URLError(.badServerResponse, userInfo: ["body": String(decoding: data, as: UTF8.self)])
        }
    }
}
