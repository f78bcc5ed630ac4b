import Foundation

/// Runs Python reference implementations for cross-checks (hashlib/hmac backed by OpenSSL,
/// PyJWT, float `repr`). The interpreter is `$AUTH_EMULATOR_PYTHON` if set (the test venv), else
/// `python3` on `PATH`. Without it these tests are skipped locally but fail under CI (`$CI` set),
/// so a CI image that lost Python cannot silently drop the cross-checks.
public enum Python {
    public static let interpreter: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let configured = environment["AUTH_EMULATOR_PYTHON"], !configured.isEmpty {
            return FileManager.default.isExecutableFile(atPath: configured) ? configured : nil
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/python3"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    public static var isCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }

    /// Whether the interpreter can `import jwt` (PyJWT), checked once.
    public static let hasPyJWT: Bool = {
        guard interpreter != nil else { return false }
        return (try? run(script: "import jwt; print('ok')", input: "")) == "ok\n"
    }()

    /// Trait condition: run when Python exists, or when CI requires it (the test then fails).
    public static var shouldRun: Bool { interpreter != nil || isCI }

    /// Trait condition for PyJWT cross-checks: run when PyJWT is importable, or under CI.
    public static var shouldRunPyJWT: Bool { hasPyJWT || isCI }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `script` with `input` on stdin and returns stdout.
    public static func run(script: String, input: String) throws -> String {
        guard let interpreter else {
            throw Failure(description: "no Python interpreter (set AUTH_EMULATOR_PYTHON or put python3 on PATH)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: interpreter)
        process.arguments = ["-c", script]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        // A child that dies early must fail the test, not kill the runner with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        try process.run()
        // Write stdin and drain stdout/stderr concurrently so large payloads cannot deadlock.
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errorData = ErrorCollector(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errorText = errorData.finish()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python exited with \(process.terminationStatus): \(errorText)")
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Reads a pipe to its end on a background thread.
    final class ErrorCollector: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread {
                self.data = handle.readDataToEndOfFile()
                self.done.signal()
            }.start()
        }

        func finish() -> String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }
}
