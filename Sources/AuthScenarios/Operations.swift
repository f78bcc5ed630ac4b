import GoTrue

/// The operation names scenarios match on: those of GoTrue's route table
/// (`GoTrueAPI.operationNames`), so a rule can never name an operation no route has. Names in
/// scenario files are checked against it: a misspelt name is an error rather than a rule that
/// never fires.
public enum Operations {
    public static var names: [String] { GoTrueAPI.operationNames }

    /// Whether `pattern` (a name or a glob) names at least one known operation.
    public static func matchesAny(_ pattern: String) -> Bool {
        names.contains { Glob.matches(pattern, $0, separator: nil) }
    }
}

/// Shell-style globs: `*` any run of characters (not crossing `separator` when one is given),
/// `**` any run at all, `?` one character.
enum Glob {
    static func matches(_ pattern: String, _ text: String, separator: Character?) -> Bool {
        let p = Array(pattern), t = Array(text)
        // Iterative matcher with backtracking to the last star (linear in practice).
        func match(_ pi: Int, _ ti: Int) -> Bool {
            var pi = pi, ti = ti
            while pi < p.count {
                if p[pi] == "*" {
                    let crosses = pi + 1 < p.count && p[pi + 1] == "*"
                    let next = pi + (crosses ? 2 : 1)
                    var end = ti
                    while true {
                        if match(next, end) { return true }
                        if end >= t.count { return false }
                        if !crosses, let separator, t[end] == separator { return false }
                        end += 1
                    }
                }
                guard ti < t.count else { return false }
                if p[pi] != "?" && p[pi] != t[ti] { return false }
                if p[pi] == "?", let separator, t[ti] == separator { return false }
                pi += 1
                ti += 1
            }
            return ti == t.count
        }
        return match(0, 0)
    }
}
