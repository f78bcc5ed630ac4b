import AuthTemplate
import GoTrue
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a template body could not be fetched.
struct TemplateFetchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The custom email bodies' sources, read outside any request: `GOTRUE_MAILER_TEMPLATES_<ID>`
/// fetched as the real server's templatemailer fetches them (a GET with a 10 s deadline, only a
/// 200 counts, the body cut at the size limit; a path without a scheme is joined to
/// `GOTRUE_SITE_URL`), `file://` URLs and `content_path` files read from disk. A source that
/// cannot be read, or a body that does not parse, leaves the built-in body in place, as the real
/// server falls back to its default template; each such case is one warning line.
package enum TemplateSources {
    /// Bytes of a body at most (GoTrue's `MAILER_TEMPLATE_MAX_SIZE` defaults to a megabyte).
    static let sizeLimit = 1 << 20

    /// Reads every source of `config` again; returns the bodies to use and the warnings.
    /// Resolves a name to numeric addresses; nil when it resolves to none.
    package typealias Resolver = @Sendable (String) -> [String]?

    package static func load(_ config: Configuration, transport: CurlHookTransport,
                                      resolve: @escaping Resolver = systemResolve) -> (templates: [String: MailTemplateSource], warnings: [String]) {
        var templates = config.mailer.templates
        var warnings: [String] = []
        // Files named in the config file are read again (a reload sees an edited template).
        for (id, source) in templates.sorted(by: { $0.key < $1.key }) {
            guard case .file(let path) = source.origin else { continue }
            switch readFile(path) {
            case .success(let text): templates[id]?.text = text
            case .failure(let error): warnings.append("email template \(id): \(error); the last body read is kept")
            }
        }
        for (id, url) in config.mailer.templateURLs.sorted(by: { $0.key < $1.key }) {
            let variable = "GOTRUE_MAILER_TEMPLATES_" + id.uppercased()
            switch fetch(url, siteURL: config.siteURL, remote: config.mailer.remoteTemplates, transport: transport, resolve: resolve) {
            case .success(let text):
                templates[id] = MailTemplateSource(text: text, origin: .url(url))
            case .failure(let error):
                templates[id] = nil
                warnings.append("\(variable): \(error); the built-in \(id) body is used, as the real server falls back to its default")
            }
        }
        for (id, source) in templates.sorted(by: { $0.key < $1.key }) {
            do {
                _ = try GoTemplate(parsing: source.text, name: source.name)
            } catch {
                warnings.append("email template \(id): \(error); the built-in body is sent instead, as the real server does")
            }
        }
        return (templates, warnings)
    }

    static func readFile(_ path: String) -> Result<String, TemplateFetchError> {
        do {
            let bytes = try Platform.readFile(path, limit: sizeLimit)
            return .success(String(decoding: bytes, as: UTF8.self))
        } catch {
            return .failure(TemplateFetchError(error.description))
        }
    }

    static func fetch(_ url: String, siteURL: String, remote: Bool, transport: CurlHookTransport,
                                       resolve: @escaping Resolver = systemResolve) -> Result<String, TemplateFetchError> {
        if url.hasPrefix("file://") { return readFile(String(url.dropFirst("file://".count))) }
        // `loadEntryBody`: a URL that does not start with "http" is a path on the site.
        let full = url.hasPrefix("http") ? url : siteURL + url
        guard let parsed = GoParsedURL.parse(full), parsed.scheme == "http" || parsed.scheme == "https" else {
            return .failure(TemplateFetchError("'\(full)' is not an http(s) or file:// URL"))
        }
        if remote { return transport.get(full, timeout: 10, limit: sizeLimit).map { String(decoding: $0, as: UTF8.self) } }
        // On this machine only, judged on where each hop connects, never on how a name reads
        // (`127.attacker.example` is a name like any other): checked here before each request,
        // and again by libcurl's connection callback on the address it actually uses.
        return transport.get(full, timeout: 10, limit: sizeLimit, eachHop: { hop in
            loopbackProblem(hop, resolve: resolve).map { $0 + " (set AUTH_EMULATOR_REMOTE_TEMPLATES=true to fetch from it)" }
        }).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Why `url` does not lead to this machine, or nil when it does: its host must be a
    /// loopback address, or a name whose every address is loopback (`localhost`, a hosts-file
    /// name), as Go and a browser-like client both read it (`ConnectHost`).
    static func loopbackProblem(_ url: String, resolve: Resolver) -> String? {
        guard let host = ConnectHost.of(url) else { return "'\(url)' is not an http(s) URL that Go and libcurl read alike" }
        switch host {
        case .address(let text, let isLoopback):
            return isLoopback ? nil : "\(text) is not this machine"
        case .name(let name):
            guard let addresses = resolve(name), !addresses.isEmpty else { return "\(name) is not this machine: it resolves to no address" }
            if let outside = addresses.first(where: { ConnectHost.isLoopbackAddress($0) != true }) {
                return "\(name) is not this machine: it resolves to \(outside)"
            }
            return nil
        }
    }

    /// `getaddrinfo`, every address as numeric text.
    static func systemResolve(_ name: String) -> [String]? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let entry = node {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if let address = entry.pointee.ai_addr,
               getnameinfo(address, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                let length = text.firstIndex(of: 0) ?? text.count
                addresses.append(String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            node = entry.pointee.ai_next
        }
        return addresses
    }
}
