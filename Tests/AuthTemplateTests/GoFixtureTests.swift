import AuthJSON
import AuthTemplate
import Foundation
import Testing

/// Known answers from Go: Tests/Fixtures/gotemplate/cases.json holds what Go's html/template
/// and text/template produced for each template and data set of the corpus in generate.go
/// beside it: the output, or the error and whether Parse or Execute returned it. The target is
/// Go 1.26, which GoTrue is built with; the file names the toolchain that ran, and a case marked
/// "derived" holds Go 1.26's answer where that toolchain's packages answer otherwise.
@Suite struct GoFixtureTests {
    struct Case: CustomStringConvertible, Sendable {
        let name: String
        let template: String
        let data: JSON
        let escaping: GoTemplate.Escaping
        let output: String?
        let error: String?
        let phase: String?

        var description: String { name }
    }

    static let fixturePath: String = {
        var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(2)
        return components.joined(separator: "/") + "/Fixtures/gotemplate/cases.json"
    }()

    static let cases: [Case] = {
        guard let data = FileManager.default.contents(atPath: fixturePath),
            let document = try? JSON(parsing: [UInt8](data)), case .array(let items)? = document["cases"]
        else {
            return []
        }
        return items.map { item in
            Case(
                name: item["name"]?.stringValue ?? "?",
                template: item["template"]?.stringValue ?? "",
                data: item["data"] ?? .null,
                escaping: item["escaping"]?.stringValue == "text" ? .text : .html,
                output: item["output"]?.stringValue,
                error: item["error"]?.stringValue,
                phase: item["phase"]?.stringValue)
        }
    }()

    @Test func theFixtureIsThere() {
        #expect(GoFixtureTests.cases.count >= 150, "\(GoFixtureTests.fixturePath)")
    }

    @Test(arguments: GoFixtureTests.cases)
    func rendersAsGo(_ c: Case) {
        let template: GoTemplate
        do {
            template = try GoTemplate(parsing: c.template, name: "email", escaping: c.escaping)
        } catch {
            #expect(c.phase == "parse", "parse failed: \(error.description)")
            #expect(error.description == c.error)
            return
        }
        #expect(c.phase != "parse", "Go's Parse failed: \(c.error ?? "")")
        do {
            let output = try template.execute(c.data)
            #expect(c.error == nil, "Go failed: \(c.error ?? "")")
            #expect(output == c.output)
        } catch {
            #expect(c.phase == "execute", "execute failed: \(error.description)")
            #expect(error.description == c.error)
        }
    }
}
