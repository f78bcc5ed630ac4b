// Reading a whole file (the `--config` TOML file, signing keys), with the C library, so the module
// needs no Foundation. The only platform-specific code for files in this module.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A shared `flock(2)` lock on a file, held from `init` until this value is gone: every emulator
/// process serving one projects folder holds one, so a process can tell whether it is the only
/// one (`whileAlone`). Locks of `flock` belong to the open file, so two servers in one process
/// see each other as two processes do.
package final class FolderLock: Sendable {
    private let descriptor: Int32

    /// nil when the file cannot be opened or locked.
    package init?(path: String) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_SH) == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Runs `body` with the lock exclusive when no other holder has it, then shares it again;
    /// nil (and `body` not run) when another holder has it. Converting a `flock` lock may drop
    /// it for a moment (flock(2)), so it is taken shared again in every case.
    package func whileAlone<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T? {
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            _ = flock(descriptor, LOCK_SH)
            return nil
        }
        defer { _ = flock(descriptor, LOCK_SH) }
        return try body()
    }
}

extension Platform {
    /// The bytes of the file at `path`; refuses anything over `limit` bytes (a config file is a
    /// few kilobytes, so a huge one is a mistake such as pointing at a database).
    package static func readFile(_ path: String, limit: Int = 4 << 20) throws(EmulatorError) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw EmulatorError("\(path): cannot read the file: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count > 0 { result += buffer[0..<count] }
            if result.count > limit { throw EmulatorError("\(path): the file is larger than \(limit >> 20) MiB") }
            if count < buffer.count {
                if ferror(file) != 0 { throw EmulatorError("\(path): cannot read the file: \(String(cString: strerror(errno)))") }
                return result
            }
        }
    }

    /// Writes `bytes` to `path` through a temporary file renamed over it, so a reader (or a
    /// crash mid-write) never sees half a file (`serve --export-on-exit`).
    package static func writeFile(_ path: String, _ bytes: [UInt8]) throws(EmulatorError) {
        let temporary = path + ".tmp"
        guard let file = fopen(temporary, "wb") else {
            throw EmulatorError("\(path): cannot write the file: \(String(cString: strerror(errno)))")
        }
        let written = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        let flushed = fflush(file) == 0
        fclose(file)
        guard written == bytes.count, flushed, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw EmulatorError("\(path): cannot write the file: \(reason)")
        }
    }

    /// Deletes the file at `path` if there is one (a dropped project's database and spec).
    package static func removeFile(_ path: String) {
        _ = unlink(path)
    }

    /// The names of the regular files directly in `directory` ending in `suffix`, sorted; none
    /// when the directory cannot be read (the dashboard's scenario catalogue is optional).
    package static func files(in directory: String, suffix: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if !name.hasPrefix("."), name.hasSuffix(suffix) { names.append(name) }
        }
        return names.sorted()
    }
}
