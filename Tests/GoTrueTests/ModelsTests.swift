import AuthJSON
import Testing
@testable import GoTrue

@Suite struct ModelsTests {
    /// Identity data is parsed without the metadata cache; both paths give the same object
    /// (keys sorted at every depth, `{}` for a corrupt or non-object text).
    @Test func uncachedParseMatchesTheCachedOne() {
        let texts = [
            "{}", "", "not json", "[1,2]", #"{"sub":"1","email":"a@example.com","email_verified":true}"#,
            #"{"z":{"b":1,"a":[{"d":1,"c":2}]},"a":null}"#, #"{"dup":1,"dup":2}"#,
        ]
        for text in texts {
            #expect(Models.sortedObjectOnce(text) == Models.sortedObject(text), "\(text)")
        }
        #expect(Models.sortedObjectOnce(#"{"b":1,"a":2}"#).keys == ["a", "b"])
    }
}
