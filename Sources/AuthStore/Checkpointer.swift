import AuthPlatform
import CSQLite

/// Moves the WAL checkpoints of a file database off the write path.
///
/// SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past its threshold,
/// with the write lock held: it syncs the WAL, copies its frames into the database file, syncs
/// that, and only then returns. At 4,000 pages that was ~12 ms, mostly waiting for the disk
/// (strace: ~9.7 ms in the WAL's `fdatasync`, ~2.3 ms in the database's), during which no other
/// write could start: half of the COMMIT time under a refresh load, and a stall that every
/// waiting request felt in its latency.
///
/// Here a thread with a connection of its own runs PASSIVE checkpoints
/// (https://sqlite.org/c3ref/wal_checkpoint_v2.html), which copy frames and sync while writers
/// go on appending. PASSIVE checkpoints alone never let the WAL rewind under a steady write load:
/// SQLite restarts the WAL only when a write transaction begins with every frame already copied
/// (https://sqlite.org/wal.html, "Avoiding Excessively Large WAL Files"). So once the WAL is past
/// the threshold and a background pass asked for past it has finished, the writer runs the last
/// PASSIVE checkpoint itself, inside its COMMIT as SQLite's own would. That one copies only the
/// frames written during the background pass, and its syncs find little left to write. The WAL
/// then rewinds at the next write and stays as short as before.
///
/// Driven by the writer connection's WAL hook, which SQLite calls after every commit with the
/// WAL's length in frames (https://sqlite.org/c3ref/wal_hook.html). Installing the hook replaces
/// `wal_autocheckpoint`, whose role this takes over at the same threshold. The thread and its
/// connection start with the first pass, so a database that is barely written costs nothing.
///
/// When writes pause, the frames written since the last pass would stay in the WAL until the
/// next load, and every page a reader fetched would first be looked up in the WAL index
/// (`sqlite3WalFindFrame`, ~3 % of a `GET /user`). So once started, the thread also runs one
/// pass after `idleNanoseconds` without a commit, if frames are left. When that pass copies every
/// frame, readers skip the WAL entirely (SQLite reads through read-mark 0 then), and the next
/// write rewinds it.
final class Checkpointer: @unchecked Sendable {
    /// The WAL length (frames) at which the writer finishes a checkpoint itself: 16 MiB of WAL at
    /// 4 KiB pages. SQLite's default is 1,000; at 4,000 each hot page (index roots, the right
    /// edge of append-only tables) is copied once for more commits (bench/results/HISTORY.md).
    static let threshold: Int32 = 4000
    /// Below the threshold, a background pass starts whenever the WAL grew by this many frames
    /// since the last one was asked for, so the writer's final pass has little left to do.
    static let step: Int32 = 1000

    /// Opens the thread's connection, on the thread, at its first pass.
    private let open: @Sendable () throws(StoreError) -> Connection
    /// How long without a commit before the thread copies the frames left; nil: never.
    private let idleNanoseconds: UInt64?

    private let monitor = Monitor()
    // Guarded by `monitor`.
    private var thread: ThreadHandle?
    /// The thread could not start or open its connection: checkpoints are the writer's alone,
    /// at the threshold, as with SQLite's automatic checkpoint.
    private var unavailable = false
    /// The WAL length when the pass waiting to start was asked for.
    private var requested: Int32?
    private var running = false
    private var stopped = false
    /// The WAL length when the last pass was asked for, in this WAL generation.
    private var lastRequested: Int32 = 0
    /// The WAL length when the last finished pass was asked for, in this WAL generation.
    private var lastFinished: Int32 = 0
    /// The WAL length at the last commit; a smaller one means the WAL rewound.
    private var lastSeen: Int32 = 0
    /// Counts WAL rewinds, so a pass that straddled one does not count for the new WAL.
    private var generation = 0
    private var passes = 0
    private var writerPasses = 0
    private var idlePasses = 0
    /// Commits seen by the hook; a timed wait that finds it unchanged saw no commit. Counted,
    /// not told apart by WAL length: a WAL that rewound may reach the same length again.
    private var commits = 0
    /// The commits whose frames a pass reported all copied (`pnCkpt == pnLog`, no commit
    /// during the pass).
    private var copiedThrough = 0
    /// `commits` at the last idle pass: one per pause, not one per delay while a reader pins
    /// frames that no pass can copy yet.
    private var idleTriedAt: Int?
    /// The thread sleeps without a time limit (nothing was left to copy); the next commit
    /// wakes it so it can time the pause after it.
    private var dozing = false

    init(idleNanoseconds: UInt64? = nil, open: @escaping @Sendable () throws(StoreError) -> Connection) {
        self.idleNanoseconds = idleNanoseconds
        self.open = open
    }

