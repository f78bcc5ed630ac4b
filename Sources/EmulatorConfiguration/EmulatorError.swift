/// A failure to configure or start the emulator, with a message meant for the person running it.
public struct EmulatorError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
