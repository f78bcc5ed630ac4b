// The only platform-specific code of the AuthEmulator module: environment variables, directories,
// the current directory, standard output flushing, termination signals, opening a browser, the
// machine's network addresses, whether stderr is a terminal, a monotonic clock, sleeping, and the
// process's exit (files: Platform+Files.swift).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AuthPlatform
import Dispatch

/// Written only by `onTerminationSignal` before the handlers are installed, then only read, from
/// the signal handler (which can capture nothing).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

package enum Platform {
    package static func environment() -> [String: String] {
        var result: [String: String] = [:]
        #if canImport(Darwin)
        let start: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = _NSGetEnviron().pointee
        #else
        let start: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        #endif
        var pointer = start
        while let entry = pointer?.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                result[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            pointer = pointer?.advanced(by: 1)
        }
        return result
    }

    package static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `mkdir -p`: creates each missing component; an existing directory is fine.
    package static func makeDirectories(_ path: String) throws(EmulatorError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw EmulatorError("cannot create directory \(current): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Flushes every C stdio stream (`print` buffers stdout when it is a pipe).
    package static func flushStandardOutput() { fflush(nil) }

    /// Ends the process with `status`, through exit(3), so stdio buffers are flushed.
    package static func exitProcess(_ status: Int32) -> Never {
        exit(status)
    }

    /// The first IPv4 address of an interface that is up and not loopback (getifaddrs(3)), or
    /// nil (`Exposure.reachableAddress`).
    static func firstExternalIPv4Address() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let address = entry.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET else { continue }
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let text: String? = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var raw = ipv4.pointee.sin_addr
                guard inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)) != nil else { return nil }
                // The C string ends at its first NUL; String(cString:) on an array is deprecated.
                return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            if let text { return text }
        }
        return nil
    }

    /// The program that opens a URL in the default browser here.
    #if canImport(Darwin)
    static let browserOpener = "open"
    #else
    package static let browserOpener = "xdg-open"
    #endif

    /// Opens `url` in the default browser (`open` on macOS, `xdg-open` elsewhere), best-effort:
    /// returns false when the helper could not be started. The child is reaped in the
    /// background; `failed` runs there when it exits unsuccessfully (xdg-open without any
    /// browser to start exits 3).
    @discardableResult
    package static func openInBrowser(_ url: String, failed: @escaping @Sendable () -> Void = {}) -> Bool {
        #if canImport(Darwin)
        let environment = _NSGetEnviron().pointee
        #else
        let environment = environ
        #endif
        let tool = browserOpener
        let arguments = [strdup(tool), strdup(url), nil]
        defer { for argument in arguments { free(argument) } }
        // The opener's own output (xdg-open lists every browser it tried) goes to /dev/null:
        // the caller says what failed in one line.
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid = pid_t()
        guard arguments.withUnsafeBufferPointer({ posix_spawnp(&pid, tool, &actions, nil, $0.baseAddress!, environment) }) == 0 else {
            return false
        }
        let child = pid
        DispatchQueue.global().async {
            var status: Int32 = 0
            guard waitpid(child, &status, 0) == child else { return }
            // The wait status as WIFEXITED / WEXITSTATUS decode it (macros Swift cannot import):
            // anything but a normal exit with status 0 is a failure.
            if status & 0x7F != 0 || (status >> 8) & 0xFF != 0 { failed() }
        }
        return true
    }

    /// Whether standard error is a terminal (isatty(3)): progress is then redrawn in place;
    /// into a file or a pipe only the summary line is written.
    package static func standardErrorIsTerminal() -> Bool { isatty(2) == 1 }

    /// Seconds on a clock that never jumps (CLOCK_MONOTONIC), for durations and rates.
    package static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Suspends the calling thread (nanosleep(2); an interrupted sleep ends early, which is fine
    /// for the pollers that use it).
    package static func sleep(milliseconds: Int) {
        var delay = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        nanosleep(&delay, nil)
    }

    /// Ignores SIGPIPE for the whole process (the `serve` command only; the library leaves
    /// signal dispositions to the app that embeds it).
    package static func ignoreBrokenPipes() { _ = signal(SIGPIPE, SIG_IGN) }

    /// Writes `text` to stderr; what a closed or failing stderr does not take is dropped.
    package static func writeStandardError(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
    }

    /// Delivers SIGINT and SIGTERM to `handler` instead of killing the process, so a shutdown can
    /// finish in-flight requests and close the database cleanly. The C handler is installed before
    /// this returns (a Dispatch signal source registers asynchronously, and a signal arriving in
    /// that gap would be lost): it only writes the signal number to a pipe (async-signal-safe),
    /// and a waiting thread calls `handler`. That thread is one of the program's own, named
    /// `signal-reader`, rather than a libdispatch worker held for the process's life.
    package static func onTerminationSignal(_ handler: @escaping @Sendable (Int32) -> Void) -> [AnyObject] {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return [] }
        signalPipeWriteEnd = fds[1]
        let readEnd = fds[0]
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(signalPipeWriteEnd, &byte, 1)
            }
        }
        let reader: @Sendable () -> Void = {
            var byte: UInt8 = 0
            while true {
                let n = read(readEnd, &byte, 1)
                if n == 1 {
                    handler(Int32(byte))
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        // Never joined: it waits for a signal until the process exits. Without it, the default
        // actions come back rather than the signals being swallowed.
        if (try? Threads.spawn(name: "signal-reader", stackSize: 64 * 1024, reader)) == nil {
            for signalNumber in [SIGINT, SIGTERM] { signal(signalNumber, SIG_DFL) }
        }
        return []
    }
}
