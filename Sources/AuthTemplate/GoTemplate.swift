import AuthJSON

/// A template in the language of Go's text/template, executed with html/template's contextual
/// escaping or without it, giving the bytes Go gives for the same template and data.
///
/// GoTrue renders its email subjects and bodies with `html/template`
/// (`template.New(name).Parse(text)`, then `Execute(w, data)` with a `map[string]interface{}`),
/// so the default is `.html`. Data are JSON values read as Go reads them after
/// `json.Unmarshal` into `interface{}`: objects are `map[string]interface{}`, numbers
/// `float64`, `null` a nil interface. (GoTrue's `Data` is the user's metadata as a map: pass
/// `{}` for metadata that is null, which behaves as GoTrue's nil map does.)
///
/// As in Go, parse errors are thrown by `init`; escaping errors (html/template reports them at
/// the first `Execute`) and execution errors by `execute`.
public struct GoTemplate: Sendable {
    public enum Escaping: Sendable { case html, text }

    let name: String
    let source: [UInt8]
    let root: [Node]
    let escaping: Escaping
    /// html/template's escaping failure, found while parsing and reported by every `execute`,
    /// as Go reports it from every `Execute`.
    let escapeError: TemplateError?

    /// Parses `text`; `name` is used in error messages (e.g. a file path).
    public init(parsing text: String, name: String, escaping: Escaping = .html) throws(TemplateError) {
        self.name = name
        self.source = Array(text.utf8)
        self.escaping = escaping
        let parsed = try Parser.parse(source, name: name)
        switch escaping {
        case .text:
            root = parsed
            escapeError = nil
        case .html:
            let location = SourceLocation(name: name, source: source)
            switch Escaper.escape(parsed, location: location) {
            case .success(let escaped):
                root = escaped
                escapeError = nil
            case .failure(let error):
                root = []
                escapeError = error
            }
        }
    }

    /// Executes with `data` as dot. Errors are Go's execution errors (e.g. calling a missing
    /// function, index out of range).
    public func execute(_ data: JSON) throws(TemplateError) -> String {
        if let escapeError { throw escapeError }
        var state = ExecState(location: SourceLocation(name: name, source: source), dot: Value(rootData: data))
        do {
            _ = try state.walkList(state.vars[0].value, root)
        } catch {
            throw error.templateError
        }
        return String(decoding: state.out, as: UTF8.self)
    }
}

/// A parse, escaping or execution error, worded and located as Go's.
public struct TemplateError: Error, Sendable, CustomStringConvertible {
    public let name: String
    public let line: Int
    public let message: String

    enum Origin: Sendable {
        /// text/template/parse: `template: NAME:LINE: MESSAGE`.
        case parse
        /// text/template's ExecError: `template: NAME:LINE:COLUMN: MESSAGE`, where MESSAGE
        /// starts `executing "NAME" at <NODE>:`.
        case execute(column: Int?)
        /// html/template's Error: `html/template:NAME:LINE:COLUMN: ...`, or without the column
        /// (or the line) where Go's error has no node (or no line).
        case escape(column: Int?)
    }

    let origin: Origin

    init(name: String, line: Int, message: String, origin: Origin) {
        self.name = name
        self.line = line
        self.message = message
        self.origin = origin
    }

    public var description: String {
        switch origin {
        case .parse:
            return "template: \(name):\(line): \(message)"
        case .execute(let column):
            guard let column else { return "template: \(name): \(message)" }
            return "template: \(name):\(line):\(column): \(message)"
        case .escape(let column):
            if let column { return "html/template:\(name):\(line):\(column): \(message)" }
            if line != 0 { return "html/template:\(name):\(line): \(message)" }
            return "html/template:\(name): \(message)"
        }
    }
}

/// The template's name and text, for turning a node's byte offset into Go's `NAME:LINE:COL`
/// (parse.Tree.ErrorContext: the column is the byte offset within the line, counted from 0).
struct SourceLocation: Sendable {
    let name: String
    let source: [UInt8]

    func lineAndColumn(_ pos: Int) -> (line: Int, column: Int) {
        let end = min(max(pos, 0), source.count)
        var line = 1
        var lastNewline = -1
        for i in 0..<end where source[i] == UInt8(ascii: "\n") {
            line += 1
            lastNewline = i
        }
        let column = lastNewline == -1 ? end : end - (lastNewline + 1)
        return (line, column)
    }
}
