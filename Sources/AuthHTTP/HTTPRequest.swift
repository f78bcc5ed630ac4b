import AuthPlatform

/// One decoded `name=value` pair of a query string.
public struct QueryItem: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A complete request as received: framing is already resolved, the body fully read.
public struct HTTPRequest: Sendable {
    /// As sent; methods are case-sensitive (RFC 9110 §9.1).
    public var method: String
    /// The raw request-target, e.g. `/auth/v1/token?grant_type=password`.
    public var target: String
    /// Percent-decoded path without the query.
    public var path: String
    /// Query items, decoded form-style ('+' is a space, then percent-decoding).
    public var query: [QueryItem]
    /// "HTTP/1.1" or "HTTP/1.0".
    public var version: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Peer IP address as text, e.g. "127.0.0.1" or "::1".
    public var remoteAddress: String
    public var remotePort: Int
    /// True when the request came over a socket whose loop reports what became of the response
    /// (`HTTPResponse.onDelivery`); false for requests made in-process.
    public var reportsDelivery = false

    public init(
        method: String, target: String, version: String = "HTTP/1.1",
        headers: HTTPHeaders = [:], body: [UInt8] = [],
        remoteAddress: String = "127.0.0.1", remotePort: Int = 0
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        (path, query) = RequestTarget.split(target)
    }

    /// The first value of query item `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

/// Splitting and decoding of a request-target (RFC 9112 §3.2).
enum RequestTarget {
    static func split(_ target: String) -> (path: String, query: [QueryItem]) {
        target.withUTF8Bytes { bytes in
            var start = 0
            var end = bytes.count
            // A fragment never belongs to a request-target; drop one if a client sent it anyway.
            if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { end = hash }
            // absolute-form (RFC 9112 §3.2.2): skip "scheme://authority" and use what follows.
            if end > 0, bytes[0] != UInt8(ascii: "/"), let schemeEnd = find("://", in: bytes, before: end) {
                start = schemeEnd + 3
                while start < end, bytes[start] != UInt8(ascii: "/"), bytes[start] != UInt8(ascii: "?") { start += 1 }
                if start == end || bytes[start] == UInt8(ascii: "?") {
                    let query = start < end ? parseQuery(UnsafeBufferPointer(rebasing: bytes[(start + 1)..<end])) : []
                    return ("/", query)
                }
            }
            var pathEnd = start
            while pathEnd < end, bytes[pathEnd] != UInt8(ascii: "?") { pathEnd += 1 }
            let path = percentDecoded(UnsafeBufferPointer(rebasing: bytes[start..<pathEnd]), plusIsSpace: false)
            let query = pathEnd < end ? parseQuery(UnsafeBufferPointer(rebasing: bytes[(pathEnd + 1)..<end])) : []
            return (path, query)
        }
    }

    private static func find(_ needle: StaticString, in bytes: UnsafeBufferPointer<UInt8>, before end: Int) -> Int? {
        let count = needle.utf8CodeUnitCount
        guard end >= count else { return nil }
        let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: count)
        var index = 0
        while index + count <= end {
            if bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: "?") { return nil }
            if UnsafeBufferPointer(rebasing: bytes[index..<(index + count)]).elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }

    /// application/x-www-form-urlencoded style: '&'-separated, '+' is a space, then %XX.
    /// Empty pairs are skipped; a pair without '=' has an empty value.
    static func parseQuery(_ bytes: UnsafeBufferPointer<UInt8>) -> [QueryItem] {
        var items: [QueryItem] = []
        var pairStart = 0
        var index = 0
        while index <= bytes.count {
            if index == bytes.count || bytes[index] == UInt8(ascii: "&") {
                if index > pairStart {
                    let pair = UnsafeBufferPointer(rebasing: bytes[pairStart..<index])
                    if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                        items.append(QueryItem(
                            name: percentDecoded(UnsafeBufferPointer(rebasing: pair[0..<equals]), plusIsSpace: true),
                            value: percentDecoded(UnsafeBufferPointer(rebasing: pair[(equals + 1)...]), plusIsSpace: true)
                        ))
                    } else {
                        items.append(QueryItem(name: percentDecoded(pair, plusIsSpace: true), value: ""))
                    }
                }
                pairStart = index + 1
            }
            index += 1
        }
        return items
    }

    /// Decodes %XX escapes (RFC 3986 §2.1). A '%' not followed by two hex digits is kept as
    /// is rather than failing the whole request; invalid UTF-8 becomes U+FFFD.
    static func percentDecoded(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String {
        var needsWork = false
        for byte in bytes where byte == UInt8(ascii: "%") || (plusIsSpace && byte == UInt8(ascii: "+")) {
            needsWork = true
            break
        }
        if !needsWork { return String(decoding: bytes, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = ASCII.hexValue(bytes[index + 1]), let low = ASCII.hexValue(bytes[index + 2]) {
                decoded.append(UInt8(high << 4 | low))
                index += 3
            } else {
                decoded.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
