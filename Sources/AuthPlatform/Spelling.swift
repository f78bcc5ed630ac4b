/// "Did you mean ...?" for names people type: command-line flags and subcommands, scenario
/// operation names. A misspelt name is far more often a slip (a swapped, missing or doubled
/// letter) than a different word, so the nearest known name by edit distance is usually the one
/// meant.
public enum Spelling {
    /// Levenshtein distance (insertions, deletions, substitutions) with adjacent swaps counting
    /// as one edit (optimal string alignment), since `sigunp` is one slip, not two. Compared by
    /// Unicode scalar; case matters (`--Port` is one edit from `--port`).
    public static func distance(_ a: String, _ b: String) -> Int {
        let s = Array(a.unicodeScalars), t = Array(b.unicodeScalars)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        // Three rows suffice: the swap looks two rows back.
        var before = [Int](repeating: 0, count: t.count + 1)
        var previous = Array(0...t.count)
        var current = [Int](repeating: 0, count: t.count + 1)
        for i in 1...s.count {
            current[0] = i
            for j in 1...t.count {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                var best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    best = min(best, before[j - 2] + 1)
                }
                current[j] = best
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[t.count]
    }

    /// The known name closest to `name`, when close enough to be a slip: at most a third of the
    /// name's length in edits (at least one, at most three), so `--prot` finds `--port` but
    /// `--frobnicate` finds nothing. Ties go to the earlier candidate. A candidate that starts
    /// with the whole name (`--shutdown` for `--shutdown-timeout`) is offered too, as the user
    /// typed the beginning of it.
    public static func suggestion(for name: String, among candidates: some Sequence<String>) -> String? {
        guard !name.isEmpty else { return nil }
        let limit = min(3, max(1, name.unicodeScalars.count / 3))
        var best: (name: String, distance: Int)?
        var prefixed: String?
        for candidate in candidates where candidate != name {
            let d = distance(name, candidate)
            if d <= limit, d < best?.distance ?? Int.max { best = (candidate, d) }
            if prefixed == nil, name.unicodeScalars.count >= 3, candidate.hasPrefix(name) { prefixed = candidate }
        }
        return best?.name ?? prefixed
    }

    /// `" (did you mean 'X'?)"`, or nothing: appended to an "unknown ..." message.
    public static func hint(for name: String, among candidates: some Sequence<String>, quote: String = "'") -> String {
        guard let match = suggestion(for: name, among: candidates) else { return "" }
        return " (did you mean \(quote)\(match)\(quote)?)"
    }
}
