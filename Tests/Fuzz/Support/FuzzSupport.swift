#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if FUZZING
import CFuzzDriver
#endif

/// What the fuzz targets share: a failed property is reported and the process aborts, so
/// libFuzzer records the input as a crash and the replay driver stops with a non-zero status.
public func fuzzCheck(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if condition() { return }
    writeError("fuzz property failed at \(file):\(line): \(message())\n")
    abort()
}

/// Straight to descriptor 2: `stderr` is a C global that strict concurrency checking refuses.
func writeError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// A printable excerpt of an input for failure messages: the bytes can be anything.
public func fuzzExcerpt(_ bytes: some Collection<UInt8>, limit: Int = 300) -> String {
    var out = ""
    for byte in bytes.prefix(limit) {
        if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
            out.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            let hex = String(byte, radix: 16)
            out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return bytes.count > limit ? out + "... (\(bytes.count) bytes)" : out
}

/// A fast, deterministic hash of the input (FNV-1a, 64 bits): the targets derive their choices
/// (split points, modes) from it, so a crash file replays the same way every time.
public func fuzzHash(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash &*= 0x0000_0100_0000_01b3
    }
    return hash
}

/// The running target's property check, set by `FuzzTarget.main` before any input runs.
nonisolated(unsafe) private var registeredTarget: (([UInt8]) -> Void)?

/// libFuzzer's entry point, exported under its C name. Every target links this module once, so
/// each binary has exactly one; it runs the check its `main` registered.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    registeredTarget?(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// A target's `main`: libFuzzer drives `body` in a fuzzing build (`-DFUZZING`), the replay
/// driver runs it over corpus files otherwise.
///
/// With a `stackSize`, the driver (and so every input) runs on a thread of that stack size
/// instead of the main thread's 8 MiB: the code under test runs on 512 KiB HTTP workers in the
/// server, and an input nested deeper than its limits allow must crash here as it would there.
public enum FuzzTarget {
    public static func main(name: String, stackSize: Int? = nil, _ body: @escaping ([UInt8]) -> Void) {
        registeredTarget = body
        nonisolated(unsafe) let body = body
        let run: () -> Void = {
            #if FUZZING
            FuzzDriver.main(fuzzerTestOneInput)
            #else
            FuzzReplay.main(target: name, body)
            #endif
        }
        guard let stackSize else {
            run()
            return
        }
        runOnThread(stackSize: stackSize, run)
    }

    /// Runs `body` on a new thread with `stackSize` bytes of stack and waits for it; the
    /// drivers end the process themselves.
    static func runOnThread(stackSize: Int, _ body: @escaping () -> Void) {
        final class Start { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, stackSize)
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, &attributes, { raw in
            Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, start)
        pthread_attr_destroy(&attributes)
        guard result == 0 else {
            writeError("cannot start the fuzzing thread (\(result))\n")
            exit(1)
        }
        // libFuzzer's -timeout is a SIGALRM that its handler acts on only in the thread that
        // runs the inputs: delivered to this waiting thread it was ignored, so a slow input never
        // timed out. Blocked here (after the start, so the new thread keeps it unblocked), the
        // signal goes to the fuzzing thread.
        var alarm = sigset_t()
        sigemptyset(&alarm)
        sigaddset(&alarm, SIGALRM)
        pthread_sigmask(SIG_BLOCK, &alarm, nil)
        #if canImport(Darwin)
        pthread_join(thread!, nil)
        #else
        pthread_join(thread, nil)
        #endif
    }
}

/// The replay driver used when a target is built without libFuzzer (no `-DFUZZING`): every
/// regular file of every directory named on the command line (or a file named directly) is
/// run once through `body`. A normal `swift build` compiles the targets this way, so the
/// committed seed corpus doubles as a regression check.
public enum FuzzReplay {
    public static func main(target: String, _ body: ([UInt8]) -> Void) {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
            print("usage: \(target) CORPUS_DIR_OR_FILE...")
            print("Replays every input once (a regression check); build with -sanitize=fuzzer -DFUZZING to fuzz.")
            exit(arguments.isEmpty ? 64 : 0)
        }
        var count = 0
        for argument in arguments {
            for path in files(at: argument) {
                guard let bytes = fuzzReadFile(path) else {
                    writeError("\(target): cannot read \(path)\n")
                    exit(1)
                }
                body(bytes)
                count += 1
            }
        }
        print("\(target): replayed \(count) inputs, no property failed")
    }

    /// A directory's regular files in name order, or the path itself when it is not a directory.
    static func files(at path: String) -> [String] {
        guard let directory = opendir(path) else { return [path] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(".") { continue }
            names.append(name)
        }
        return names.sorted().map { path + "/" + $0 }
    }

}

/// A whole file, or nil when it cannot be read.
public func fuzzReadFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n > 0 { bytes.append(contentsOf: chunk[0..<n]) }
        if n < chunk.count { break }
    }
    return ferror(file) == 0 ? bytes : nil
}

#if FUZZING
/// The libFuzzer driver used when built with `-sanitize=fuzzer -DFUZZING`: hands the command
/// line (libFuzzer's flags and corpus directories) and the target's entry point to libFuzzer.
public enum FuzzDriver {
    public static func main(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
    }
}
#endif
