import AuthJSON
import FuzzSupport

// Fuzz target for AuthJSON: the strict parser (`JSON(parsing:)`, JWT segments and stored
// values) and Go's decoding rules (`JSON.goDecode`, the path every request body takes).
//
// Properties:
// - whatever parses serializes to text that parses back to an equal value, and serializing
//   that again gives the same bytes (the writer's output is a fixed point);
// - the strict parser accepts a subset of what goDecode accepts (goDecode only relaxes the
//   nesting limit and number overflow), and on that subset both build the same value while
//   the nesting stays under the materialized depth.

/// How deeply containers nest: a scalar is 0, `[]` is 1.
func depth(_ value: JSON) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
    case .object(let object): 1 + (object.values.map(depth).max() ?? 0)
    default: 0
    }
}

/// goDecode keeps numbers too large for a float64 as ±infinity, which the writer renders as
/// `null` (as Go's would refuse to): such values cannot round-trip and are skipped.
func allFinite(_ value: JSON) -> Bool {
    switch value {
    case .number(let number): number.isFinite
    case .array(let elements): elements.allSatisfy(allFinite)
    case .object(let object): object.values.allSatisfy(allFinite)
    default: true
    }
}

func checkRoundTrip(_ value: JSON, _ input: [UInt8], reparse: ([UInt8]) -> JSON?) {
    for sorted in [false, true] {
        let text = value.serializedBytes(sortedKeys: sorted)
        guard let again = reparse(text) else {
            fuzzCheck(false, "serialized value does not parse: \(fuzzExcerpt(text)) from \(fuzzExcerpt(input))")
            return
        }
        fuzzCheck(again == value, "round trip changed the value: \(fuzzExcerpt(text)) from \(fuzzExcerpt(input))")
        fuzzCheck(again.serializedBytes(sortedKeys: sorted) == text,
                  "serialization is not a fixed point: \(fuzzExcerpt(text)) from \(fuzzExcerpt(input))")
    }
}

func fuzzOne(_ input: [UInt8]) {
    let strict = try? JSON(parsing: input)
    let go = try? JSON.goDecode(input)

    if let strict {
        checkRoundTrip(strict, input) { try? JSON(parsing: $0) }
        guard let go else {
            fuzzCheck(false, "strict parser accepts what goDecode refuses: \(fuzzExcerpt(input))")
            return
        }
        if depth(strict) < JSON.requestBodyMaterializedDepth {
            fuzzCheck(go.value == strict, "goDecode and the strict parser disagree on \(fuzzExcerpt(input))")
            fuzzCheck(go.truncatedKeys.isEmpty && go.overflowingNumbers.isEmpty,
                      "goDecode reports truncation or overflow for \(fuzzExcerpt(input))")
        }
    }
    if let go, allFinite(go.value) {
        checkRoundTrip(go.value, input) { try? JSON.goDecode($0).value }
    }
}

@main
enum Main {
    static func main() { FuzzTarget.main(name: "fuzz-json", fuzzOne) }
}
