import AuthHTTP
import AuthJSON
import AuthPlatform
import Dispatch
import Synchronization
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// Concurrent `POST /admin/users` for one email, answered as GoTrue answers them
/// (internal/api/admin.go `adminUserCreate`): its `IsDuplicatedEmail` check runs before the
/// transaction, so a request that checks before another's insert commits passes it, and its
/// own insert then meets `users_email_partial_key`; that error leaves the transaction as the 500
/// "Database error creating new user", whose body in the initial API version is the database
/// error itself (`utilities.NewPostgresError`). So each loser gets either the 422
/// `email_exists` or that 500, and never does a second user appear.
@Suite struct AdminCreateRaceTests {
    @Test func concurrentCreatesForOneEmailMakeOneUser() throws {
        let api = try makeAPI()
        let rounds = 20, threads = 8
        for round in 0..<rounds {
            let email = "race\(round)@example.com"
            let gate = DispatchSemaphore(value: 0)
            let responses = Mutex<[HTTPResponse]>([])
            let spawned = try (0..<threads).map { _ in
                try Threads.spawn(name: "admin-create", stackSize: 1 << 20) {
                    gate.wait()
                    let response = api.admin("POST", "/admin/users", ["email": .string(email), "password": "password1"])
                    responses.withLock { $0.append(response) }
                }
            }
            for _ in 0..<threads { gate.signal() }
            for thread in spawned { thread.join() }
            let answers = responses.withLock { $0 }
            #expect(answers.filter { $0.status == 200 }.count == 1, "round \(round): \(answers.map(\.status))")
            for answer in answers where answer.status != 200 {
                let code = answer.json["error_code"]?.stringValue
                let message = answer.json["msg"]?.stringValue
                let lostTheCheck = answer.status == 422 && code == "email_exists"
                    && message == "A user with this email address has already been registered"
                let lostTheInsert = answer.status == 500 && answer.headers["x-sb-error-code"] == "unexpected_failure"
                    && answer.text == #"{"code":"23505","message":"duplicate key value violates unique constraint \"users_email_partial_key\"","#
                    + #""detail":"Key (email)=(\#(email)) already exists."}"#
                #expect(lostTheCheck || lostTheInsert, "round \(round): \(answer.status) \(answer.text)")
            }
        }
        #expect(api.admin("GET", "/admin/users").headers["X-Total-Count"] == String(rounds))
    }
}
