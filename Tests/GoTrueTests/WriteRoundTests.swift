import AuthJSON
import AuthStore
import Synchronization
import Testing
@testable import GoTrue

// Design §4: a write may run in rounds (`WriteRounds`); what it produces outside the database
// goes through its round's `WriteRound`, published only for the round that commits. The suite
// also runs with `AUTH_EMULATOR_WRITES_TWICE=1` (scripts/test), where every write's first
// completed round is thrown away: these tests hold in both modes.

@Suite struct WriteRoundTests {
    /// The rounds a write without hooks runs: one, or two under the test switch.
    private var roundsWithoutHooks: Int { WriteRounds.writesTwice ? 2 : 1 }

    @Test func onlyTheCommittedRoundIsPublished() throws {
        let api = try makeAPI()
        let core = Core(project: api.project)
        let published = Mutex<[String]>([])
        api.project.outbox.onMessage { message in published.withLock { $0.append(message.id) } }
        let runs = Mutex(0)
        let committed: Int = try core.write { _, round in
            let run = runs.withLock { count in
                count += 1
                return count
            }
            round.send(OutboxRecord(id: "round-\(run)", channel: "email", recipient: "r@example.com", type: "signup", sentAt: 0))
            return run
        }
        #expect(runs.withLock { $0 } == roundsWithoutHooks)
        #expect(committed == roundsWithoutHooks)
        #expect(published.withLock { $0 } == ["round-\(committed)"])
    }

    /// Postgres mode: a write Postgres ended as a deadlock victim (40P01) runs again, alone, up
    /// to `Core.conflictRetries` times; only its committed run is published. Past that, GoTrue's
    /// 500. The conflict is raised by the closure here, as the store would raise it, bare or as
    /// a call site names its failure (`whenDatabaseFails`: "Error updating user").
    @Test(arguments: [2, Core.conflictRetries + 1], [false, true])
    func aDeadlockVictimRunsAgain(conflicts: Int, named: Bool) throws {
        let api = try makeAPI()
        let published = Mutex<[String]>([])
        api.project.outbox.onMessage { message in published.withLock { $0.append(message.id) } }
        let runs = Mutex(0)
        let deadlock = StoreError(PostgresError(sqlstate: "40P01", step: "execute", message: "deadlock detected"))
        #expect(deadlock.isTransactionConflict)
        #expect(!StoreError(PostgresError(sqlstate: "23505", step: "execute", message: "duplicate key")).isTransactionConflict)
        let outcome = Result { () throws(AuthError) -> Int in
            try Core(project: api.project).write { _, round in
                let run = runs.withLock { count in
                    count += 1
                    return count
                }
                round.send(OutboxRecord(id: "run-\(run)", channel: "email", recipient: "r@example.com", type: "signup", sentAt: 0))
                if run <= conflicts {
                    if named { try AuthError.whenDatabaseFails("Error updating user") { throw deadlock } }
                    throw deadlock
                }
                return run
            }
        }
        if conflicts <= Core.conflictRetries {
            let committed = try outcome.get()
            // The switch's thrown-away round comes on top of the conflicts.
            #expect(committed == conflicts + roundsWithoutHooks)
            #expect(published.withLock { $0 } == ["run-\(committed)"])
        } else {
            #expect(throws: AuthError.self) { try outcome.get() }
            #expect((try? outcome.get()) == nil)
            if case .failure(let error) = outcome {
                #expect(error.status == 500)
                #expect(error.message == (named ? "Error updating user" : "Database error"))
            }
            #expect(runs.withLock { $0 } == Core.conflictRetries + 1)
            #expect(published.withLock { $0 } == [])
        }
    }

    @Test func aRoundThatFailsPublishesNothing() throws {
        let api = try makeAPI()
        let published = Mutex(0)
        api.project.outbox.onMessage { _ in published.withLock { $0 += 1 } }
        #expect(throws: AuthError.self) {
            try Core(project: api.project).write { _, round in
                round.send(OutboxRecord(id: "lost", channel: "email", recipient: "r@example.com", type: "signup", sentAt: 0))
                throw AuthError(422, .validationFailed, "refused")
            }
        }
        #expect(published.withLock { $0 } == 0)
    }

    /// A round thrown away (`writesTwice`) is rolled back and the next one replays its clock
    /// and random draws, as a round that stopped at a hook call.
    @Test func aRehearsalIsRolledBackAndReplayed() throws {
        let rounds = WriteRounds(rehearsing: true)
        let live = Mutex<Int64>(0)
        func draw() -> Timestamp {
            rounds.time { Timestamp(microseconds: live.withLock { value in value += 1; return value }) }
        }
        #expect(throws: AuthError.self) { try rounds.round { draw() } }
        #expect(rounds.takeRehearsal())
        #expect(rounds.takePending() == nil)
        #expect(try rounds.round { draw() } == Timestamp(microseconds: 1))
        #expect(!rounds.takeRehearsal())
        #expect(live.withLock { $0 } == 1)
    }

    /// Sign-up with a send-email hook: the round that reaches the hook is rolled back, the hook
    /// is called once, and the observer hears once of the message the committed round stored,
    /// whose code is the one the hook was given.
    @Test func aMessageIsSentOnceWhateverTheRounds() throws {
        let server = FakeHookServer { _ in FakeHookServer.json([:]) }
        let api = try hookAPI(server, \.sendEmail) { $0.mailer.autoconfirm = false }
        let published = Mutex<[OutboxRecord]>([])
        api.project.outbox.onMessage { message in published.withLock { $0.append(message) } }
        #expect(api.call("POST", "/signup", ["email": "rounds@example.com", "password": "password1"]).status == 200)
        #expect(server.received.count == 1)
        let heard = published.withLock { $0 }
        #expect(heard.count == 1)
        #expect(heard.first == (try api.latestMessage(to: "rounds@example.com")))
        #expect(heard.first?.otp == server.received.first?.json["email_data"]?["token"]?.stringValue)
        #expect(try api.messages(to: "rounds@example.com").count == 1)
    }

    /// The values a response is built from come from the committed round: a link verified by
    /// GET as `email` names in its redirect the type the committed round found (`signup`).
    @Test func theResponseIsTheCommittedRounds() throws {
        let api = try makeAPI { $0.mailer.autoconfirm = false }
        #expect(api.call("POST", "/otp", ["email": "link@example.com"]).status == 200)
        let message = try #require(try api.latestMessage(to: "link@example.com"))
        let verified = api.call("GET", "/verify?type=email&token=\(message.tokenHash)")
        #expect(verified.status == 303)
        let location = verified.headers["Location"] ?? ""
        #expect(location.contains("access_token="))
        #expect(location.contains("&type=signup"), "\(location)")
    }
}
