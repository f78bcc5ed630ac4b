// The only platform-specific code of the AuthEmulator module: environment variables, directories,
// the current directory, standard output flushing and termination signals.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

enum Platform {
    static func environment() -> [String: String] {
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

    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `mkdir -p`: creates each missing component; an existing directory is fine.
    static func makeDirectories(_ path: String) throws(EmulatorError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw EmulatorError("cannot create directory \(current): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Flushes every C stdio stream (`print` buffers stdout when it is a pipe).
    static func flushStandardOutput() { fflush(nil) }

    static func writeStandardError(_ text: String) {
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

    /// Delivers SIGINT and SIGTERM to `handler` on a Dispatch queue instead of killing the process,
    /// so a shutdown can finish in-flight requests and close the database cleanly.
    static func onTerminationSignal(_ handler: @escaping @Sendable (Int32) -> Void) -> [AnyObject] {
        [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { handler(signalNumber) }
            source.resume()
            return source as AnyObject
        }
    }
}
