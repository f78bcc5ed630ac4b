import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GoTrue

/// Hook calls through the toolchain's own HTTP client (`URLSession`, which speaks HTTP and
/// HTTPS with no package). GoTrue calls `post` on a worker thread, never on the event loop; the
/// call blocks that thread until the answer or the deadline.
struct URLSessionHookTransport: HookTransport {
    /// One session for every call: connections are reused, nothing is cached or stored.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration)
    }()

    func post(_ url: String, headers: [(String, String)], body: [UInt8], timeout: Double) -> HookReply {
        guard let target = URL(string: url) else { return .failed("invalid hook URL") }
        var request = URLRequest(url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Data(body)

        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let task = Self.session.dataTask(with: request) { data, response, error in
            outcome.set(data: data, response: response, error: error)
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout) == .timedOut {
            task.cancel()
            return .timedOut
        }
        return outcome.reply
    }

    /// The completion handler's results, handed from URLSession's queue to the waiting thread.
    private final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var data: Data?
        private var response: URLResponse?
        private var error: (any Error)?

        func set(data: Data?, response: URLResponse?, error: (any Error)?) {
            lock.lock()
            defer { lock.unlock() }
            self.data = data
            self.response = response
            self.error = error
        }

        var reply: HookReply {
            lock.lock()
            defer { lock.unlock() }
            if let error {
                if let urlError = error as? URLError, urlError.code == .timedOut { return .timedOut }
                return .failed("\(error)")
            }
            guard let http = response as? HTTPURLResponse else { return .failed("no HTTP response") }
            var headers: [(String, String)] = []
            for (name, value) in http.allHeaderFields {
                headers.append(("\(name)", "\(value)"))
            }
            return .response(status: http.statusCode, headers: headers, body: Array(data ?? Data()))
        }
    }
}
