// Start-up and isolation costs of embedded emulators (bench/README.md). Starts and stops N
// emulators one after another in this process, as a test suite using the `.authEmulator` trait
// does, timing each start and stop and checking each answers `/health`; then K emulators alive
// at once, as parallel tests hold them, for R rounds. It reports the process's open file
// descriptors, threads and resident memory before, with one running, after the stops and after
// glibc's allocator has returned what was freed; it exits 1 if descriptors or threads were left
// behind.
//
//   swift run -c release auth-embedding-bench [--count 100] [--concurrent 10] [--rounds 3]
//
// Linux reads /proc/self (fd, task, status); on macOS descriptors are probed with fcntl and
// threads and memory come from the task's info.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthEmulator

struct Sample: CustomStringConvertible {
    var fds: Int
    var threads: Int
    var rssKiB: Int

    static func now() -> Sample { Sample(fds: openDescriptors(), threads: threadCount(), rssKiB: residentKiB()) }

    /// After a stop: `pthread_join` returns once a thread has cleared its id, a moment before the
    /// kernel has removed it from /proc/self/task, so a count taken at once sometimes shows one
    /// thread too many. Read until two readings 2 ms apart agree.
    static func settled() -> Sample {
        var last = now()
        for _ in 0..<50 {
            usleep(2000)
            let next = now()
            if next.fds == last.fds && next.threads == last.threads { return next }
            last = next
        }
        return last
    }

    var description: String { "fds \(fds), threads \(threads), RSS \(rssKiB / 1024).\(rssKiB % 1024 * 10 / 1024) MiB" }
}

#if os(Linux)
func entries(_ directory: String) -> Int {
    guard let dir = opendir(directory) else { return -1 }
    defer { closedir(dir) }
    var count = 0
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { count += 1 }
    }
    return count
}

// The directory being read holds one descriptor of its own while it is listed.
func openDescriptors() -> Int { entries("/proc/self/fd") - 1 }
func threadCount() -> Int { entries("/proc/self/task") }

/// The threads' names and how many have each (`http-loop-0: 1, http-worker-0: 1, ...`).
func threadNames() -> String {
    guard let dir = opendir("/proc/self/task") else { return "" }
    defer { closedir(dir) }
    var names: [String: Int] = [:]
    while let entry = readdir(dir) {
        let id = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard id != ".", id != "..", let file = fopen("/proc/self/task/\(id)/comm", "r") else { continue }
        var line = [CChar](repeating: 0, count: 64)
        if fgets(&line, Int32(line.count), file) != nil {
            let name = String(decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            names[name, default: 0] += 1
        }
        fclose(file)
    }
    return names.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
}

/// glibc's `malloc_trim(0)`: hands the memory freed in every allocator arena back to the system,
/// so what stays resident after it is memory still in use. Looked up at run time (the Glibc
/// module leaves <malloc.h> out); false where there is none.
func returnFreedMemory() -> Bool {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return false }
    typealias Trim = @convention(c) (Int) -> Int32
    _ = unsafeBitCast(symbol, to: Trim.self)(0)
    return true
}

func residentKiB() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmRSS:") {
            return Int(text.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
        }
    }
    return -1
}
#else
func openDescriptors() -> Int { (0..<Int32(getdtablesize())).filter { fcntl($0, F_GETFD) != -1 }.count }

func threadNames() -> String { "" }

func returnFreedMemory() -> Bool { false }

func threadCount() -> Int {
    var threads: thread_act_array_t?
    var count: mach_msg_type_number_t = 0
    guard task_threads(mach_task_self_, &threads, &count) == KERN_SUCCESS, let threads else { return -1 }
    for index in 0..<Int(count) { mach_port_deallocate(mach_task_self_, threads[index]) }
    vm_deallocate(mach_task_self_, vm_address_t(UInt(bitPattern: threads)), vm_size_t(Int(count) * MemoryLayout<thread_t>.stride))
    return Int(count)
}

func residentKiB() -> Int {
    var info = mach_task_basic_info()
    var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
    let result = withUnsafeMutablePointer(to: &info) {
        $0.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
            task_info(mach_task_self_, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
        }
    }
    return result == KERN_SUCCESS ? Int(info.resident_size / 1024) : -1
}
#endif

/// `GET /health` over a new loopback connection: the emulator answers, not just listens.
func healthy(_ port: Int) -> Bool {
    #if canImport(Darwin)
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #else
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return false }
    let request = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == request.count else { return false }
    var reply: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        reply += chunk[0..<n]
    }
    return reply.starts(with: Array("HTTP/1.1 200".utf8))
}

