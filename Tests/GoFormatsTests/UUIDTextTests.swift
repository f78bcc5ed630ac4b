@testable import GoFormats
import Testing

@Suite struct UUIDTextTests {
    @Test func recognisesTheHyphenatedForm() {
        #expect(UUIDText.isValid("00000000-0000-0000-0000-000000000000"))
        #expect(UUIDText.isValid("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"))
        #expect(UUIDText.isValid("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"))
        #expect(!UUIDText.isValid("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", lowercaseOnly: true))
        #expect(UUIDText.isValid("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", lowercaseOnly: true))
        for bad in [
            "", "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f00",
            "0f1e2d3c_4b5a-6978-8796-a5b4c3d2e1f0", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f/", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f:",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f@", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f`",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fG", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1é",
        ] {
            #expect(!UUIDText.isValid(bad), "\(bad)")
        }
    }

    @Test func lowercasesOnlyUUIDs() {
        let lower = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        #expect(UUIDText.lowercased(lower) == lower)
        #expect(UUIDText.lowercased("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0") == lower)
        #expect(UUIDText.lowercased("0f1E2d3c-4b5a-6978-8796-a5b4c3d2e1f0") == lower)
        #expect(UUIDText.lowercased("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1FG") == nil)
        #expect(UUIDText.lowercased("0F1E2D3C4B5A69788796A5B4C3D2E1F0") == nil)
        #expect(UUIDText.lowercased("") == nil)
    }

    @Test func formatsSixteenBytes() {
        let bytes: [UInt8] = Array(0..<16).map { UInt8($0 * 17) }
        #expect(UUIDText.format(bytes) == "00112233-4455-6677-8899-aabbccddeeff")
        // Version 4 and the RFC 9562 variant are set without touching the other bits.
        #expect(UUIDText.format(bytes, versionFour: true) == "00112233-4455-4677-8899-aabbccddeeff")
        #expect(UUIDText.format([UInt8](repeating: 0xff, count: 16), versionFour: true) == "ffffffff-ffff-4fff-bfff-ffffffffffff")
        #expect(UUIDText.format([UInt8](repeating: 0, count: 20)[2..<18], versionFour: true) == "00000000-0000-4000-8000-000000000000")
        #expect(UUIDText.isValid(UUIDText.format(bytes), lowercaseOnly: true))
    }
}
