import AuthPlatform
import GoFormats

/// Why a document was rejected, and where (byte offset into the UTF-8 input; the input's length
/// when it ended too soon). `message` is the text of Go's `json.SyntaxError` for the same input
/// (`invalid character '}' looking for beginning of object key string`, `unexpected end of JSON
/// input`), which the real server puts in its `bad_json` errors.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) at offset \(offset)" }
}

/// A body as `JSON.goDecode` read it.
public struct GoDecodedDocument: Sendable {
    public var value: JSON
    /// For each top-level object key, the first number literal under it that overflows a float64.
    public var overflowingNumbers: [String: String] = [:]
    /// Top-level object keys whose value nests deeper than the materialized depth.
    public var truncatedKeys: Set<String> = []
}
