import AuthHTTP
import FuzzSupport

// Fuzz target for HTTPParser.parse. The input is the raw byte stream of one connection.
//
// Property: the parser is incremental, so how the stream is cut into reads must not change
// what it produces. The stream is parsed whole, cut at three points derived from the input,
// and (when short) a few bytes at a time, under the default limits and under small ones that make
// the 431/413 paths reachable with short inputs; every way must yield the same requests and end
// the same way. Crashes, traps and sanitizer reports are findings on their own.

/// One parsed request, with everything a caller reads from it.
struct ParsedRequest: Equatable {
    var method: String
    var target: String
    var path: String
    var query: [QueryItem]
    var version: String
    var headers: HTTPHeaders
    var body: [UInt8]
    var keepAlive: Bool
}

enum Ending: Equatable {
    /// Every byte consumed, nothing of a next request pending.
    case clean
    /// Bytes of an incomplete request remain.
    case pending
    case failed(HTTPProtocolFailure)
}

struct Outcome: Equatable {
    var requests: [ParsedRequest] = []
    var ending: Ending = .clean
}

/// Runs the stream through one parser, offering bytes up to each cut as a read, the way the
/// server does: unconsumed bytes are offered again with the next read.
func parse(_ input: [UInt8], cuts: [Int], limits: HTTPParser.Limits) -> Outcome {
    var parser = HTTPParser(limits: limits)
    var outcome = Outcome()
    var pending: [UInt8] = []
    var fed = 0
    for end in cuts + [input.count] where end > fed {
        pending.append(contentsOf: input[fed..<end])
        fed = end
        // Each event but needMore consumes bytes or changes state; a parser that loops
        // without progress would hang a connection.
        var rounds = 0
        let maximumRounds = pending.count + 4
        reads: while true {
            rounds += 1
            fuzzCheck(rounds <= maximumRounds, "no progress: \(fuzzExcerpt(input))")
            let (consumed, event) = parser.parse(pending)
            fuzzCheck(consumed >= 0 && consumed <= pending.count, "consumed \(consumed) of \(pending.count)")
            pending.removeFirst(consumed)
            switch event {
            case .needMore:
                break reads
            case .expectContinue:
                fuzzCheck(parser.isReadingBody, "100-continue outside a body")
            case .request(let request, let keepAlive):
                fuzzCheck(consumed > 0, "a request from no bytes")
                outcome.requests.append(ParsedRequest(
                    method: request.method, target: request.target, path: request.path, query: request.query,
                    version: request.version, headers: request.headers, body: request.body, keepAlive: keepAlive))
                fuzzCheck(request.body.count <= limits.maxBodyBytes, "body over the limit")
            case .failure(let failure, _):
                outcome.ending = .failed(failure)
                // The parser is unusable afterwards: it must swallow whatever follows.
                let after = parser.parse(pending)
                if case .needMore = after.event {} else { fuzzCheck(false, "event after a failure") }
                return outcome
            }
        }
    }
    outcome.ending = pending.isEmpty && parser.isBetweenMessages ? .clean : .pending
    return outcome
}

/// Where a limit is crossed can depend on how much has arrived (a partial head over the cap
/// fails as 431 before a later syntax error is seen), so these failures only have to agree on
/// failing.
func sizeDependent(_ ending: Ending) -> Bool {
    switch ending {
    case .failed(.headersTooLarge), .failed(.bodyTooLarge): true
    default: false
    }
}

func agree(_ a: Outcome, _ b: Outcome) -> Bool {
    if a == b { return true }
    guard a.requests == b.requests else { return false }
    if case .failed = a.ending, case .failed = b.ending, sizeDependent(a.ending) || sizeDependent(b.ending) {
        return true
    }
    return false
}

func fuzzOne(_ input: [UInt8]) {
    let hash = fuzzHash(input)
    let n = UInt64(input.count + 1)
    let cuts = Set([hash % n, (hash >> 21) % n, (hash >> 42) % n]).map { Int($0) }.sorted()
    for limits in [HTTPParser.Limits(), HTTPParser.Limits(maxHeaderBytes: 300, maxBodyBytes: 500)] {
        let whole = parse(input, cuts: [], limits: limits)
        let split = parse(input, cuts: cuts, limits: limits)
        fuzzCheck(agree(whole, split), "cuts \(cuts) changed the outcome: \(whole) vs \(split) for \(fuzzExcerpt(input))")
        // Small reads cost time quadratic in the input (each read re-offers what is pending),
        // so they are kept to short inputs: one byte at a time, or a few bytes at a time.
        let step = input.count <= 256 ? 1 : Int(hash >> 60) + 2
        if input.count <= 1024 {
            let small = parse(input, cuts: Array(stride(from: 0, to: input.count, by: step)), limits: limits)
            fuzzCheck(agree(whole, small), "\(step)-byte reads changed the outcome: \(whole) vs \(small) for \(fuzzExcerpt(input))")
        }
    }
}

@main
enum Main {
    static func main() { FuzzTarget.main(name: "fuzz-http", fuzzOne) }
}