    /// Passes asked for by commits and run by the thread, run by the writer, run by the thread
    /// when writes paused, and the WAL rewinds the hook saw.
    var passCounts: (background: Int, writer: Int, idle: Int, rewinds: Int) {
        monitor.withLock { (passes, writerPasses, idlePasses, generation) }
    }

    /// Commits so far, and those whose frames a pass copied in full (tests).
    var copyProgress: (commits: Int, copiedThrough: Int) {
        monitor.withLock { (commits, copiedThrough) }
    }

    /// Installs the hook on `writer`; from then on this object decides when it checkpoints.
    /// The hook holds `self` unretained: `uninstall` before this object goes away.
    func install(on writer: Connection) {
        sqlite3_wal_hook(writer.handle, { context, database, _, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue()
            if checkpointer.committed(frames: frames) {
                // SQLITE_BUSY when a background pass holds the checkpoint lock (a PASSIVE
                // checkpoint never waits); the next commit then asks again. Other failures
                // leave the WAL as it is, as a failed automatic checkpoint does.
                sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func uninstall(from writer: Connection) {
        sqlite3_wal_hook(writer.handle, nil, nil)
    }

    /// Called after each commit of the writer; true when the writer should checkpoint now.
    func committed(frames: Int32) -> Bool {
        monitor.withLock {
            if frames < lastSeen {
                // The WAL rewound: what the passes so far did belongs to the old one.
                generation &+= 1
                lastRequested = 0
                lastFinished = 0
            }
            lastSeen = frames
            commits &+= 1
            if dozing {
                dozing = false
                monitor.signal()
            }
            let writerCheckpoints = decide(frames)
            if writerCheckpoints { writerPasses += 1 }
            return writerCheckpoints
        }
    }

    /// Called with `monitor` held.
    private func decide(_ frames: Int32) -> Bool {
        if unavailable || stopped { return frames >= Self.threshold }
        // Past twice the threshold (passes that keep failing, say on I/O errors, or a load
        // that outruns them), the writer checkpoints as SQLite alone would; while a pass holds
        // the checkpoint lock its attempt returns at once, and the next commit tries again.
        if frames >= 2 * Self.threshold { return true }
        if requested != nil || running { return false }
        if frames >= Self.threshold {
            if lastFinished >= Self.threshold { return true }
            ask(frames)
            return unavailable  // no thread to ask
        }
        if frames >= lastRequested + Self.step { ask(frames) }
        return false
    }

    /// Called with `monitor` held.
    private func ask(_ frames: Int32) {
        requested = frames
        lastRequested = frames
        if thread == nil {
            do {
                thread = try Threads.spawn(name: "db-checkpoint", stackSize: 256 * 1024) { [self] in run() }
            } catch {
                requested = nil
                unavailable = true
            }
        } else {
            monitor.signal()
        }
    }

    private func run() {
        let connection: Connection
        do {
            connection = try open()
        } catch {
            monitor.withLock {
                unavailable = true
                requested = nil
            }
            return
        }
        defer { connection.close() }
        monitor.lock()
        defer { monitor.unlock() }
        var idle = false
        while !stopped {
            guard let frames = requested else {
                guard let idleNanoseconds, framesLeft else {
                    dozing = true
                    monitor.wait()
                    dozing = false
                    continue
                }
                let seen = commits
                if !monitor.wait(nanoseconds: idleNanoseconds), !stopped, requested == nil,
                   commits == seen, framesLeft {
                    idleTriedAt = commits
                    requested = lastSeen
                    idle = true
                }
                continue
            }
            requested = nil
            running = true
            let passGeneration = generation
            let passCommits = commits
            monitor.unlock()

            var walFrames: Int32 = 0, copiedFrames: Int32 = 0
            let result = sqlite3_wal_checkpoint_v2(
                connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &walFrames, &copiedFrames)

            monitor.lock()
            running = false
            if idle { idlePasses += 1 } else { passes += 1 }
            idle = false
            // SQLITE_BUSY: the writer was checkpointing; the next commit asks again.
            if result == SQLITE_OK && passGeneration == generation { lastFinished = frames }
            if result == SQLITE_OK && walFrames == copiedFrames && commits == passCommits {
                copiedThrough = passCommits
            }
        }
    }

    /// Called with `monitor` held: commits whose frames no pass copied in full, and no idle
    /// pass tried since the last of them.
    private var framesLeft: Bool {
        commits > copiedThrough && idleTriedAt != commits
    }

    /// Lets the pass under way finish, then stops the thread, which closes its connection.
    /// Call after the writer's last commit; later commits checkpoint as SQLite alone would.
    func stop() {
        let thread = monitor.withLock {
            stopped = true
            monitor.signal()
            return self.thread
        }
        thread?.join()
    }
}
