import AuthPlatform
import Dispatch
import GoTrue
import Synchronization

/// A fixture's passwords, hashed on every core in chunks of `chunkSize` on background threads,
/// each password once (two at a time, `Passwords.hash(_:)` over a chunk). `hash(forEntry:)`
/// waits for its chunk, so the writer can insert users while later chunks are still hashing.
///
/// PBKDF2 is most of a large fixture's cost: a million users at the test cost of 1,000
/// iterations is ~42 s of one core.
final class FixturePasswords: @unchecked Sendable {
    // @unchecked: `storage` slots are written once each, by the thread hashing their chunk,
    // and read only after `progress` (a mutex) has shown that chunk done; everything else is
    // immutable or guarded by `progress`.
    static let chunkSize = 256
    /// From this many chunks on the writer starts before hashing ends (see `Seeder.seed`).
    static let overlapThreshold = 8

    private struct Progress {
        var done: [Bool]
        var doneCount = 0
        var stopped = false
    }

    /// Entry position -> slot in `storage`, -1 for entries without a password.
    private let slots: [Int]
    private let storage: UnsafeMutableBufferPointer<String>
    private let chunks: Int
    private let progress: ConditionLock<Progress>
    private let finished = DispatchGroup()
    private let nextChunk = Atomic<Int>(0)
    /// Threads with a lower index keep hashing; the others stop after their current chunk.
    private let hashingThreads: Atomic<Int>

    init(entries: [Int], count: Int, plaintexts: [String], stored: [String?], passwords: Passwords,
         progress seedProgress: SeedProgress? = nil) {
        var slots = [Int](repeating: -1, count: count)
        for (slot, entry) in entries.enumerated() { slots[entry] = slot }
        self.slots = slots
        storage = .allocate(capacity: plaintexts.count)
        storage.initialize(repeating: "")
        chunks = (plaintexts.count + Self.chunkSize - 1) / Self.chunkSize
        progress = ConditionLock(Progress(done: [Bool](repeating: false, count: chunks)))
        // One hashing thread per core, each taking the next chunk in fixture order. Once the
        // writer starts (`waitForHeadStart`) one of them stops, leaving the writer a core.
        let threads = onlineProcessorCount
        hashingThreads = Atomic(threads)
        for index in 0..<threads {
            finished.enter()
            // The closure keeps `self` (and so `storage`) alive until it is done.
            DispatchQueue.global().async { [self] in
                nonisolated(unsafe) let out = storage
                while index < hashingThreads.load(ordering: .relaxed) {
                    let c = nextChunk.add(1, ordering: .relaxed).oldValue
                    guard c < chunks else { break }
                    let range = (c * Self.chunkSize)..<min(plaintexts.count, (c + 1) * Self.chunkSize)
                    if !progress.withLock({ $0.stopped }) {
                        var fresh: [Int] = []
                        for k in range where seedProgress?.isCancelled != true {
                            if let hash = stored[k], (try? Passwords.verify(plaintexts[k], against: hash)) == true {
                                out[k] = hash
                            } else {
                                fresh.append(k)
                            }
                        }
                        // Two at a time (the SIMD pair `Passwords.hash` derives together), so a
                        // cancelled seed stops within one pair's time, not a chunk's.
                        var start = 0
                        while start < fresh.count, seedProgress?.isCancelled != true {
                            let pair = Array(fresh[start..<min(fresh.count, start + 2)])
                            for (k, hash) in zip(pair, passwords.hash(pair.map { plaintexts[$0] })) { out[k] = hash }
                            start += 2
                        }
                    }
                    progress.withLock { state in
                        state.done[c] = true
                        state.doneCount += 1
                    }
                    progress.broadcast()
                    seedProgress?.addHashed(range.count)
                }
                finished.leave()
            }
        }
    }

    deinit {
        storage.deinitialize()
        storage.deallocate()
    }

    /// Waits until the writer may start: half of the chunks for a large fixture (on two cores
    /// the hashing left then finishes while the writer, ~2x faster than one hashing core, works
    /// through the first half), all of them for a small one.
    func waitForHeadStart() {
        let wanted = chunks >= Self.overlapThreshold ? (chunks + 1) / 2 : chunks
        // Read through `progress.state` on each pass, not through `withLock`'s inout value: the
        // optimizer may keep an inout value in a register across `wait()`, since nothing else
        // may touch it during the access, and the loop would never see the hashing threads' updates.
        progress.lock()
        while progress.state.doneCount < wanted { progress.wait() }
        progress.unlock()
        if onlineProcessorCount > 1 { hashingThreads.store(onlineProcessorCount - 1, ordering: .relaxed) }
    }

    /// The hash for the fixture entry at `position`, waiting for its chunk; nil when that entry
    /// has no password.
    func hash(forEntry position: Int) -> String? {
        let slot = slots[position]
        guard slot >= 0 else { return nil }
        let chunk = slot / Self.chunkSize
        progress.lock()
        while !progress.state.done[chunk] { progress.wait() }
        progress.unlock()
        return storage[slot]
    }

    /// Skips the chunks not yet started and waits for the running ones, so no thread writes
    /// into `storage` afterwards. Called when the seed ends, whether it succeeded or failed.
    func stop() {
        progress.withLock { $0.stopped = true }
        finished.wait()
    }
}