/// The options `.authEmulator` starts with (AuthEmulatorSetup.options()), without linking the
/// test frameworks into a benchmark.
func testOptions() -> EmulatorOptions {
    var options = EmulatorOptions.testing()
    options.configuration.passwordHashIterations = 1000
    options.shutdownTimeoutSeconds = 1
    return options
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func summary(_ values: [Double]) -> String {
    let sorted = values.sorted()
    func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * q))] }
    func format(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
    return "p50 \(format(at(0.5))) ms, p90 \(format(at(0.9))) ms, max \(format(sorted.last ?? 0)) ms, mean \(format(values.reduce(0, +) / Double(values.count))) ms"
}

var count = 100
var concurrent = 10
var rounds = 3
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--count": count = Int(arguments.popFirst() ?? "") ?? count
    case "--concurrent": concurrent = Int(arguments.popFirst() ?? "") ?? concurrent
    case "--rounds": rounds = Int(arguments.popFirst() ?? "") ?? rounds
    default:
        count = 0
    }
}
guard count >= 1, concurrent >= 1, rounds >= 1 else {
    print("usage: auth-embedding-bench [--count N] [--concurrent K] [--rounds R] (each at least 1)")
    exit(64)
}

/// One report line: a label in a column of its own, then the figures.
func report(_ label: String, _ figures: String) {
    print(label + String(repeating: " ", count: max(1, 22 - label.count)) + figures)
}

let clock = ContinuousClock()
let before = Sample.now()
report("before:", "\(before)")
var starts: [Double] = []
var stops: [Double] = []
var checkpoints: [(Int, Sample)] = []
for index in 1...count {
    let started = clock.now
    let emulator: Emulator
    do {
        emulator = try Emulator.start(testOptions())
    } catch {
        print("start \(index) failed: \(error)")
        exit(1)
    }
    starts.append(milliseconds(clock.now - started))
    guard healthy(emulator.port) else {
        print("emulator \(index) did not answer /health")
        exit(1)
    }
    if index == 1 {
        report("one running:", "\(Sample.now())")
        let names = threadNames()
        if !names.isEmpty { report("  its threads:", names) }
    }
    let stopping = clock.now
    emulator.stop()
    stops.append(milliseconds(clock.now - stopping))
    if [1, 10, count / 2, count].contains(index) { checkpoints.append((index, Sample.settled())) }
}
for (index, sample) in checkpoints { report("after \(index) stopped:", "\(sample)") }
report("start (\(count)):", summary(starts))
report("stop (\(count)):", summary(stops))

// Parallel tests: K alive at once, each on its own port and database, in several rounds, so
// memory the allocator keeps after the first round (its per-thread arenas) shows apart from
// memory that grows with every round.
var after = Sample.now()
for round in 1...rounds {
    var alive: [Emulator] = []
    let together = clock.now
    for _ in 0..<concurrent {
        do { alive.append(try Emulator.start(testOptions())) } catch {
            print("start failed: \(error)")
            exit(1)
        }
    }
    let startedTogether = milliseconds(clock.now - together)
    guard Set(alive.map(\.port)).count == concurrent, alive.allSatisfy({ healthy($0.port) }) else {
        print("the emulators alive at once do not all answer on ports of their own")
        exit(1)
    }
    let during = Sample.now()
    let stopTogether = clock.now
    for emulator in alive { emulator.stop() }
    let stoppedTogether = milliseconds(clock.now - stopTogether)
    alive = []
    after = Sample.settled()
    report("\(concurrent) alive, round \(round):", "\(during) (started in \(Int(startedTogether)) ms, stopped in \(Int(stoppedTogether)) ms)")
    report("  all stopped:", "\(after)")
}
// The allocator keeps what the parallel rounds' threads freed in arenas of their own; trimmed,
// the rest is memory something still holds.
if returnFreedMemory() {
    after = Sample.settled()
    report("after malloc_trim(0):", "\(after)")
}
// The first emulator may set up what the process keeps once (SQLite's and the runtime's own);
// a leak is what keeps growing after it.
let first = checkpoints[0].1
let grownFDs = after.fds - first.fds
let grownThreads = after.threads - first.threads
let grownKiB = after.rssKiB - first.rssKiB
report("grown since the first:", "\(grownFDs) fds, \(grownThreads) threads, \(grownKiB) KiB resident")
exit(grownFDs > 0 || grownThreads > 0 ? 1 : 0)
