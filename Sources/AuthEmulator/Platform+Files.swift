// Reading a whole file (the `--config` TOML file, signing keys), with the C library, so the module
// needs no Foundation. The only platform-specific code for files in this module.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Platform {
    /// The bytes of the file at `path`; refuses anything over `limit` bytes (a config file is a
    /// few kilobytes, so a huge one is a mistake such as pointing at a database).
    static func readFile(_ path: String, limit: Int = 4 << 20) throws(EmulatorError) -> [UInt8] {
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
}
