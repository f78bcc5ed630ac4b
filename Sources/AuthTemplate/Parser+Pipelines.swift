import GoFormats

extension Parser {
    // MARK: Pipelines

    mutating func pipeline(_ context: String, end: ItemType) throws(Failure) -> PipeNode {
        let start = peekNonSpace()
        var pipe = PipeNode(pos: start.pos, line: start.line)
        // A leading `$x :=`, `$x =` or `$i, $v :=`.
        decls: while true {
            let v = peekNonSpace()
            guard v.type == .variable else { break decls }
            _ = next()
            // The space after "$x" is kept, in case the next token is not ":=" or "=": then "$x"
            // and the space go back, so that "$x 1" is an error (a variable is not a command).
            let tokenAfterVariable = peek()
            let nextItem = peekNonSpace()
            if nextItem.type == .assign || nextItem.type == .declare {
                pipe.isAssign = nextItem.type == .assign
                _ = nextNonSpace()
                pipe.decl.append(VariableNode(pos: v.pos, ident: v.val.split(separator: ".", omittingEmptySubsequences: false).map(String.init)))
                vars.append(v.val)
            } else if nextItem.type == .char && nextItem.val == "," {
                _ = nextNonSpace()
                pipe.decl.append(VariableNode(pos: v.pos, ident: v.val.split(separator: ".", omittingEmptySubsequences: false).map(String.init)))
                vars.append(v.val)
                if context == "range" && pipe.decl.count < 2 {
                    switch peekNonSpace().type {
                    case .variable, .rightDelim, .rightParen:
                        // The value variable of `range $i, $v :=`.
                        continue decls
                    default:
                        throw failure("range can only initialize variables")
                    }
                }
                throw failure("too many declarations in \(context)")
            } else if tokenAfterVariable.type == .space {
                backup3(v, tokenAfterVariable)
            } else {
                backup2(v)
            }
            break decls
        }
        while true {
            let item = nextNonSpace()
            switch item.type {
            case end:
                try checkPipeline(pipe, context)
                return pipe
            case .bool, .charConstant, .complex, .dot, .field, .identifier, .number, .nilKeyword, .rawString, .string,
                .variable, .leftParen:
                backup()
                pipe.cmds.append(try command())
            default:
                throw unexpected(item, context)
            }
        }
    }

    private func checkPipeline(_ pipe: PipeNode, _ context: String) throws(Failure) {
        // A pipeline needs a command.
        if pipe.cmds.isEmpty { throw failure("missing value for \(context)") }
        // A constant or dot cannot take the previous command's value.
        for (i, c) in pipe.cmds.dropFirst().enumerated() {
            switch c.args[0] {
            case .bool, .dot, .nilValue, .number, .string:
                throw failure("non executable command in pipeline stage \(i + 2)")
            default:
                break
            }
        }
    }

    private mutating func command() throws(Failure) -> CommandNode {
        var cmd = CommandNode(pos: peekNonSpace().pos, args: [])
        while true {
            _ = peekNonSpace()
            if let operand = try operand() { cmd.args.append(operand) }
            let item = next()
            switch item.type {
            case .space:
                continue
            case .rightDelim, .rightParen:
                backup()
            case .pipe:
                break
            default:
                throw unexpected(item, "operand")
            }
            break
        }
        if cmd.args.isEmpty { throw failure("empty command") }
        return cmd
    }

    private mutating func operand() throws(Failure) -> Arg? {
        guard let node = try term() else { return nil }
        if peek().type == .field {
            let chainPos = peek().pos
            var fields: [String] = []
            while peek().type == .field {
                fields.append(String(next().val.dropFirst()))
            }
            // Fields after a field or a variable join it ($x.A.B); after anything else they
            // make a chain node ((pipeline).A.B).
            switch node {
            case .field(_, let ident):
                return .field(pos: chainPos, ident: ident + fields)
            case .variable(let v):
                return .variable(VariableNode(pos: chainPos, ident: v.ident + fields))
            case .bool, .string, .number, .nilValue, .dot:
                throw failure("unexpected . after term \(GoStrconv.quote(node.description))")
            default:
                return .chain(pos: chainPos, node: node, fields: fields)
            }
        }
        return node
    }

    private mutating func term() throws(Failure) -> Arg? {
        let item = nextNonSpace()
        switch item.type {
        case .identifier:
            if !Parser.builtinNames.contains(item.val) {
                throw failure("function \(GoStrconv.quote(item.val)) not defined")
            }
            return .identifier(pos: item.pos, name: item.val)
        case .dot:
            return .dot(pos: item.pos)
        case .nilKeyword:
            return .nilValue(pos: item.pos)
        case .variable:
            return .variable(try useVar(item))
        case .field:
            return .field(pos: item.pos, ident: item.val.dropFirst().split(separator: ".", omittingEmptySubsequences: false).map(String.init))
        case .bool:
            return .bool(pos: item.pos, value: item.val == "true")
        case .charConstant, .complex, .number:
            switch NumberParser.parse(item.val, type: item.type, pos: item.pos) {
            case .success(let n): return .number(n)
            case .failure(let error): throw failure(error.message)
            }
        case .leftParen:
            try enterNesting(2, parenthesized: true)
            defer { nestingDepth -= 2 }
            return .pipe(try pipeline("parenthesized pipeline", end: .rightParen))
        case .string, .rawString:
            do {
                return .string(pos: item.pos, quoted: item.val, text: try GoUnquote.unquote(item.val))
            } catch {
                throw failure("invalid syntax")
            }
        default:
            backup()
            return nil
        }
    }

    private func useVar(_ item: Item) throws(Failure) -> VariableNode {
        let ident = item.val.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if vars.contains(ident[0]) { return VariableNode(pos: item.pos, ident: ident) }
        throw failure("undefined variable \(GoStrconv.quote(ident[0]))")
    }
}
