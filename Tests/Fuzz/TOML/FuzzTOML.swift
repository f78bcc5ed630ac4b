import AuthTOML
import FuzzSupport

// Fuzz target for the TOML reader that loads `supabase/config.toml`. There is no TOML writer
// to round-trip through, so the properties are: no crash, trap or sanitizer report on any
// input (run on a 512 KiB stack, so nesting past the reader's limit crashes as on a worker);
// parsing is deterministic; the text entry point agrees with the byte one on valid UTF-8.

/// `==`, except that a document holding `nan` is (correctly) never equal to itself; such
/// documents only have to agree on succeeding.
func same(_ a: Result<TOMLTable, TOMLError>, _ b: Result<TOMLTable, TOMLError>) -> Bool {
    if a == b { return true }
    guard case .success = a, case .success = b else { return false }
    return String(reflecting: a).contains(".float(nan)")
}

func fuzzOne(_ input: [UInt8]) {
    let first = Result { () throws(TOMLError) in try TOML.parse(input) }
    let second = Result { () throws(TOMLError) in try TOML.parse(input) }
    fuzzCheck(same(first, second), "two parses of the same bytes differ: \(fuzzExcerpt(input))")
    if let text = String(validating: input, as: UTF8.self) {
        let fromText = Result { () throws(TOMLError) in try TOML.parse(text) }
        fuzzCheck(same(fromText, first), "text and bytes parse differently: \(fuzzExcerpt(input))")
    } else {
        fuzzCheck((try? first.get()) == nil, "invalid UTF-8 accepted: \(fuzzExcerpt(input))")
    }
}

@main
enum Main {
    // A worker's 512 KiB stack: a `config_toml` sent to the control API is read on one.
    static func main() { FuzzTarget.main(name: "fuzz-toml", stackSize: 512 * 1024, fuzzOne) }
}
